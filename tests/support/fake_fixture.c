/* fake_fixture.c -- the unit tests' shared fixture and command helpers (fake_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

const fr_reply *fake_run_ex(fr_client *c, int log_errors, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    const fr_reply *r = vrun(c, log_errors, fmt, ap);
    va_end(ap);
    return r;
}

void fake_setup(fr_client *c, const char *const *lines)
{
    for (; *lines; lines++) {
        const fr_reply *r = fake_run_logged(c, "%s", *lines);
        assert_int_not_equal(r->type, FR_REPLY_ERROR);
    }
}

void fake_expect(fr_client *c, const fake_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *got = fake_resp(fake_run_logged(c, "%s", cases[i].cmd));
        if (strcmp(got, cases[i].resp) != 0) print_message("%s\n", cases[i].cmd);
        assert_string_equal(got, cases[i].resp);
    }
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

char *fake_transcript(fr_client *c, const char *const *cmds, size_t n)
{
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) {
        size_t rn = 0;
        char *s = fr_reply_to_resp(fake_run_logged(c, "%s", cmds[i]), &rn);
        assert_non_null(s);
        while (len + rn + 2 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, s, rn);
        len += rn;
        out[len++] = '\n';
        free(s);
    }
    out[len] = '\0';
    return out;
}

const fr_reply *fake_scan_step(fr_client *c, const char *fmt, char *cursor, size_t cap)
{
    char line[512];
    snprintf(line, sizeof(line), fmt, cursor);
    const fr_reply *r = fake_run_logged(c, "%s", line);
    assert_int_equal(r->type, FR_REPLY_ARRAY);
    assert_int_equal(r->count, 2);
    snprintf(cursor, cap, "%s", r->elements[0].str);
    return &r->elements[1];
}

int fake_exec_survives(fake_fixture *f, const char *cmd)
{
    fake_ok_reply(fake_run_logged(f->c, "WATCH k"));
    fake_run(f->c2, "%s", cmd);
    fake_ok_reply(fake_run_logged(f->c, "MULTI"));
    const fr_reply *r = fake_run(f->c, "EXEC");
    return r->type == FR_REPLY_ARRAY;
}

const fr_command_info *fake_command_info(const char *name)
{
    for (size_t j = 0; j < fr_command_count(); j++) {
        const fr_command_info *ci = fr_command_at(j);
        if (strcmp(ci->name, name) == 0) return ci;
    }
    print_message("missing: %s\n", name);
    fail();
    return NULL;
}

fake_pending_view fake_pending(fr_server *srv, const char *s, const char *g, uint64_t ms,
                               uint64_t seq)
{
    fake_pending_view v = {0};
    fr_pending *p;
    size_t n;
    assert_int_equal(fr_stream_pending(srv, 0, s, strlen(s), g, strlen(g), NULL, 0, &p, &n), 0);
    for (size_t i = 0; i < n; i++) {
        if (p[i].id_ms != ms || p[i].id_seq != seq) continue;
        v.found = 1;
        snprintf(v.consumer, sizeof(v.consumer), "%s", p[i].consumer);
        v.idle = p[i].idle_ms;
        v.count = p[i].delivery_count;
    }
    free(p);
    return v;
}

void fake_assert_pending(fr_server *srv, const char *s, const char *g, uint64_t ms,
                         uint64_t seq, const char *consumer, int64_t idle, uint64_t count)
{
    fake_pending_view v = fake_pending(srv, s, g, ms, seq);
    assert_true(v.found);
    assert_string_equal(v.consumer, consumer);
    assert_int_equal(v.idle, idle);
    assert_int_equal(v.count, count);
}

void fake_assert_expires_in_db(fake_fixture *f, int db, const char *key, long long ttl)
{
    fake_ok_reply(fake_run_logged(f->c, "SELECT %d", db));
    assert_int_equal(fake_int_reply(fake_run_logged(f->c, "PTTL %s", key)), ttl);
    fr_clock_advance(f->srv, ttl + 1);
    assert_int_equal(fake_int_reply(fake_run_logged(f->c, "EXISTS %s", key)), 0);
    fake_ok_reply(fake_run_logged(f->c, "SELECT 0"));
}
