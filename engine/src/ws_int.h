/* ws_int.h -- what libwsim's backend files share: the connection object every
 * implementation embeds, its operations, and a small arena for reply trees.
 * Internal names start with wsi_. */
#ifndef WS_INT_H
#define WS_INT_H

#include <stddef.h>
#include <stdint.h>

#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "ws_conn.h"

/* ----- Arena: reply trees that live until the next round trip ------------------------ */

typedef struct wsi_arena_block wsi_arena_block;

/* Bump allocation in blocks that never move, so a tree can point into earlier ones. */
typedef struct wsi_arena {
    wsi_arena_block *head; /* the block being filled; older blocks follow it */
} wsi_arena;

/* size bytes aligned for any object (out of memory aborts, as everywhere in libwsim). */
void *wsi_arena_alloc(wsi_arena *a, size_t size);
/* A NUL-terminated copy of len bytes. */
char *wsi_arena_strdup(wsi_arena *a, const char *s, size_t len);
/* Forgets every allocation; keeps the first block for reuse. */
void wsi_arena_reset(wsi_arena *a);
void wsi_arena_free(wsi_arena *a);

/* ----- The connection object ---------------------------------------------------------- */

/* What one implementation does; ws_conn.c does everything common around it. */
typedef struct wsi_conn_ops {
    /* Sends commands[0..n) (n >= 1, already checked) and fills replies[i] with what the
     * server answered (NULL if nothing) and fates[i] (preset to WS_FATE_UNSENT).  May set
     * c->note.  Returns 0 or a WS_E* code; on a code that kills the connection it has
     * called wsi_conn_fail with dead = 1. */
    int (*pipeline)(ws_conn *c, size_t n, const fr_command *commands,
                    const fr_reply **replies, unsigned char *fates);
    /* Frees the implementation's resources and c itself. */
    void (*close)(ws_conn *c);
    /* Up to max pushes that arrived (see ws_conn_pushes), waiting at most timeout_ms for
     * the first; *n of them in out.  NULL: the backend has none.  0 or a WS_E* code. */
    int (*pushes)(ws_conn *c, int timeout_ms, size_t max, const fr_reply **out, size_t *n);
} wsi_conn_ops;

/* The common head of every connection; each implementation's struct starts with it. */
struct ws_conn {
    const wsi_conn_ops *ops; /* the implementation */
    char label[64];          /* the name in traces */
    ws_conn_stats stats;     /* counters (implementations bump sent/received) */
    int err;                 /* the last failure's code, 0 if none yet */
    char errstr[128];        /* its message */
    int dead;                /* a fatal failure happened: refuse every later call */
    int faulty;              /* made by ws_conn_faulty (ws_fault_* accept it) */
    ws_trace_fn trace;       /* the trace hook, or NULL */
    void *trace_ud;          /* its user data */
    char note[96];           /* what a fault did in the current round trip, for the trace */
    const fr_reply **rbuf;   /* per-round-trip reply slots (trace and failure paths) */
    unsigned char *fbuf;     /* per-round-trip fates */
    size_t bufcap;           /* slots in rbuf and fbuf */
};

/* Sets up the common head (label, no error). */
void wsi_conn_init(ws_conn *c, const wsi_conn_ops *ops, const char *label);
/* Records a failure: err = code, errstr = the formatted message (or ws_strerror(code)
 * when fmt is NULL), dead when dead != 0.  Returns code, so callers can return it. */
int wsi_conn_fail(ws_conn *c, int code, int dead, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Case-insensitive equality of a command name with a NUL-terminated name. */
int wsi_name_eq(const char *arg, size_t len, const char *name);
/* v in decimal at the end of buf[24] (what "%lld" writes, without the printf machinery:
 * numbers go into commands, frames and reply texts at every step); returns where the
 * digits start, which run to buf + 24. */
char *wsi_decimal(char buf[24], long long v);
/* src into dst, cut to size - 1 bytes, NUL-terminated: what snprintf "%s" does, without its
 * machinery (labels are copied at every connection and every round trip). */
void wsi_copy_str(char *dst, size_t size, const char *src);
/* The redis-cli escape of byte ch inside "..." into out: 2 bytes (\\ \" \n \r \t, and \a \b
 * when letters_ab) or 4 (\xHH); 0 when ch stands as it is.  Replies' text uses the
 * letters, commands' text (the trace's notation) writes \x07 \x08. */
size_t wsi_escape(unsigned char ch, int letters_ab, char out[4]);
/* p[0..n) between double quotes, escaped as wsi_escape says, handed to put(ud, bytes, len)
 * a piece at a time: runs of plain bytes go at once (commands and replies are written out
 * at every round trip). */
void wsi_quote(const char *p, size_t n, int letters_ab,
               void (*put)(void *ud, const char *bytes, size_t len), void *ud);

#endif /* WS_INT_H */
