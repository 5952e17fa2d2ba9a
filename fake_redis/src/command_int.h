/* command_int.h -- what command.c (COMMAND, key extraction from the metadata) and acl.c
 * (ACL, AUTH, the permission checks) share with the rest of the fake. */
#ifndef FR_COMMAND_INT_H
#define FR_COMMAND_INT_H

#include "cmd_meta.h"
#include "fr_int.h"

/* A key found in a command's arguments: its position and its key spec flags (FRI_KS_*). */
typedef struct fri_keyref {
    int pos;
    unsigned flags;
} fri_keyref;

/* The metadata row named p[0..n) ("get", "client|list"), case-insensitive, or NULL. */
const fri_cmd_meta *fri_meta_find(const char *p, size_t n);
/* The subcommand `base|name` (name case-insensitive, as fri_meta_find), NULL when base has
 * no such subcommand. */
const fri_cmd_meta *fri_meta_find_sub(const fri_cmd_meta *base, const fri_arg *name);
/* Marks the row of one of the fake's own commands (server.c, once per process). */
void fri_meta_mark_builtin(const char *name);
/* Whether server s has the command (or, for a container, one of its subcommands). */
int fri_meta_present(const fr_server *s, const fri_cmd_meta *m);
/* Redis's lookupCommand over s's commands: argv[0], or the subcommand argv[1] of a
 * container; NULL when absent. */
const fri_cmd_meta *fri_meta_lookup(const fr_server *s, int argc, const fri_arg *argv);
/* Whether the command takes keys (Redis's doesCommandHaveKeys). */
int fri_meta_has_keys(const fri_cmd_meta *m);
/* The keys of argv (argv[0] the command's name) as Redis's getKeysFromCommandWithSpecs
 * finds them: at most cap into keys; returns how many (0: none). */
int fri_meta_getkeys(const fri_cmd_meta *m, int argc, const fri_arg *argv, fri_keyref *keys,
                     int cap);
/* The embedder's extensions (fr_server_declare_extension): how many, and the i-th one's
 * full lower-case name ("fake.dump", "fake.time|get"). */
size_t fri_ext_count(const fr_server *s);
const char *fri_ext_name(const fr_server *s, size_t i);
/* The full name of the extension argv names (argv[0], or the subcommand argv[1] of an
 * extension container), NULL when it names none. */
const char *fri_ext_lookup_argv(const fr_server *s, int argc, const fri_arg *argv);
/* Frees the embedder's declarations (fr_server_free). */
void fri_command_meta_free(fr_server *s);

/* Replies in the client's protocol (fr_client_set_protocol): a map or set header, a
 * null, a set of key spec flag names. */
void fri_reply_map_len_proto(fr_client *c, long n);
void fri_reply_set_len_proto(fr_client *c, long n);
void fri_reply_null_proto(fr_client *c);
void fri_reply_key_flags(fr_client *c, unsigned flags);

/* The FRI_ACL_* bit of a category name (case-insensitive), 0 if none. */
uint32_t fri_acl_category_bit(const char *p, size_t n);
/* The ACL check processCommand makes before a command runs (ACLCheckAllPerm): 0 when
 * c's user may run cmd with its arguments; else the NOPERM error is written, the ACL log
 * has the entry, and -1 is returned. */
int fri_acl_check(fr_client *c, const fri_command *cmd);
/* processCommand's authRequired check: 0, or NOAUTH is written and -1 returned (a client
 * made while the default user had a password has not authenticated). */
int fri_acl_noauth(fr_client *c, const fri_command *cmd);
/* scriptVerifyACL: NULL when the script's caller may run cmd with lc's arguments; else
 * the error (logged in the ACL log, context "lua"). */
const char *fri_acl_script_check(fr_client *caller, fr_client *lc, const fri_command *cmd);
/* redis.acl_check_cmd: 1 when caller's user may run argv, 0 when not, -1 when argv names
 * no Redis command. */
int fri_acl_user_may(fr_client *caller, int argc, const fri_arg *argv);
/* EXEC's second look at a queued command (execCommand): 0 when still allowed; else the
 * NOPERM error is written, logged, and -1 is returned. */
int fri_acl_exec_check(fr_client *c, const fri_command *cmd, int argc, const fri_arg *argv);
/* Frees the users and the log (fr_server_free). */
void fri_acl_free(fr_server *s);

#endif
