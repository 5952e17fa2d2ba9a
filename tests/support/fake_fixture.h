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

/* Runs the printf-formatted command line (up to 64 KiB) on c and returns the reply.
 * fake_run_logged also prints "<line> -> -<error>" when the reply is an error, so a
 * failing test shows which command went wrong. */
const fr_reply *fake_run(fr_client *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const fr_reply *fake_run_logged(fr_client *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The integer r holds; any other reply fails the test (an error is printed first). */
long long fake_int_reply(const fr_reply *r);
/* Fails the test unless r is +OK (an error is printed first). */
void fake_ok_reply(const fr_reply *r);

/* The reply's RESP2 bytes as a C string, in a static buffer (64 KiB) valid until the
 * next call. */
const char *fake_resp(const fr_reply *r);

#ifdef __cplusplus
}
#endif

#endif
