/* fake_fixture.c -- the unit tests' shared fixture and command helpers (fake_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fake_fixture.h"
#include "wsi_alloc.h"

fake_fixture *fake_fixture_new(const fr_config *cfg, int clients)
{
    fake_fixture *f = wsi_xcalloc(1, sizeof(*f));
    assert_non_null(f);
    f->srv = fr_server_new(cfg);
    assert_non_null(f->srv);
    f->c = fr_client_new(f->srv);
    assert_non_null(f->c);
    if (clients > 1) {
        f->c2 = fr_client_new(f->srv);
        assert_non_null(f->c2);
    }
    return f;
}

void fake_fixture_free(fake_fixture *f)
{
    if (f->c2) fr_client_free(f->c2);
    fr_client_free(f->c);
    fr_server_free(f->srv);
    free(f);
}

int fake_fixture_setup(void **state)
{
    *state = fake_fixture_new(NULL, 1);
    return 0;
}

int fake_fixture_setup2(void **state)
{
    *state = fake_fixture_new(NULL, 2);
    return 0;
}

int fake_fixture_teardown(void **state)
{
    fake_fixture_free(*state);
    return 0;
}

/* The line buffer is static: 64 KiB would be a lot of stack for a cmocka test. */
static const fr_reply *vrun(fr_client *c, int log_errors, const char *fmt, va_list ap)
{
    static char line[64 * 1024];
    vsnprintf(line, sizeof(line), fmt, ap);
    const fr_reply *r = fr_exec_line(c, line);
    assert_non_null(r);
    if (log_errors && r->type == FR_REPLY_ERROR) print_message("%s -> -%s\n", line, r->str);
    return r;
}

const fr_reply *fake_run(fr_client *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const fr_reply *r = vrun(c, 0, fmt, ap);
    va_end(ap);
    return r;
}

const fr_reply *fake_run_logged(fr_client *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const fr_reply *r = vrun(c, 1, fmt, ap);
    va_end(ap);
    return r;
}

long long fake_int_reply(const fr_reply *r)
{
    if (r->type == FR_REPLY_ERROR) print_message("unexpected error: %s\n", r->str);
    assert_int_equal(r->type, FR_REPLY_INTEGER);
    return r->integer;
}

void fake_ok_reply(const fr_reply *r)
{
    if (r->type == FR_REPLY_ERROR) print_message("unexpected error: %s\n", r->str);
    assert_int_equal(r->type, FR_REPLY_STATUS);
    assert_string_equal(r->str, "OK");
}

const char *fake_resp(const fr_reply *r)
{
    static char buf[64 * 1024];
    size_t n = fr_reply_encode(r, buf, sizeof(buf) - 1);
    assert_true(n < sizeof(buf));
    buf[n] = '\0';
    return buf;
}
