/* diff_script.h -- the differential test scripts (tests/diff/NAME.redis) and how their
 * replies are compared.
 *
 * A script is one redis-cli style command per line, optionally preceded by modifiers
 * (<N> for the client, @sorted, @type, @len, @near, @idle, @fake), plus the directives
 * !sleep MS, !config NAME VALUE, !dumprestore SRC DST TTL [OPTION...] and !cluster.
 * tests/diff/README.md describes the format for script writers; this header is the
 * parser's contract.  Errors are reported as "file:line:col: error: message", col counting
 * bytes from 1.
 */
#ifndef DIFF_SCRIPT_H
#define DIFF_SCRIPT_H

#include <stdio.h>
#include <stddef.h>

#include "fakeredis.h"
#include "redis_harness.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DS_MAX_CLIENTS 8        /* <1> .. <8> */
#define DS_MAX_SLEEP_MS 60000   /* !sleep larger than this is surely a typo */

/* What a script line is. */
typedef enum ds_kind {
    DS_COMMAND = 1, /* a command to run (and usually compare) */
    DS_SLEEP,       /* !sleep MS */
    DS_CLUSTER,     /* !cluster (ds_parse_text turns it into ds_script.cluster) */
    DS_CONFIG,      /* !config NAME VALUE: CONFIG SET on the real server, the same
                       parameter set on the fake (fr_server_set_param); argv holds the
                       name and the value */
    DS_EVENTS,      /* !events: from here on a listener on each side PSUBSCRIBEs
                       __key*__:* and the messages each command makes it receive are
                       compared too */
    DS_DUMPRESTORE, /* !dumprestore SRC DST TTL [OPTION...]: on each side, DUMP SRC, then
                       RESTORE DST TTL <that side's own payload> OPTION...; the RESTORE
                       replies are compared (a payload each side wrote, read back by
                       itself); argv holds SRC, DST, TTL and the options */
} ds_kind;

/* Modifier flags of a command line. */
#define DS_SORTED 1u /* @sorted: compare arrays as multisets, at every depth */
#define DS_TYPE 2u   /* @type: compare only the reply's first byte (its type) */
#define DS_FAKE 4u   /* @fake: run on the fake only, compare nothing */
#define DS_NEAR 8u   /* @near: exact, except integer replies may differ by DS_NEAR_MS */
#define DS_IDLE 16u  /* @idle: exact, except the idle time of a four-element entry whose
                        last two elements are integers ([id, fields, idle, deliveries] of
                        XREADGROUP ... CLAIM, [id, consumer, idle, deliveries] of
                        XPENDING's extended form) may differ by DS_NEAR_MS */
#define DS_LEN 32u   /* @len: compare only the reply's first line: an error, integer or
                        status exactly, a bulk string's or an array's length (random
                        members with a count: SRANDMEMBER, HRANDFIELD, SPOP ...) */
#define DS_NEAR_MS 25 /* how far apart two clocks' readings of one moment may land */

/* One parsed line.  Owns argv, argvlen and text. */
typedef struct ds_line {
    ds_kind kind;       /* command, sleep or cluster */
    int lineno;         /* 1-based line number in the script */
    int client;         /* DS_COMMAND: which client runs it, 1..DS_MAX_CLIENTS */
    unsigned flags;     /* DS_COMMAND: DS_SORTED | DS_TYPE | DS_FAKE | DS_NEAR | DS_IDLE | DS_LEN */
    long sleep_ms;      /* DS_SLEEP: milliseconds of wall clock to sleep */
    int argc;           /* DS_COMMAND: number of arguments, >= 1 */
    char **argv;        /* DS_COMMAND: NUL-terminated copies, binary safe via argvlen */
    size_t *argvlen;    /* DS_COMMAND: byte length of each argument */
    char *text;         /* the line as written, without surrounding white space */
    int has_expected;   /* DS_COMMAND in a transcript: a "= reply" line follows it */
    char *expected;     /* that reply's raw bytes (unescaped), expected_len of them */
    size_t expected_len;
} ds_line;

/* A parsed script. */
typedef struct ds_script {
    char *name;         /* the file name, as given, for messages */
    int cluster;        /* the script starts with !cluster */
    int nclients;       /* the highest client number any line uses (at least 1) */
    size_t count;       /* number of lines below */
    ds_line *lines;     /* commands and sleeps, in file order */
} ds_script;

/* Where and why a line is malformed. */
typedef struct ds_error {
    int col;            /* 1-based byte column of the offending token */
    char msg[200];      /* what is wrong, without position */
} ds_error;

/* Parses one line (without its newline; a trailing \r is ignored).  Returns 1 when the
 * line holds a command or directive (*out is filled, release it with ds_line_free), 0 for
 * a blank or comment line, -1 for a malformed one (*err is filled). */
int ds_parse_line(const char *line, int lineno, ds_line *out, ds_error *err);
void ds_line_free(ds_line *l);

/* Parses a whole script held in memory (len bytes); name is used in messages.  Every
 * malformed line is reported on errout as "name:line:col: error: message" (errout may be
 * NULL for silence).  Returns the script, or NULL if any line was malformed.
 *
 * A line whose first non-blank character is '=' is a recorded reply (a transcript, see
 * tests/diff/README.md): "= " then the raw RESP reply escaped as ds_escape writes it.  It
 * belongs to the command line just before it (ds_line.expected); one after anything else,
 * a second one, or one that does not unescape is an error. */
ds_script *ds_parse_text(const char *name, const char *text, size_t len, FILE *errout);
/* Reads and parses a script file; NULL (reported on errout) when unreadable/malformed. */
ds_script *ds_parse_file(const char *path, FILE *errout);
void ds_script_free(ds_script *s);

/* ----- Comparing replies -------------------------------------------------------------- */

/* Rewrites one raw RESP2 reply with the elements of every array sorted by their raw
 * encoding (inner arrays first), so that two replies that differ only in hash-table order
 * become equal.  Appends to *out; returns 0, or -1 if raw is not one complete reply. */
int ds_sort_reply(const char *raw, size_t len, rh_buf *out);

/* Whether two raw replies count as equal under flags (DS_SORTED, DS_TYPE, DS_NEAR, DS_IDLE,
 * DS_LEN). */
int ds_replies_equal(unsigned flags, const char *a, size_t alen, const char *b, size_t blen);

/* Appends a readable escape of p: printable ASCII as is, backslash as \\, CR, LF and TAB
 * as \r \n \t, every other byte as \xHH. */
void ds_escape(const char *p, size_t len, rh_buf *out);
/* Prints "  label: <p escaped as ds_escape writes it>" and a newline, shortened past max
 * bytes with "... (N bytes in all)": a reply in the differential tools' reports. */
void ds_show(const char *label, const char *p, size_t len, size_t max);
/* Closes one client's two connections, to the real server and to the fake (either may be
 * NULL), and sets both to NULL: a disconnect; the next use reconnects. */
void ds_close_pair(rh_conn **real, fr_client **fake);
/* The reverse of ds_escape (\\ \r \n \t \xHH, other bytes as they are): appends the
 * bytes to *out.  Returns 0, or -1 (the byte offset in *bad, may be NULL) for a backslash
 * followed by anything else. */
int ds_unescape(const char *p, size_t len, rh_buf *out, size_t *bad);

#ifdef __cplusplus
}
#endif

#endif /* DIFF_SCRIPT_H */
