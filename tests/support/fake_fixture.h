/* fake_fixture.h -- what the cmocka unit tests of libfakeredis share: a fresh fake server
 * with its clients as the test state, and helpers that run a printf-formatted command
 * line and check or encode its reply.
 *
 * Every helper fails the running cmocka test (it does not return) when something is
 * wrong, so the caller may use what it returns without checking.  Replies live until the
 * client's next command, as fr_exec_line's do.
 */
#ifndef FAKE_FIXTURE_H
#define FAKE_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "fakeredis.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A fresh server and one or two clients. */
typedef struct fake_fixture {
    fr_server *srv; /* the fake */
    fr_client *c;   /* the client under test */
    fr_client *c2;  /* a second connection (for WATCH from elsewhere), or NULL */
} fake_fixture;

/* A server on cfg (NULL: the defaults) with 1 or 2 clients (c, and c2 when clients is 2);
 * free it with fake_fixture_free. */
fake_fixture *fake_fixture_new(const fr_config *cfg, int clients);
/* Frees the clients, the server and f. */
void fake_fixture_free(fake_fixture *f);

/* cmocka setup / teardown: *state is a fake_fixture on the default config with one client. */
int fake_fixture_setup(void **state);
int fake_fixture_teardown(void **state);

/* The same with two clients (the second, c2, for WATCH and other sessions). */
int fake_fixture_setup2(void **state);

/* A cmocka test run on a fresh fake_fixture_setup fixture (FAKE_TEST2: setup2). */
#define FAKE_TEST(fn) cmocka_unit_test_setup_teardown(fn, fake_fixture_setup, fake_fixture_teardown)
#define FAKE_TEST2(fn) cmocka_unit_test_setup_teardown(fn, fake_fixture_setup2, fake_fixture_teardown)

/* The clock of the fixtures above (fr_config_default's start_ms): a whole second, so
 * EXAT and EXPIREAT map to exact milliseconds. */
#define FAKE_START_MS 1700000000000LL

/* Runs the printf-formatted command line (up to 64 KiB) on c and returns the reply.
 * fake_run_logged also prints "<line> -> -<error>" when the reply is an error, so a
 * failing test shows which command went wrong.  Both are fake_run_ex, log 0 or 1. */
#define fake_run(c, ...) fake_run_ex((c), 0, __VA_ARGS__)
#define fake_run_logged(c, ...) fake_run_ex((c), 1, __VA_ARGS__)
const fr_reply *fake_run_ex(fr_client *c, int log_errors, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The integer a command answers, and +OK: any other reply fails the test (the command
 * line and the error are printed first). */
#define FAKE_INT(c, ...) fake_int_reply(fake_run_logged((c), __VA_ARGS__))
#define FAKE_OK(c, ...) fake_ok_reply(fake_run_logged((c), __VA_ARGS__))

/* Runs a test's setup: each line of the NULL-terminated list on c, in order, as it is (no
 * printf); a line answered with an error fails the test (the line and the error printed
 * first).  The replies are not kept: the assertions come after. */
void fake_setup(fr_client *c, const char *const *lines);

/* Fails unless key, in database db, has ttl ms left (PTTL) and is gone 1 ms past its
 * deadline (EXISTS 0); f->c is back in database 0 after, the clock past the deadline. */
void fake_assert_expires_in_db(fake_fixture *f, int db, const char *key, long long ttl);

/* One pending entry of a consumer group, through the inspection API (fr_stream_pending). */
typedef struct fake_pending_view {
    int found;         /* the id is pending */
    char consumer[64]; /* its consumer */
    int64_t idle;      /* ms since its last delivery */
    uint64_t count;    /* deliveries */
} fake_pending_view;

/* Entry ms-seq in the PEL of group g of stream s (db 0); .found 0 when it is not there. */
fake_pending_view fake_pending(fr_server *srv, const char *s, const char *g, uint64_t ms,
                               uint64_t seq);
/* Fails unless entry ms-seq is pending in group g of stream s for consumer, with this idle
 * time and delivery count. */
void fake_assert_pending(fr_server *srv, const char *s, const char *g, uint64_t ms,
                         uint64_t seq, const char *consumer, int64_t idle, uint64_t count);

/* A command line and the RESP2 bytes it must be answered with. */
typedef struct fake_case {
    const char *cmd;  /* run as it is (no printf) */
    const char *resp; /* the reply's RESP2 encoding */
} fake_case;

/* Runs cases[0..n) on c in order: each reply must be its case's bytes (the first that is
 * not fails the test, its command printed first). */
void fake_expect(fr_client *c, const fake_case *cases, size_t n);

/* The integer r holds; any other reply fails the test (an error is printed first). */
long long fake_int_reply(const fr_reply *r);
/* Fails the test unless r is +OK (an error is printed first). */
void fake_ok_reply(const fr_reply *r);

/* The reply's RESP2 bytes as a C string, in a static buffer (64 KiB) valid until the
 * next call. */
const char *fake_resp(const fr_reply *r);

/* The RESP2 bytes of the replies to cmds[0..n) run on c in order, one reply a line, as one
 * heap string (free() it): a transcript two runs can be compared by. */
char *fake_transcript(fr_client *c, const char *const *cmds, size_t n);

/* One step of a SCAN-family walk: runs fmt with the cursor for its one %s (e.g.
 * "HSCAN h %s COUNT 9"), checks the reply is [cursor, page], stores the next cursor in
 * cursor (cap bytes) and returns the page. */
const fr_reply *fake_scan_step(fr_client *c, const char *fmt, char *cursor, size_t cap);

/* Whether f->c's EXEC still runs after WATCH k on f->c, cmd on f->c2, MULTI: 0 when cmd
 * touched the watched key k (EXEC answers nil), 1 when not. */
int fake_exec_survives(fake_fixture *f, const char *cmd);

/* The command table's row for name (fr_command_at); fails the test when there is none. */
const fr_command_info *fake_command_info(const char *name);

#ifdef __cplusplus
}
#endif

#endif
