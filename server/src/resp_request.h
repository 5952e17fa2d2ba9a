/* resp_request.h -- an incremental parser of RESP2 requests, as redis-server 7.0 reads
 * them: multibulk commands (`*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n`) and inline commands
 * (`ECHO hi\r\n`), arriving in pieces of any size.
 *
 * The contract is redis-server 7.0.15's own reading of a query buffer, observable byte for
 * byte, with the same limits and the same protocol error texts:
 *
 * - A request whose first byte is '*' is multibulk, anything else is inline.
 * - Multibulk: the count line `*N\r` is read up to the first '\r' (a NUL byte before it
 *   hides it: the parser waits, as Redis's strchr does), needs one more byte after the '\r'
 *   (not checked to be '\n'), and N is a strict decimal (no '+', no leading zero, no
 *   spaces).  N > INT_MAX is "invalid multibulk length"; N > 10 before authentication is
 *   "unauthenticated multibulk length"; N <= 0 is an empty command (skipped).  Each
 *   argument is `$L\r?` then L bytes then two bytes that are skipped unchecked.  Not '$' is
 *   "expected '$', got 'c'"; L not strict, negative or above the proto-max-bulk-len limit
 *   is "invalid bulk length"; L > 16384 before authentication is "unauthenticated bulk
 *   length".
 * - Inline: a line ends at '\n' (a '\r' before it is dropped; a NUL byte before the
 *   '\n' hides it, as Redis's strchr does, and the request waits) and splits as Redis's
 *   sdssplitargs splits it ("double quotes" with \n \r \t \b \a \\ \" \xHH escapes,
 *   'single quotes' with \' only; a closing quote must be followed by a space or the
 *   end).  A line that does not split is "unbalanced quotes in
 *   request"; a blank line is an empty command (skipped).
 * - No line end within more than RR_INLINE_MAX buffered bytes: "too big inline request",
 *   "too big mbulk count string" or "too big bulk count string".  Redis reads at most
 *   RR_IOBUF_LEN bytes at a time and checks after every read; a server that wants the same
 *   verdicts on the same byte stream reads as rr_read_size() says and calls rr_next until
 *   it answers RR_AGAIN after every read.
 *
 * After a protocol error the parser is dead: the server answers the error (rr_error()'s
 * text, "ERR Protocol error: ..."), after the replies to the commands before it, and closes
 * the connection, as Redis does.
 *
 * Memory: the parser owns its buffer.  A command's argument views stay valid until the
 * next rr_next, rr_write_ptr or rr_free call.  Nothing else is allocated per command in
 * multibulk mode (arguments point into the buffer); inline arguments are unescaped into a
 * scratch buffer that is reused.
 */
#ifndef RESP_REQUEST_H
#define RESP_REQUEST_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RR_INLINE_MAX (64 * 1024)          /* Redis's PROTO_INLINE_MAX_SIZE */
#define RR_IOBUF_LEN (16 * 1024)           /* Redis's PROTO_IOBUF_LEN: one read's size */
#define RR_BIG_ARG (32 * 1024)             /* Redis's PROTO_MBULK_BIG_ARG: read it whole */
#define RR_KEEP_ARGS 1024                  /* argument slots an idle parser keeps */
#define RR_DEFAULT_MAX_BULK (512LL * 1024 * 1024) /* proto-max-bulk-len's default */
#define RR_UNAUTH_MAX_ARGS 10              /* multibulk count allowed before AUTH */
#define RR_UNAUTH_MAX_BULK 16384           /* bulk length allowed before AUTH */

/* What rr_next found. */
typedef enum rr_status {
    RR_ERROR = -1, /* protocol error: see rr_error(); the parser is dead */
    RR_AGAIN = 0,  /* no complete command in the buffer: read more */
    RR_COMMAND = 1 /* a command: rr_argc/rr_argv/rr_argvlen until the next call */
} rr_status;

/* One connection's parser.  Zero-initialise it (or rr_init), set the two limits whenever
 * they change, release it with rr_free.  Fields below the limits are private. */
