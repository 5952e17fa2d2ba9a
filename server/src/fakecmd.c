/* fakecmd.c -- FAKE.*: control of the fake over the wire, in a namespace Redis does not
 * use (docs/server.md, "Control commands").  These are the server's commands: the fake
 * does not count them as executed, so they never shift a FAKE.FAIL NTH count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "frs.h"

#define DEFAULT_FAULT "ERR injected fault"

/* The integer argument i, or -1 after answering Redis's error. */
static int int_arg(frs_conn *c, const char *p, size_t n, long long *out)
{
    if (frs_string2ll(p, n, out)) return 0;
    frs_reply_error(c, "ERR value is not an integer or out of range");
    return -1;
}

/* After the clock moved: clients whose blocking timeout passed get their timeout reply. */
static void clock_moved(frs_conn *c)
{
    fr_server_expire_blocked(c->srv->fake);
    frs_drain_fake_events(c->srv, c);
}

/* Answers an error and returns 1 when the clock is the wall clock. */
static int refuse_on_wall(frs_conn *c)
{
    if (!c->srv->opt.wall_clock) return 0;
    frs_reply_error(c, "ERR the clock is the wall clock: it cannot be set (start the server "
                       "with --clock virtual)");
    return 1;
}

/* FAKE.TIME GET: the fake's clock in Unix ms. */
void frs_cmd_fake_time_get(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_ll(c, (long long)fr_clock_now(c->srv->fake));
}

/* FAKE.TIME SET ms: +OK; deadlines that passed fire. */
void frs_cmd_fake_time_set(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    long long ms;
    if (refuse_on_wall(c) || int_arg(c, argv[2], argvlen[2], &ms) < 0) return;
    fr_clock_set(c->srv->fake, ms);
    frs_reply_ok(c);
    clock_moved(c);
}

