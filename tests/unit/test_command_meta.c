/* test_command_meta.c -- COMMAND's metadata (cmd_meta_table.c, command.c) and the ACLs
 * (acl.c) on the in-process fake.
 *
 * - key extraction from key specs and Redis's getkeys functions (db.c's
 *   getKeysFromCommandWithSpecs), also for commands the fake does not implement (the
 *   ACL checks use it for every Redis command): positions and flags as Redis 7.0.15's
 *   COMMAND GETKEYSANDFLAGS gives them;
 * - the table and the fake's command rows agree (every row has metadata, same arity);
 * - COMMAND, COUNT, LIST and INFO count what the server implements, plus what the
 *   embedder declares; FAKE-style extensions answer INFO/DOCS and stay out of COUNT;
 * - RESP3 maps and sets after fr_client_set_protocol(3);
 * - ACL LOG entries' fields (the diff scripts can only count them), GENPASS from the
 *   seed, AUTH through the API.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "command_int.h"
#include "fake_fixture.h"

#define TEST(fn) FAKE_TEST(fn)
#define RUN(c, ...) fake_run((c), __VA_ARGS__)

/* The keys of a command line: "pos:flags pos:flags" with flags as FRI_KS_* hex. */
static const char *keys_of(const char *line)
{
    static char out[512];
    char **argv;
    size_t *lens;
    int argc = fr_split_line(line, &argv, &lens);
    assert_true(argc > 0);
    fri_arg av[64];
    for (int i = 0; i < argc; i++) av[i] = (fri_arg){argv[i], lens[i]};
    const fri_cmd_meta *m = fri_meta_find(argv[0], lens[0]);
    if (m && m->nsubs && argc > 1) {
        char full[64];
        snprintf(full, sizeof(full), "%s|%s", m->name, argv[1]);
        m = fri_meta_find(full, strlen(full));
    }
    assert_non_null(m);
    fri_keyref keys[64];
    int n = fri_meta_getkeys(m, argc, av, keys, 64);
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(out + len, sizeof(out) - len, "%s%d:%x", i ? " " : "",
                                keys[i].pos, keys[i].flags);
    fr_split_free(argc, argv, lens);
    return out;
}

#define RO_ACCESS (FRI_KS_RO | FRI_KS_ACCESS)

static void key_specs(void **state)
{
    (void)state;
    char want[256];
    /* index + range */
    snprintf(want, sizeof(want), "1:%x", RO_ACCESS);
    assert_string_equal(keys_of("get k"), want);
    snprintf(want, sizeof(want), "1:%x 2:%x 3:%x", FRI_KS_RM | FRI_KS_DELETE,
             FRI_KS_RM | FRI_KS_DELETE, FRI_KS_RM | FRI_KS_DELETE);
    assert_string_equal(keys_of("del a b c"), want);
    /* range with a step: MSET's keys every second argument */
    snprintf(want, sizeof(want), "1:%x 3:%x", FRI_KS_OW | FRI_KS_UPDATE,
             FRI_KS_OW | FRI_KS_UPDATE);
    assert_string_equal(keys_of("mset a 1 b 2"), want);
    /* range up to the last-but-one (BLPOP's timeout) */
    snprintf(want, sizeof(want), "1:%x 2:%x", FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_DELETE,
             FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_DELETE);
    assert_string_equal(keys_of("blpop a b 0"), want);
    /* keynum: ZUNIONSTORE's destination then numkeys sources */
    snprintf(want, sizeof(want), "1:%x 3:%x 4:%x", FRI_KS_OW | FRI_KS_UPDATE, RO_ACCESS,
             RO_ACCESS);
    assert_string_equal(keys_of("zunionstore d 2 a b weights 1 2"), want);
    /* keynum that says 0 keys, or more than there are: none (EVAL's spec fails, its
     * getkeys function finds nothing either) */
    assert_string_equal(keys_of("eval s 0"), "");
    assert_string_equal(keys_of("eval s 5 a"), "");
    snprintf(want, sizeof(want), "3:%x 4:%x", FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_UPDATE,
             FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_UPDATE);
    assert_string_equal(keys_of("eval s 2 a b c"), want);
    /* keyword search from the end: GEORADIUS's STORE (not implemented by the fake: the
     * ACLs still need its keys); the getkeys function is not needed, the specs say it */
    snprintf(want, sizeof(want), "1:%x 7:%x", RO_ACCESS, FRI_KS_OW | FRI_KS_UPDATE);
    assert_string_equal(keys_of("georadius g 0 0 1 km store d"), want);
    /* variable flags: SET's GET makes its key read too (setGetKeys) */
    snprintf(want, sizeof(want), "1:%x", FRI_KS_OW | FRI_KS_UPDATE);
    assert_string_equal(keys_of("set k v"), want);
    snprintf(want, sizeof(want), "1:%x", FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_UPDATE);
    assert_string_equal(keys_of("set k v ex 1 GET"), want);
    /* BITFIELD: read-only with GET alone */
    snprintf(want, sizeof(want), "1:%x", RO_ACCESS);
    assert_string_equal(keys_of("bitfield k get u8 0"), want);
    /* incomplete specs fall back to the function: SORT's STORE (the last one), MIGRATE */
    snprintf(want, sizeof(want), "1:%x 5:%x", RO_ACCESS, FRI_KS_OW | FRI_KS_UPDATE);
    assert_string_equal(keys_of("sort a store x store d"), want);
    snprintf(want, sizeof(want), "7:%x 8:%x", FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_DELETE,
             FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_DELETE);
    assert_string_equal(keys_of("migrate h 1 \"\" 0 5 keys a b"), want);
    snprintf(want, sizeof(want), "3:%x", FRI_KS_RW | FRI_KS_ACCESS | FRI_KS_DELETE);
    assert_string_equal(keys_of("migrate h 1 k 0 5"), want);
    /* XREAD's STREAMS: half of what follows */
    snprintf(want, sizeof(want), "4:%x 5:%x", RO_ACCESS, RO_ACCESS);
    assert_string_equal(keys_of("xread count 1 streams a b 0 0"), want);
    /* an odd count: the spec's limit halves what follows (Redis answers "a") */
    snprintf(want, sizeof(want), "2:%x", RO_ACCESS);
    assert_string_equal(keys_of("xread streams a b 0"), want);
    /* a subcommand's keys */
    snprintf(want, sizeof(want), "2:%x", FRI_KS_RO);
    assert_string_equal(keys_of("object encoding k"), want);
}