typedef struct rr_parser {
    long long max_bulk_len; /* proto-max-bulk-len: longer bulks are protocol errors */
    int auth_required;      /* the connection must still AUTH: the tighter limits apply */

    char *buf;              /* received bytes; [0, start) are consumed and may be dropped */
    size_t len, cap;        /* bytes received, bytes allocated */
    size_t start;           /* the first byte of the request being parsed */
    size_t pos;             /* how far the current request has been parsed */
    int reqtype;            /* 0 between requests, '*' multibulk, 'i' inline */
    long long mb_left;      /* multibulk arguments still to come, 0 before the count */
    long long bulk_len;     /* the current argument's length, -1 before its '$' line */
    size_t argc;            /* arguments of the current request collected so far */
    size_t arg_cap;         /* room in arg_off/arg_len/argv */
    size_t *arg_off;        /* each argument's offset from start (multibulk) */
    size_t *arg_len;        /* each argument's length */
    const char **argv;      /* views handed out by rr_next */
    char *scratch;          /* unescaped inline arguments */
    size_t scratch_cap;     /* bytes allocated in scratch */
    size_t last_start;      /* where the request rr_next returned last began (rr_unread) */
    size_t big_done;        /* a big argument (>= RR_BIG_ARG) that ended the buffer, its
                               length, until rr_take_big_done */
    int dead;               /* a protocol error was reported */
    char err[96];           /* the error text, without the leading '-' */
} rr_parser;

/* Makes p an empty parser with Redis's default limits (no authentication required). */
/* Redis's string2ll: an optional '-', then digits without a leading zero ("0" alone is
 * fine), nothing else, within the long long range.  1 on success (the parser's lengths
 * and counts, and the server's integer arguments, are read with it). */
int rr_string2ll(const char *s, size_t n, long long *out);

void rr_init(rr_parser *p);
/* Frees p's memory; p may be reused after rr_init. */
void rr_free(rr_parser *p);

/* How many bytes the next read should ask for to see the stream as redis-server does:
 * RR_IOBUF_LEN, or the rest of a big multibulk argument (>= RR_BIG_ARG) being received. */
size_t rr_read_size(const rr_parser *p);

/* Room for at least n more bytes at the end of the buffer; returns where to write them
 * (then rr_commit the count written), or NULL when out of memory.  It may move the
 * buffer: argument views from an earlier rr_next die. */
char *rr_write_ptr(rr_parser *p, size_t n);
/* Adds the n bytes just written at rr_write_ptr's pointer. */
void rr_commit(rr_parser *p, size_t n);
/* Copies n bytes in (rr_write_ptr + memcpy + rr_commit); 0, or -1 when out of memory. */
int rr_feed(rr_parser *p, const void *data, size_t n);

/* Parses the next request.  RR_COMMAND: rr_argc() >= 1 arguments are ready (empty
 * requests are skipped silently, as Redis skips them).  RR_AGAIN: the rest has not
 * arrived.  RR_ERROR: a protocol error (also on every later call); the commands before
 * it were returned first.  Out of memory while collecting arguments is reported as
 * RR_ERROR with the text "ERR out of memory". */
rr_status rr_next(rr_parser *p);

/* Whether a big argument (>= RR_BIG_ARG) is being received: its bytes in the buffer so
 * far (*have) and those still to come, its CRLF included (*remaining).  For the model of
 * Redis's query buffer sizes (querybuf.c). */
int rr_big_arg(const rr_parser *p, size_t *have, size_t *remaining);
/* The length of the big argument that last ended the buffer when it was parsed (Redis
 * then gives the client a fresh query buffer of that size), 0 if none since the last
 * call. */
size_t rr_take_big_done(rr_parser *p);

/* Puts the command rr_next just returned back: the next rr_next returns it again (a
 * command held before it runs, its bytes still in the query buffer).  Only right after
 * rr_next returned RR_COMMAND. */
void rr_unread(rr_parser *p);

/* The last command's arguments: argv[i] is argvlen[i] bytes (not NUL-terminated). */
int rr_argc(const rr_parser *p);
const char *const *rr_argv(const rr_parser *p);
const size_t *rr_argvlen(const rr_parser *p);

/* The protocol error, "ERR Protocol error: ..." (no leading '-', no CRLF); "" if none. */
const char *rr_error(const rr_parser *p);

/* Bytes held for requests not yet returned (what Redis's query buffer length would be,
 * checked against client-query-buffer-limit). */
size_t rr_pending(const rr_parser *p);

/* Splits an inline line of len bytes as Redis's sdssplitargs does (see the header
 * comment; the line stops at a NUL byte): libfakeredis's fr_split_args, the one splitter
 * of the project.  The unescaped arguments are written to out
 * (at least len bytes), their offsets and lengths to off/lens (at most max entries, max
 * >= len/2+1 always suffices).  Returns the argument count, or -1 for unbalanced quotes. */
int rr_split_inline(const char *line, size_t len, char *out, size_t *off, size_t *lens,
                    size_t max);

#ifdef __cplusplus
}
#endif

#endif /* RESP_REQUEST_H */