/* FAKE.TIME ADVANCE ms: the new time; deadlines that passed fire. */
void frs_cmd_fake_time_advance(frs_conn *c, int argc, const char *const *argv,
                               const size_t *argvlen)
{
    long long ms;
    if (refuse_on_wall(c) || int_arg(c, argv[2], argvlen[2], &ms) < 0) return;
    if (ms < 0) {
        frs_reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    fr_clock_advance(c->srv->fake, ms);
    frs_reply_ll(c, (long long)fr_clock_now(c->srv->fake));
    clock_moved(c);
}

/* FAKE.FAIL NTH n [error]: fr_fault_nth. */
void frs_cmd_fake_fail_nth(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    long long n;
    if (argc > 4) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    if (int_arg(c, argv[2], argvlen[2], &n) < 0) return;
    if (n < 1) {
        frs_reply_error(c, "ERR value is out of range, must be positive");
        return;
    }
    char *err = argc == 4 ? frs_memdup(argv[3], argvlen[3]) : frs_memdup(DEFAULT_FAULT, strlen(DEFAULT_FAULT));
    int rc = fr_fault_nth(c->srv->fake, (uint64_t)n, err);
    free(err);
    if (rc < 0) frs_reply_error(c, "ERR could not add the fault");
    else frs_reply_ok(c);
}

/* FAKE.FAIL COMMAND name [error [times]]: fr_fault_command. */
void frs_cmd_fake_fail_command(frs_conn *c, int argc, const char *const *argv,
                               const size_t *argvlen)
{
    long long times = -1;
    if (argc > 5) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    if (argc == 5) {
        if (int_arg(c, argv[4], argvlen[4], &times) < 0) return;
        if (times == 0 || times > 2147483647LL || times < -1) {
            frs_reply_error(c, "ERR times must be a positive count, or -1 for ever");
            return;
        }
    }
    char *name = frs_memdup(argv[2], argvlen[2]);
    char *err = argc >= 4 ? frs_memdup(argv[3], argvlen[3]) : frs_memdup(DEFAULT_FAULT, strlen(DEFAULT_FAULT));
    int rc = fr_fault_command(c->srv->fake, name, err, (int)times);
    free(name);
    free(err);
    if (rc < 0) frs_reply_error(c, "ERR could not add the fault");
    else frs_reply_ok(c);
}

/* FAKE.FAIL CLEAR: fr_fault_clear. */
void frs_cmd_fake_fail_clear(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    fr_fault_clear(c->srv->fake);
    frs_reply_ok(c);
}

/* FAKE.FAIL FIRED: fr_fault_fired. */
void frs_cmd_fake_fail_fired(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_ll(c, (long long)fr_fault_fired(c->srv->fake));
}

/* FAKE.DUMP: fr_dump's text as a bulk string. */
void frs_cmd_fake_dump(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    size_t len;
    char *dump = fr_dump(c->srv->fake, &len);
    if (!dump) {
        frs_reply_error(c, "OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    frs_reply_bulk(c, dump, len);
    free(dump);
}

/* FAKE.SEED: the seed of --seed. */
void frs_cmd_fake_seed(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    frs_reply_ll(c, (long long)c->srv->opt.seed);
}

/* FAKE.PUBLISHED [CLEAR | INFO | LIMIT <messages> <bytes>]: the PUBLISH log as
 * [channel, payload, ms] oldest first, or clears it, or says how full it is and how much
 * it dropped, or sets its bounds (fr_published_set_limit). */
void frs_cmd_fake_published(frs_conn *c, int argc, const char *const *argv,
                            const size_t *argvlen)
{
    fr_server *fake = c->srv->fake;
    if (argc == 2 && argvlen[1] == 5 && strncasecmp(argv[1], "clear", 5) == 0) {
        fr_published_clear(fake);
        frs_reply_ok(c);
        return;
    }
    if (argc == 2 && argvlen[1] == 4 && strncasecmp(argv[1], "info", 4) == 0) {
        size_t max = 0, max_bytes = 0, bytes = 0;
        fr_published_limit(fake, &max, &max_bytes, &bytes);
        frs_reply_array(c, 10);
        frs_reply_bulk(c, "messages", 8);
        frs_reply_ll(c, (long long)fr_published_count(fake));
        frs_reply_bulk(c, "bytes", 5);
        frs_reply_ll(c, (long long)bytes);
        frs_reply_bulk(c, "dropped", 7);
        frs_reply_ll(c, (long long)fr_published_dropped(fake));
        frs_reply_bulk(c, "max-messages", 12);
        frs_reply_ll(c, (long long)max);
        frs_reply_bulk(c, "max-bytes", 9);
        frs_reply_ll(c, (long long)max_bytes);
        return;
    }
    if (argc == 4 && argvlen[1] == 5 && strncasecmp(argv[1], "limit", 5) == 0) {
        long long max, max_bytes;
        if (!frs_string2ll(argv[2], argvlen[2], &max) ||
            !frs_string2ll(argv[3], argvlen[3], &max_bytes) || max < 0 || max_bytes < 0) {
            frs_reply_error(c, "ERR value is out of range, must be positive");
            return;
        }
        fr_published_set_limit(fake, (size_t)max, (size_t)max_bytes);
        frs_reply_ok(c);
        return;
    }
    if (argc != 1) {
        frs_reply_error(c, "ERR syntax error");
        return;
    }
    size_t n = fr_published_count(fake);
    frs_reply_array(c, (long)n);
    for (size_t i = 0; i < n; i++) {
        const fr_message *m = fr_published(fake, i);
        frs_reply_array(c, 3);
        frs_reply_bulk(c, m->channel, m->channel_len);
        frs_reply_bulk(c, m->payload, m->payload_len);
        frs_reply_ll(c, (long long)m->at_ms);
    }
}

/* FAKE.HELP. */
void frs_cmd_fake_help(frs_conn *c, int argc, const char *const *argv, const size_t *argvlen)
{
    static const char *const lines[] = {
        "FAKE.TIME GET", "    The fake's clock, Unix milliseconds.",
        "FAKE.TIME SET <ms>", "    Set the clock (virtual clock only).",
        "FAKE.TIME ADVANCE <ms>",
        "    Move the clock forward; answers the new reading. Blocked clients whose",
        "    timeout passed get their timeout reply.",
        "FAKE.FAIL NTH <n> [<error>]",
        "    The n-th command the fake executes from now answers <error>.",
        "FAKE.FAIL COMMAND <name> [<error> [<times>]]",
        "    Every <name> command (times: how many, -1 for ever) answers <error>.",
        "FAKE.FAIL CLEAR", "    Remove every fault.",
        "FAKE.FAIL FIRED", "    How many faults have fired.",
        "FAKE.DUMP", "    The canonical dump of the keyspace.",
        "FAKE.SEED", "    The seed the fake was started with.",
        "FAKE.PUBLISHED [CLEAR]",
        "    The messages PUBLISH sent, oldest first: [channel, payload, ms]; or clear",
        "    the log. It keeps the last 10000 messages (16 MiB) by default.",
        "FAKE.PUBLISHED INFO",
        "    messages, bytes, dropped (since the last clear), max-messages, max-bytes.",
        "FAKE.PUBLISHED LIMIT <messages> <bytes>",
        "    Bound the log; the oldest messages beyond it are dropped and counted.",
        "FAKE.RECORD START <file>",
        "    Record every command and reply into <file> (a file that is not a recording",
        "    is never replaced).",
        "FAKE.RECORD STOP", "    Write the recording's end line and close the file.",
        "FAKE.RECORD STATUS", "    The file, events and bytes recorded (empty when none).",
        "FAKE.HELP", "    Prints this help.",
        NULL,
    };
    long n = 0;
    while (lines[n]) n++;
    frs_reply_array(c, n + 1);
    frs_reply_status(c, "FAKE.* commands control the fake behind fakeredis-server:");
    for (long i = 0; i < n; i++) frs_reply_status(c, lines[i]);
}
