/* wsr_resp.h -- RESP2 and RESP3 values as a server writes them: where one ends, and its
 * tree.  Used by the recording's reader (a reply in a recording must be whole RESP), by the
 * recording proxy (it cuts a server's byte stream into replies and pushes) and by the
 * traffic checker (it reads the replies).  No I/O, no global state; fuzzed through
 * fuzz_recording.
 *
 * What is RESP here (the types of Redis 7's resp3 spec, each line ending in CRLF):
 *   + status, - error, : integer, $ bulk ($-1 nil), * array (*-1 nil array),
 *   _ null, , double, # boolean (t or f), ( big number, ! bulk error, = verbatim string,
 *   % map (n pairs), ~ set, > push, | attribute (n pairs, then the value it describes:
 *   framed together with that value, as one).
 * Lengths and counts are decimal: an optional '-' only for -1 (nil), no '+', digits up to
 * 2^63-1 (a length beyond the bytes given is simply "incomplete").  Simple lines (+ - : _ ,
 * # () hold no CR or LF.  Nesting deeper than WSR_RESP_MAX_DEPTH is refused (a stack bound
 * for untrusted bytes; no server writes that deep).
 *
 * Prefix wsr_.  Nothing allocates except wsr_resp_parse (malloc; NULL when out of
 * memory). */
#ifndef WSR_RESP_H
#define WSR_RESP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WSR_RESP_MAX_DEPTH 128

/* How many bytes the first value of p[0..n) takes: > 0; 0 when the bytes are a correct
 * beginning that has not ended yet (wait for more); -1 when they are not RESP.  With
 * `why` given, a -1 sets *why to a short reason ("unknown type byte 'x'", ...), a static
 * string. */
long long wsr_resp_len(const char *p, size_t n, const char **why);

/* Whether p[0..n) is zero or more whole values and nothing else: 1, or 0 (with *why when
 * given; *at gets the offset of the value that fails when at is given). */
int wsr_resp_whole(const char *p, size_t n, const char **why, size_t *at);

/* One value of a parsed reply; strings point into the bytes parsed (not NUL-terminated). */
typedef struct wsr_value {
    char type;                 /* the type byte: + - : $ * _ , # ( ! = % ~ > */
    int nil;                   /* $-1 or *-1 (RESP2's nils; '_' is its own type) */
    long long integer;         /* ':' its value; '#' 1 or 0 */
    const char *str;           /* + - $ , ( ! = : the text (a verbatim string's "txt:"
                                  prefix included); NULL for aggregates */
    size_t len;                /* bytes in str */
    struct wsr_value *elements;/* * % ~ > : the elements (a map's as key, value, key, ...) */
    size_t count;              /* elements (a map's: 2 x pairs) */
    struct wsr_value *attribute; /* the '|' attribute that came before it, or NULL */
} wsr_value;

/* Parses the first value of p[0..n) into a tree: *used gets its length (when used is
 * given).  Returns the tree (one malloc'd block: free() it), or NULL when the bytes are not
 * one whole value (wsr_resp_len says why) or memory ran out (*oom set to 1 when given). */
wsr_value *wsr_resp_parse(const char *p, size_t n, size_t *used, int *oom);

#ifdef __cplusplus
}
#endif

#endif /* WSR_RESP_H */