/* Every row of the fake's table is one of Redis's commands, with Redis's arity. */
static void rows_match_metadata(void **state)
{
    (void)state;
    for (size_t i = 0; i < fr_command_count(); i++) {
        const fr_command_info *ci = fr_command_at(i);
        const fri_cmd_meta *m = fri_meta_find(ci->name, strlen(ci->name));
        if (!m) fail_msg("%s: not in cmd_meta_table.c", ci->name);
        if (m->arity != ci->arity)
            fail_msg("%s: arity %d, Redis's %d", ci->name, ci->arity, m->arity);
    }
}

/* COMMAND, COUNT, LIST and INFO all count the commands present; the embedder's
 * declarations add to them, its extensions do not. */
static void count_follows_the_table(void **state)
{
    fake_fixture *f = *state;
    long long count = fake_int_reply(RUN(f->c, "COMMAND COUNT"));
    /* the fake's top-level names, containers counted once */
    long long distinct = 0;
    for (size_t i = 0; i < fr_command_count(); i++) {
        const char *n = fr_command_at(i)->name;
        size_t l = strcspn(n, "|");
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++) {
            const char *o = fr_command_at(j)->name;
            seen = strcspn(o, "|") == l && strncmp(o, n, l) == 0;
        }
        if (!seen) distinct++;
    }
    assert_int_equal(count, distinct);
    assert_int_equal(RUN(f->c, "COMMAND")->count, (size_t)count);
    assert_int_equal(RUN(f->c, "COMMAND INFO")->count, (size_t)count);
    const fr_reply *list = RUN(f->c, "COMMAND LIST");
    size_t tops = 0;
    for (size_t i = 0; i < list->count; i++) tops += strchr(list->elements[i].str, '|') == NULL;
    assert_int_equal(tops, (size_t)count);
    assert_true(count < (long long)fri_cmd_meta_toplevel);

    /* HELLO is fakeredis-server's: declared, it is counted and described */
    assert_int_equal(RUN(f->c, "COMMAND INFO hello")->elements[0].type, FR_REPLY_NIL);
    assert_int_equal(fr_server_declare_command(f->srv, "hello"), 0);
    assert_int_equal(fr_server_declare_command(f->srv, "nosuch"), -1);
    assert_int_equal(fake_int_reply(RUN(f->c, "COMMAND COUNT")), count + 1);
    assert_string_equal(RUN(f->c, "COMMAND INFO hello")->elements[0].elements[0].str, "hello");
    /* a subcommand brings its container */
    assert_int_equal(fr_server_declare_command(f->srv, "client|id"), 0);
    assert_int_equal(fake_int_reply(RUN(f->c, "COMMAND COUNT")), count + 2);
    const fr_reply *client = RUN(f->c, "COMMAND INFO client");
    assert_int_equal(client->elements[0].elements[9].count, 1); /* one subcommand */

    /* an extension: described when named, never counted or listed */
    assert_int_equal(fr_server_declare_extension(f->srv, "fake.x", -2, "Does x."), 0);
    assert_int_equal(fr_server_declare_extension(f->srv, "fake.x|y", 2, "Does y."), 0);
    assert_int_equal(fr_server_declare_extension(f->srv, "get", 2, "no"), -1);
    assert_int_equal(fr_server_declare_extension(f->srv, "fake.x", 2, "twice"), -1);
    assert_int_equal(fake_int_reply(RUN(f->c, "COMMAND COUNT")), count + 2);
    const fr_reply *x = RUN(f->c, "COMMAND INFO fake.x");
    assert_string_equal(x->elements[0].elements[0].str, "fake.x");
    assert_int_equal(x->elements[0].elements[1].integer, -2);
    assert_int_equal(x->elements[0].elements[9].count, 1);
    const fr_reply *d = RUN(f->c, "COMMAND DOCS fake.x");
    assert_string_equal(d->elements[0].str, "fake.x");
    assert_string_equal(d->elements[1].elements[1].str, "Does x.");
    const fr_reply *l = RUN(f->c, "COMMAND LIST FILTERBY PATTERN fake*");
    assert_int_equal(l->count, 0);
    assert_string_equal(fake_resp(RUN(f->c, "COMMAND GETKEYS fake.x y")),
                        "-ERR Invalid command specified\r\n");
}

