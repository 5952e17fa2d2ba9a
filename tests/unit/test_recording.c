/* test_recording.c -- the recording library (recording/, docs/recording.md): RESP framing
 * and trees, tokens, the writer and the reader, and the reader's refusals of malformed
 * input (each with its file:line:col and what is wrong).
 *
 * A round trip writes events with every kind of byte through wsr_writer and reads them
 * back byte for byte; the refusals are written out as text, so that each says exactly what
 * a user would see. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "wsr.h"
#include "wsr_resp.h"

/* ----- RESP ------------------------------------------------------------------------------ */

/* wsr_resp_len of a C string. */
static long long len_of(const char *s) { return wsr_resp_len(s, strlen(s), NULL); }

static void test_resp_framing(void **state)
{
    (void)state;
    /* RESP2 */
    assert_int_equal(len_of("+OK\r\n"), 5);
    assert_int_equal(len_of("-ERR x\r\n"), 8);
    assert_int_equal(len_of(":-12\r\n"), 6);
    assert_int_equal(len_of("$3\r\nfoo\r\n"), 9);
    assert_int_equal(len_of("$0\r\n\r\n"), 6);
    assert_int_equal(len_of("$-1\r\n"), 5);
    assert_int_equal(len_of("*-1\r\n"), 5);
    assert_int_equal(len_of("*0\r\n"), 4);
    assert_int_equal(len_of("*2\r\n$1\r\na\r\n*1\r\n:1\r\n"), 19);
    /* only the first value counts */
    assert_int_equal(len_of("+OK\r\n+OK\r\n"), 5);
    /* binary bulk: CR and LF inside count as bytes */
    assert_int_equal(wsr_resp_len("$4\r\n\r\n\r\n\r\n", 10, NULL), 10);
    /* RESP3 */
    assert_int_equal(len_of("_\r\n"), 3);
    assert_int_equal(len_of(",1.5\r\n"), 6);
    assert_int_equal(len_of("#t\r\n"), 4);
    assert_int_equal(len_of("(12345678901234567890123\r\n"), 26);
    assert_int_equal(len_of("!3\r\nbad\r\n"), 9);
    assert_int_equal(len_of("=7\r\ntxt:abc\r\n"), 13);
    assert_int_equal(len_of("%1\r\n+a\r\n:1\r\n"), 12);
    assert_int_equal(len_of("~1\r\n+a\r\n"), 8);
    assert_int_equal(len_of(">2\r\n+a\r\n+b\r\n"), 12);
    /* an attribute is framed with the value it describes */
    assert_int_equal(len_of("|1\r\n+k\r\n+v\r\n:5\r\n"), 16);
    /* incomplete: 0, at every cut */
    const char *whole = "*2\r\n$5\r\nhello\r\n%1\r\n+a\r\n#f\r\n";
    for (size_t k = 0; k < strlen(whole); k++)
        assert_int_equal(wsr_resp_len(whole, k, NULL), 0);
    assert_int_equal(len_of(whole), (long long)strlen(whole));
    /* a count the bytes cannot hold waits */
    assert_int_equal(len_of("*1000000000000\r\n"), 0);
    assert_int_equal(len_of("$9223372036854775807\r\n"), 0);
}