static void resp3_shapes(void **state)
{
    fake_fixture *f = *state;
    assert_int_equal(fr_client_set_protocol(f->c, 3), 0);
    const char *argv[] = {"COMMAND", "INFO", "get", "nosuch"};
    size_t n;
    const char *p = fr_exec_resp(f->c, 4, argv, NULL, &n);
    const char *want = "*2\r\n*10\r\n$3\r\nget\r\n:2\r\n~2\r\n+readonly\r\n+fast\r\n";
    assert_true(n > strlen(want) && memcmp(p, want, strlen(want)) == 0);
    assert_true(n > 5 && memcmp(p + n - 5, "_\r\n", 3) != 0 &&
                memcmp(p + n - 3, "_\r\n", 3) == 0); /* the unknown name: a RESP3 null */
    const char *argv2[] = {"COMMAND", "DOCS", "get"};
    p = fr_exec_resp(f->c, 3, argv2, NULL, &n);
    assert_true(n > 4 && memcmp(p, "%1\r\n$3\r\nget\r\n%", 14) == 0);
    const char *argv3[] = {"ACL", "GETUSER", "default"};
    p = fr_exec_resp(f->c, 3, argv3, NULL, &n);
    assert_true(n > 4 && memcmp(p, "%6\r\n$5\r\nflags\r\n~2\r\n", 19) == 0);
}

static void acl_log_fields(void **state)
{
    fake_fixture *f = *state;
    fake_ok_reply(RUN(f->c, "ACL SETUSER lim on >pw ~k* +get +acl|log"));
    fr_client *c2 = fr_client_new(f->srv);
    assert_int_equal(fr_client_auth(c2, "AUTH", 4, "lim", 3, "nope", 4), -1);
    assert_int_equal(fr_client_auth(c2, NULL, 0, "lim", 3, "pw", 2), 0);
    size_t ul;
    assert_memory_equal(fr_client_user(c2, &ul), "lim", 3);
    assert_int_equal(ul, 3);
    assert_string_equal(fake_resp(RUN(c2, "SET k v")),
                        "-NOPERM this user has no permissions to run the 'set' command\r\n");
    RUN(c2, "SET k v");
    assert_string_equal(fake_resp(RUN(c2, "GET other")),
                        "-NOPERM this user has no permissions to access one of the keys "
                        "used as arguments\r\n");
    const fr_reply *log = RUN(c2, "ACL LOG");
    assert_int_equal(log->count, 3);
    /* newest first: the key, then the command (twice, one entry), then the AUTH */
    const fr_reply *e = &log->elements[0];
    assert_int_equal(e->count, 14);
    assert_string_equal(e->elements[0].str, "count");
    assert_int_equal(e->elements[1].integer, 1);
    assert_string_equal(e->elements[3].str, "key");
    assert_string_equal(e->elements[5].str, "toplevel");
    assert_string_equal(e->elements[7].str, "other");
    assert_string_equal(e->elements[9].str, "lim");
    assert_string_equal(e->elements[10].str, "age-seconds");
    assert_non_null(strstr(e->elements[13].str, "user=lim"));
    e = &log->elements[1];
    assert_int_equal(e->elements[1].integer, 2);
    assert_string_equal(e->elements[3].str, "command");
    assert_string_equal(e->elements[7].str, "set");
    e = &log->elements[2];
    assert_string_equal(e->elements[3].str, "auth");
    assert_string_equal(e->elements[7].str, "AUTH");
    assert_string_equal(e->elements[9].str, "lim");
    /* MULTI context; entries older than a minute are not grouped */
    fr_clock_advance(f->srv, 61000);
    RUN(c2, "SET k v");
    assert_int_equal(RUN(c2, "ACL LOG")->count, 4);
    fr_client_free(c2);
}

static void genpass_follows_the_seed(void **state)
{
    (void)state;
    fr_config cfg = fr_config_default();
    char a[80], b[80], c[80];
    for (int i = 0; i < 3; i++) {
        cfg.seed = i == 2 ? 99 : 7;
        fake_fixture *f = fake_fixture_new(&cfg, 1);
        const fr_reply *r = RUN(f->c, "ACL GENPASS");
        assert_int_equal(r->len, 64);
        snprintf(i == 0 ? a : i == 1 ? b : c, 80, "%s", r->str);
        fake_fixture_free(f);
    }
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
}

static void requirepass_and_noauth(void **state)
{
    fake_fixture *f = *state;
    assert_int_equal(fr_server_auth_required(f->srv), 0);
    assert_int_equal(fr_server_set_requirepass(f->srv, "sekret", 6), 0);
    assert_int_equal(fr_server_auth_required(f->srv), 1);
    /* a client made before still runs; a new one must authenticate */
    fake_ok_reply(RUN(f->c, "SET a 1"));
    fr_client *c2 = fr_client_new(f->srv);
    assert_string_equal(fake_resp(RUN(c2, "GET a")), "-NOAUTH Authentication required.\r\n");
    assert_string_equal(fake_resp(RUN(c2, "AUTH nope")),
                        "-WRONGPASS invalid username-password pair or user is disabled.\r\n");
    fake_ok_reply(RUN(c2, "AUTH sekret"));
    assert_string_equal(fake_resp(RUN(c2, "GET a")), "$1\r\n1\r\n");
    fr_client_free(c2);
    /* binary safe: "ab\0cd" is not "ab" */
    assert_int_equal(fr_server_set_requirepass(f->srv, "ab\0cd", 5), 0);
    c2 = fr_client_new(f->srv);
    assert_int_equal(fr_client_auth(c2, NULL, 0, NULL, 0, "ab", 2), -1);
    assert_int_equal(fr_client_auth(c2, NULL, 0, NULL, 0, "ab\0cd", 5), 0);
    fr_client_free(c2);
    assert_int_equal(fr_server_set_requirepass(f->srv, NULL, 0), 0);
    assert_int_equal(fr_server_auth_required(f->srv), 0);
}

/* Clients closed by ACL changes: their user deleted, or channels they hold taken away. */
static void acl_changes_close_clients(void **state)
{
    fake_fixture *f = *state;
    fake_ok_reply(RUN(f->c, "ACL SETUSER sub on nopass +@all allkeys resetchannels &news.* &x"));
    fr_client *s1 = fr_client_new(f->srv), *s2 = fr_client_new(f->srv), *idle = fr_client_new(f->srv);
    fake_ok_reply(RUN(s1, "AUTH sub any"));
    fake_ok_reply(RUN(s2, "AUTH sub any"));
    fake_ok_reply(RUN(idle, "AUTH sub any"));
    RUN(s1, "SUBSCRIBE news.1");
    RUN(s2, "SUBSCRIBE x");
    /* a superset of the channels: nobody is closed */
    fake_ok_reply(RUN(f->c, "ACL SETUSER sub &more"));
    assert_false(fr_client_closing(s1) || fr_client_closing(s2) || fr_client_closing(idle));
    /* news.* goes: s1's channel is no longer allowed, s2's is, idle has none */
    fake_ok_reply(RUN(f->c, "ACL SETUSER sub resetchannels &x"));
    assert_true(fr_client_closing(s1));
    assert_false(fr_client_closing(s2) || fr_client_closing(idle));
    /* deleting the user closes every client of it */
    assert_int_equal(fake_int_reply(RUN(f->c, "ACL DELUSER sub")), 1);
    assert_true(fr_client_closing(s2) && fr_client_closing(idle));
    assert_false(fr_client_closing(f->c));
    fr_client_free(s1);
    fr_client_free(s2);
    fr_client_free(idle);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(key_specs),
        TEST(rows_match_metadata),
        TEST(count_follows_the_table),
        TEST(resp3_shapes),
        TEST(acl_log_fields),
        cmocka_unit_test(genpass_follows_the_seed),
        TEST(requirepass_and_noauth),
        TEST(acl_changes_close_clients),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