static void test_resp_refusals(void **state)
{
    (void)state;
    static const struct { const char *bytes, *why; } bad[] = {
        {"?x\r\n", "an unknown type byte"},
        {"+a\rb\r\n", "a carriage return not followed by a line feed"},
        {"+a\nb\r\n", "a line feed inside a line"},
        {":1.5\r\n", "an integer that is not a decimal"},
        {":01\r\n", "an integer that is not a decimal"},
        {":-0\r\n", "an integer that is not a decimal"},
        {":9223372036854775808\r\n", "an integer that is not a decimal"},
        {"$-2\r\n", "a bulk length that is not a length"},
        {"$+1\r\na\r\n", "a bulk length that is not a length"},
        {"$1\r\nab\r\n", "a bulk string not followed by CRLF"},
        {"*-2\r\n", "an aggregate count that is not a count"},
        {"%-1\r\n", "an aggregate count that is not a count"},
        {"#x\r\n", "a boolean that is not t or f"},
        {"_x\r\n", "a null with text after '_'"},
        {"(1a\r\n", "a big number that is not a decimal"},
        {"(-\r\n", "a big number that is not a decimal"},
        {"=3\r\ntxt\r\n", "a verbatim string without its 3-letter format and ':'"},
        {"!-1\r\n", "a bulk length that is not a length"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *why = NULL;
        if (wsr_resp_len(bad[i].bytes, strlen(bad[i].bytes), &why) != -1 ||
            !why || strcmp(why, bad[i].why) != 0)
            fail_msg("%zu: '%s' gave %s", i, bad[i].bytes, why ? why : "(accepted)");
    }
    /* nesting: WSR_RESP_MAX_DEPTH levels pass, one more is refused */
    char deep[4 * (WSR_RESP_MAX_DEPTH + 2) + 8];
    size_t k = 0;
    for (int i = 0; i < WSR_RESP_MAX_DEPTH; i++) k += (size_t)sprintf(deep + k, "*1\r\n");
    k += (size_t)sprintf(deep + k, ":1\r\n");
    assert_true(wsr_resp_len(deep, k, NULL) > 0);
    k = 0;
    for (int i = 0; i <= WSR_RESP_MAX_DEPTH; i++) k += (size_t)sprintf(deep + k, "*1\r\n");
    k += (size_t)sprintf(deep + k, ":1\r\n");
    const char *why = NULL;
    assert_int_equal(wsr_resp_len(deep, k, &why), -1);
    assert_string_equal(why, "nested too deep");
    /* whole: several values, or the offset of the one that fails */
    size_t at = 0;
    assert_true(wsr_resp_whole("+a\r\n:1\r\n", 8, NULL, NULL));
    assert_true(wsr_resp_whole("", 0, NULL, NULL));
    assert_false(wsr_resp_whole("+a\r\n:1\r", 7, &why, &at));
    assert_int_equal(at, 4);
    assert_string_equal(why, "a value that does not end");
}

static void test_resp_tree(void **state)
{
    (void)state;
    const char *b = "*4\r\n$3\r\nfoo\r\n$-1\r\n:-7\r\n%1\r\n+k\r\n|1\r\n+a\r\n+b\r\n#t\r\n";
    size_t used = 0;
    wsr_value *v = wsr_resp_parse(b, strlen(b), &used, NULL);
    assert_non_null(v);
    assert_int_equal(used, strlen(b));
    assert_int_equal(v->type, '*');
    assert_int_equal(v->count, 4);
    assert_int_equal(v->elements[0].type, '$');
    assert_memory_equal(v->elements[0].str, "foo", 3);
    assert_int_equal(v->elements[0].len, 3);
    assert_true(v->elements[1].nil);
    assert_int_equal(v->elements[2].integer, -7);
    const wsr_value *m = &v->elements[3];
    assert_int_equal(m->type, '%');
    assert_int_equal(m->count, 2);
    assert_int_equal(m->elements[0].type, '+');
    assert_int_equal(m->elements[1].type, '#');
    assert_int_equal(m->elements[1].integer, 1);
    assert_non_null(m->elements[1].attribute);
    assert_int_equal(m->elements[1].attribute->count, 2);
    free(v);
    assert_null(wsr_resp_parse("*2\r\n:1\r\n", 8, NULL, NULL));
}

/* ----- Tokens ------------------------------------------------------------------------------ */

static void test_tokens(void **state)
{
    (void)state;
    char buf[64];
    assert_int_equal(wsr_token(buf, sizeof buf, "XADD", 4), 4);
    assert_string_equal(buf, "XADD");
    wsr_token(buf, sizeof buf, "", 0);
    assert_string_equal(buf, "\"\"");
    wsr_token(buf, sizeof buf, "a b", 3);
    assert_string_equal(buf, "\"a b\"");
    wsr_token(buf, sizeof buf, "=>", 2);
    assert_string_equal(buf, "\"=>\"");
    wsr_token(buf, sizeof buf, "k=v", 3);
    assert_string_equal(buf, "\"k=v\"");
    wsr_token(buf, sizeof buf, "\"\\\r\n\t\x01\xff", 7);
    assert_string_equal(buf, "\"\\\"\\\\\\r\\n\\t\\x01\\xff\"");
    /* snprintf's contract: the length it needs, a cut NUL-terminated copy */
    assert_int_equal(wsr_token(buf, 4, "abcdef", 6), 6);
    assert_string_equal(buf, "abc");
}

/* ----- Writer and reader ------------------------------------------------------------------ */

/* A temporary directory for the files of one test. */
static char tmpdir[64];

static int setup_dir(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_recording.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static char *path_in(const char *file)
{
    static char p[160];
    snprintf(p, sizeof p, "%s/%s", tmpdir, file);
    return p;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    *len = fread(buf, 1, 1 << 20, f);
    buf[*len] = '\0';
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_round_trip(void **state)
{
    (void)state;
    const char *meta[] = {"source", "test recording", "clock", "virtual"};
    char err[256];
    const char *path = path_in("r.rec");
    wsr_writer *w = wsr_writer_open(path, meta, 2, err, sizeof err);
    assert_non_null(w);
    /* every byte value in one argument, an empty one, one that looks like a field or the
     * reply's arrow, and a name with a space */
    char all[256];
    for (int i = 0; i < 256; i++) all[i] = (char)i;
    const char *argv[] = {"SET", all, "", "name=x", "=>"};
    size_t lens[] = {3, 256, 0, 6, 2};
    assert_int_equal(wsr_write_open(w, 7, 1700000000000, "unix:/tmp/s.sock", 4242, "a b", 3), 0);
    assert_int_equal(wsr_write_cmd(w, 7, 1, 1700000000000, 0, "a b", 3, -1, 5, argv, lens,
                                   "+OK\r\n", 5), 0);
    const char *blpop[] = {"BLPOP", "q", "5"};
    assert_int_equal(wsr_write_wait(w, 7, 2, 1700000000001, 0, NULL, 0, 3, blpop, NULL), 0);
    assert_int_equal(wsr_write_clock(w, 1700000005001, 1700000000001, "auto"), 0);
    assert_int_equal(wsr_write_cmd(w, 7, 2, 1700000005001, 0, NULL, 0, 1700000000001, 3, blpop,
                                   NULL, "*-1\r\n", 5), 0);
    assert_int_equal(wsr_write_push(w, 7, -5, ">1\r\n+x\r\n", 8), 0);
    assert_int_equal(wsr_write_hold(w, 7, 3, "before", 2, 1, argv, lens), 0);
    assert_int_equal(wsr_write_note(w, 4, "a note \"quoted\""), 0);
    const char *xack[] = {"XACK", "s", "g", "1-1"};
    assert_int_equal(wsr_write_call(w, 7, 3, 5, 4, xack, NULL, ":1\r\n", 4), 0);
    assert_int_equal(wsr_write_cmd(w, 7, 3, 5, 1, NULL, 0, -1, 1, argv, lens, "", 0), 0);
    assert_int_equal(wsr_write_close(w, 7, 6, "peer"), 0);
    assert_int_equal(wsr_writer_events(w), 11);
    assert_int_equal(wsr_writer_close(w, 7, err, sizeof err), 0);

    size_t len;
    char *text = slurp(path, &len);
    assert_true(wsr_looks_like_recording(text, len));
    assert_memory_equal(text, "wsim-recording 1\nmeta source \"test recording\"\nmeta clock virtual\n"
                              "open 7 t=1700000000000 addr=unix:/tmp/s.sock pid=4242 name=\"a b\"\n",
                        strlen("wsim-recording 1\nmeta source \"test recording\"\nmeta clock "
                               "virtual\nopen 7 t=1700000000000 addr=unix:/tmp/s.sock pid=4242 "
                               "name=\"a b\"\n"));
    assert_non_null(strstr(text, "\nwait 7 b=2 t=1700000000001 m=0 BLPOP q 5\n"));
    assert_non_null(strstr(text, "\nclock t=1700000005001 from=1700000000001 why=auto\n"));
    assert_non_null(strstr(text, "\ncmd 7 b=2 t=1700000005001 m=0 since=1700000000001 BLPOP q 5 "
                                 "=> \"*-1\\r\\n\"\n"));
    assert_non_null(strstr(text, "\ncall 7 b=3 t=5 XACK s g 1-1 => \":1\\r\\n\"\n"));
    assert_non_null(strstr(text, "\nend t=7\n"));
    free(text);

    char *error = NULL;
    wsr_recording *r = wsr_read_file(path, NULL, &error);
    if (!r) fail_msg("%s", error);
    assert_int_equal(r->version, 1);
    assert_int_equal(r->nmeta, 2);
    assert_string_equal(wsr_meta(r, "source"), "test recording");
    assert_null(wsr_meta(r, "nothing"));
    assert_true(r->ended);
    assert_int_equal(r->n, 12);
    const wsr_event *e = r->ev;
    assert_int_equal(e[0].kind, WSR_OPEN);
    assert_int_equal(e[0].conn, 7);
    assert_int_equal(e[0].pid, 4242);
    assert_string_equal(e[0].addr, "unix:/tmp/s.sock");
    assert_int_equal(e[0].name_len, 3);
    assert_memory_equal(e[0].name, "a b", 3);
    assert_int_equal(e[1].kind, WSR_CMD);
    assert_int_equal(e[1].line, 5);
    assert_int_equal(e[1].batch, 1);
    assert_int_equal(e[1].argc, 5);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(e[1].argvlen[i], lens[i]);
        assert_memory_equal(e[1].argv[i], argv[i], lens[i]);
    }
    assert_int_equal(e[1].since, -1);
    assert_int_equal(e[1].reply_len, 5);
    assert_int_equal(e[2].kind, WSR_WAIT);
    assert_int_equal(e[3].kind, WSR_CLOCK);
    assert_int_equal(e[3].from, 1700000000001);
    assert_string_equal(e[3].word, "auto");
    assert_int_equal(e[4].since, 1700000000001);
    assert_int_equal(e[5].kind, WSR_PUSH);
    assert_int_equal(e[5].t, -5);
    assert_int_equal(e[6].kind, WSR_HOLD);
    assert_string_equal(e[6].word, "before");
    assert_int_equal(e[6].n, 2);
    assert_string_equal(e[7].word, "a note \"quoted\"");
    assert_int_equal(e[8].kind, WSR_CALL);
    assert_int_equal(e[8].batch, 3);
    assert_int_equal(e[8].argc, 4);
    assert_string_equal(e[8].argv[3], "1-1");
    assert_int_equal(e[8].reply_len, 4);
    assert_int_equal(e[9].multi, 1);
    assert_int_equal(e[9].reply_len, 0);
    assert_int_equal(e[10].kind, WSR_CLOSE);
    assert_string_equal(e[10].word, "peer");
    assert_int_equal(e[11].kind, WSR_END);
    /* each event renders back to its line, byte for byte (what a checker quotes) */
    text = slurp(path, &len);
    for (size_t i = 0; i < r->n; i++) {
        char *line = wsr_event_text(&r->ev[i], 0);
        assert_non_null(line);
        const char *at = text;
        for (size_t l = 1; l < r->ev[i].line; l++) at = strchr(at, '\n') + 1;
        size_t ll = (size_t)(strchr(at, '\n') - at);
        if (strlen(line) != ll || memcmp(line, at, ll) != 0)
            fail_msg("line %zu: rendered\n%s\nwritten\n%.*s", r->ev[i].line, line, (int)ll, at);
        free(line);
    }
    /* cut to a maximum */
    char *cut = wsr_event_text(&r->ev[1], 20);
    assert_string_equal(cut, "cmd 7 b=1 t=17000...");
    free(cut);
    /* a line cut is the whole line cut, whatever the maximum (the cut line is built only
     * up to it: a token is cut, a quoted one keeps its quote) */
    for (size_t i = 0; i < r->n; i++) {
        char *whole = wsr_event_text(&r->ev[i], 0);
        assert_non_null(whole);
        for (size_t max = 4; max <= strlen(whole) + 2; max++) {
            char *c = wsr_event_text(&r->ev[i], max);
            assert_non_null(c);
            size_t wl = strlen(whole);
            int ok = wl <= max ? strcmp(c, whole) == 0
                               : strlen(c) == max && memcmp(c, whole, max - 3) == 0 &&
                                     strcmp(c + max - 3, "...") == 0;
            if (!ok) fail_msg("event %zu, max %zu: %s (whole: %s)", i, max, c, whole);
            free(c);
        }
        free(whole);
    }
    free(text);
    wsr_free(r);
}

static void test_overwrite_rules(void **state)
{
    (void)state;
    char err[256];
    /* a file of the user's is never replaced */
    const char *mine = path_in("notes.txt");
    spit(mine, "my notes\n");
    assert_null(wsr_writer_open(mine, NULL, 0, err, sizeof err));
    char want[256];
    snprintf(want, sizeof want, "%s exists and is not a recording: not overwritten", mine);
    assert_string_equal(err, want);
    size_t len;
    char *text = slurp(mine, &len);
    assert_string_equal(text, "my notes\n");
    free(text);
    /* an empty file or an old recording is */
    const char *empty = path_in("empty.rec");
    spit(empty, "");
    wsr_writer *w = wsr_writer_open(empty, NULL, 0, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(wsr_writer_close(w, 0, err, sizeof err), 0);
    w = wsr_writer_open(empty, NULL, 0, err, sizeof err);
    assert_non_null(w);
    assert_int_equal(wsr_writer_close(w, 1, err, sizeof err), 0);
    text = slurp(empty, &len);
    assert_string_equal(text, "wsim-recording 1\nend t=1\n");
    free(text);
    /* a directory that does not exist: the system's text */
    assert_null(wsr_writer_open(path_in("no/such/dir.rec"), NULL, 0, err, sizeof err));
    assert_non_null(strstr(err, "No such file or directory"));
}

/* What the reader says of text (NULL when it reads it). */
static char *refusal(const char *text, int allow_open)
{
    char *error = NULL;
    wsr_read_options opt = {.allow_open = allow_open};
    wsr_recording *r = wsr_parse("t.rec", text, strlen(text), &opt, &error);
    if (r) {
        wsr_free(r);
        return NULL;
    }
    assert_non_null(error);
    return error;
}

static void expect_refusal(const char *text, const char *want)
{
    char *got = refusal(text, 0);
    if (!got) fail_msg("accepted:\n%s", text);
    if (strcmp(got, want) != 0) fail_msg("for:\n%s\nwant: %s\ngot:  %s", text, want, got);
    free(got);
}

#define HEAD "wsim-recording 1\n"
#define OPEN1 "open 1 t=0 addr=?\n"

static void test_reader_refusals(void **state)
{
    (void)state;
    /* not a recording, another version, truncated */
    expect_refusal("", "t.rec:1:1: error: not a recording: the first line is not "
                       "'wsim-recording <version>'");
    expect_refusal("scenario A test\n", "t.rec:1:1: error: not a recording: the first line is "
                                        "not 'wsim-recording <version>'");
    expect_refusal("\x7f" "ELF\x02\x01", "t.rec:1:1: error: not a recording: the first line is "
                                         "not 'wsim-recording <version>'");
    expect_refusal("wsim-recording x\n", "t.rec:1:16: error: not a recording: 'wsim-recording' "
                                          "needs a version number");
    expect_refusal("wsim-recording 2\nend t=0\n",
                   "t.rec:1:16: error: the recording is version 2; this wsim reads version 1");
    expect_refusal("wsim-recording 1", "t.rec:1:17: error: truncated: the recording ends in its "
                                       "first line");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING => \"+PO",
                   "t.rec:3:31: error: truncated: the last line has no line end (the recording "
                   "was cut short)");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING => \"+PONG\\r\\n\"\n",
                   "t.rec:4:1: error: truncated: the recording has no end line (the recorder was "
                   "stopped before it closed the file, or is still writing it)");
    char *ok = refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING => \"+PONG\\r\\n\"\n", 1);
    assert_null(ok);
    /* malformed lines */
    expect_refusal(HEAD "bogus 1\nend t=0\n",
                   "t.rec:2:1: error: unknown line kind bogus (open, close, cmd, wait, call, "
                   "push, hold, clock, note, end, meta)");
    expect_refusal(HEAD "open x t=0 addr=?\nend t=0\n",
                   "t.rec:2:6: error: a connection id (a decimal number) expected, got x");
    expect_refusal(HEAD "open 1 addr=? t=0\nend t=0\n",
                   "t.rec:2:8: error: field t= expected, got addr");
    expect_refusal(HEAD "open 1 t=01 addr=?\nend t=0\n",
                   "t.rec:2:10: error: t= needs a decimal number, got 01");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=2 PING => \"+PONG\\r\\n\"\nend t=0\n",
                   "t.rec:3:17: error: m=2 is out of range");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING\nend t=0\n",
                   "t.rec:3:23: error: '=>' and the reply expected");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING => +PONG\nend t=0\n",
                   "t.rec:3:27: error: the reply bytes are not RESP: a value that does not end "
                   "(at byte 0)");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING => \"?\\r\\n\"\nend t=0\n",
                   "t.rec:3:27: error: the reply bytes are not RESP: an unknown type byte (at "
                   "byte 0)");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 => \"+OK\\r\\n\"\nend t=0\n",
                   "t.rec:3:19: error: the command has no words");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 \"PING => \"+OK\\r\\n\"\nend t=0\n",
                   "t.rec:3:29: error: a closing quote must be followed by a space or the line "
                   "end");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 \"\\q\" => \"+OK\\r\\n\"\nend t=0\n",
                   "t.rec:3:20: error: unknown escape \\q");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 \"\\x4\" => \"+OK\\r\\n\"\nend t=0\n",
                   "t.rec:3:20: error: \\x needs two hex digits");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0  PING => \"+OK\\r\\n\"\nend t=0\n",
                   "t.rec:3:19: error: an argument expected (one space between words)");
    expect_refusal(HEAD OPEN1 "cmd 1 b=1 t=0 m=0 PING => \"+OK\\r\\n\" x\nend t=0\n",
                   "t.rec:3:37: error: nothing may follow the reply");
    expect_refusal(HEAD OPEN1 "call 1 b=1 t=0 XACK s g 1-1\nend t=0\n",
                   "t.rec:3:28: error: '=>' and the reply expected");
    expect_refusal(HEAD OPEN1 "call 1 t=0 XACK s g 1-1 => \":1\r\n\"\nend t=0\n",
                   "t.rec:3:8: error: field b= expected, got t");
    expect_refusal(HEAD OPEN1 "call 1 b=1 t=0 m=0 XACK => \":1\r\n\"\nend t=0\n",
                   "t.rec:3:17: error: byte 0x3d in a bare word (quote the word)");
    expect_refusal(HEAD "end t=0 \n", "t.rec:2:8: error: a space at the end of the line");
    expect_refusal(HEAD "push 1 t=0 => \"+x\\r\\n\"\nend t=0\n",
                   "t.rec:2:6: error: connection 1 has no open line above");
    expect_refusal(HEAD OPEN1 "close 1 t=0 why=peer\npush 1 t=0 => \"+x\\r\\n\"\nend t=0\n",
                   "t.rec:4:6: error: connection 1 was closed above");
    expect_refusal(HEAD OPEN1 OPEN1 "end t=0\n", "t.rec:3:6: error: connection 1 is opened twice");
    expect_refusal(HEAD "end t=0\nend t=1\n", "t.rec:3:1: error: a line after the end line");
    expect_refusal(HEAD OPEN1 "meta a b\nend t=0\n",
                   "t.rec:3:1: error: a meta line after the first event");
    expect_refusal(HEAD "note t=0 a b\nend t=0\n",
                   "t.rec:2:12: error: unexpected b at the end of the line");
    expect_refusal(HEAD "cmd\nend t=0\n", "t.rec:2:4: error: a connection id expected, the line "
                                          "ends");
    /* comments and empty lines are fine; a recording with only an end line too */
    assert_null(refusal(HEAD "# a comment\n\nend t=0\n", 0));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resp_framing),
        cmocka_unit_test(test_resp_refusals),
        cmocka_unit_test(test_resp_tree),
        cmocka_unit_test(test_tokens),
        cmocka_unit_test_setup_teardown(test_round_trip, setup_dir, teardown_dir),
        cmocka_unit_test_setup_teardown(test_overwrite_rules, setup_dir, teardown_dir),
        cmocka_unit_test(test_reader_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
