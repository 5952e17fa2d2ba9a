/* wsm_choice.h -- one source of choices for the generator of consumer runs (wsm_gen.h), with
 * four back ends, so that random runs, exhaustive runs, fuzzing and shrinking explore one
 * space:
 *
 *   CH_PRNG      our own seeded generator (splitmix64; never rand()): ch_int(lo, hi) is
 *                lo + next() % (hi - lo + 1).
 *   CH_ODOMETER  every choice vector in order, as an odometer counts: the first run takes
 *                lo everywhere; ch_odo_next() then raises the last digit that can still
 *                rise and cuts the vector after it, so the runs come out in lexicographic
 *                order of their vectors and each one exactly once.  Bounded: a digit never
 *                exceeds `max_value` (above lo), a run never makes more than `max_depth`
 *                choices (later ones take lo and set `truncated`).
 *   CH_FDP       fuzz bytes, read exactly as libFuzzer's FuzzedDataProvider reads them:
 *                ch_int(lo, hi) is ConsumeIntegralInRange<uint64_t>(lo, hi) (bytes taken
 *                from the END of the data, most significant first, while the range has
 *                bits left, then modulo range + 1; lo when the data is exhausted);
 *                ch_bool is ConsumeBool (1 & one byte from the end); ch_pick(n) is
 *                PickValueInArray (ConsumeIntegralInRange<size_t>(0, n - 1)); ch_bytes is
 *                ConsumeBytes (from the START).  A fuzz target written with
 *                FuzzedDataProvider and one written with this header see the same values.
 *   CH_REPLAY    a recorded vector played back: choice i takes value i (clamped to its
 *                range; lo past the end).  Shrinking edits a recorded vector and replays.
 *
 * Every back end records the choices made (ch_recorded): offset from lo, range, and how
 * FuzzedDataProvider would have read it, so any run -- random, exhaustive or replayed --
 * can be written back as fuzz bytes (ch_to_fdp) that replay it under CH_FDP.
 *
 * Header only (static inline): the fuzz target, the tests, the benchmark and the wsim tool
 * include it without a library.  Out of memory while recording aborts: a choice source
 * that silently forgot a choice would replay a different run.
 */
#ifndef WSM_CHOICE_H
#define WSM_CHOICE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsi_splitmix.h"
#include "wsi_alloc.h"

#ifdef __cplusplus
extern "C" {
#endif

enum ch_kind {
    CH_PRNG = 1, /* seeded splitmix64 */
    CH_ODOMETER, /* exhaustive, in order */
    CH_FDP,      /* fuzz bytes, FuzzedDataProvider's reading */
    CH_REPLAY,   /* a recorded vector */
};

/* How FuzzedDataProvider consumed a choice: which end, and how many bytes at most. */
enum ch_how {
    CH_HOW_INT = 0,   /* ConsumeIntegralInRange<uint64_t>: from the end, up to 8 bytes */
    CH_HOW_BOOL = 1,  /* ConsumeBool: one byte from the end, low bit */
    CH_HOW_BYTE = 2,  /* one byte of ConsumeBytes: from the start */
};

/* One recorded choice. */
typedef struct ch_rec {
    uint64_t value; /* the choice, as an offset from lo (0..range) */
    uint64_t range; /* hi - lo */
    unsigned how;   /* enum ch_how */
} ch_rec;

typedef struct ch {
    int kind;                /* enum ch_kind */
    /* CH_PRNG */
    uint64_t state;          /* splitmix64 state */
    /* CH_FDP */
    const uint8_t *data;     /* the fuzz input (not owned) */
    size_t front;            /* bytes taken from the start so far */
    size_t remaining;        /* FDP's remaining_bytes_: data[front..remaining) is unread */
    /* CH_ODOMETER */
    uint64_t *odo_val;       /* the current vector (offsets) */
    uint64_t *odo_max;       /* per digit: the largest offset it may take in this run */
    size_t odo_n, odo_cap;   /* digits fixed so far */
    size_t max_depth;        /* at most this many choices per run (0: 64) */
    uint64_t max_value;      /* a digit's offset never exceeds this (0: 3) */
    int truncated;           /* the run wanted more than max_depth choices */
    /* CH_REPLAY */
    const uint64_t *rep;     /* offsets to play back (not owned) */
    size_t nrep;
    /* all back ends */
    size_t pos;              /* choices made in this run */
    int exhausted;           /* FDP: a choice found no byte left; REPLAY: past the end */
    ch_rec *rec;             /* what was chosen, in order (NULL when not recording) */
    size_t nrec, caprec;
    int record;              /* keep rec */
    /* called with each choice as it is made (offset, range), or NULL: a process that may
     * die mid-run streams its choices out this way */
    void (*on_choice)(void *ud, uint64_t value, uint64_t range);
    void *on_ud;
} ch;

/* ----- Making a source ------------------------------------------------------------------ */

/* What every ch_init_* does first: an empty source of the given kind (enum ch_kind),
 * recording its choices when record is set. */
static inline void ch_init_(ch *c, int kind, int record)
{
    memset(c, 0, sizeof *c);
    c->kind = kind;
    c->record = record;
}

/* A seeded source; record: keep every choice (ch_recorded).  Free with ch_free. */
static inline void ch_init_prng(ch *c, uint64_t seed, int record)
{
    ch_init_(c, CH_PRNG, record);
    c->state = seed;
}

/* Fuzz bytes (data must outlive the source). */
static inline void ch_init_fdp(ch *c, const uint8_t *data, size_t size, int record)
{
    ch_init_(c, CH_FDP, record);
    c->data = data;
    c->remaining = size;
}

/* A recorded vector of offsets (ch_rec.value), played back; vals must outlive c. */
static inline void ch_init_replay(ch *c, const uint64_t *vals, size_t n, int record)
{
    ch_init_(c, CH_REPLAY, record);
    c->rep = vals;
    c->nrep = n;
}

/* The odometer at its first vector (all lo); max_depth / max_value 0 take the defaults
 * (64 choices, offsets 0..3).  Run the generator, then ch_odo_next, until it says 0. */
static inline void ch_init_odometer(ch *c, size_t max_depth, uint64_t max_value, int record)
{
    ch_init_(c, CH_ODOMETER, record);
    c->max_depth = max_depth ? max_depth : 64;
    c->max_value = max_value ? max_value : 3;
}

static inline void ch_free(ch *c)
{
    wsi_free(c->rec);
    wsi_free(c->odo_val);
    wsi_free(c->odo_max);
    c->rec = NULL;
    c->odo_val = c->odo_max = NULL;
    c->nrec = c->caprec = c->odo_n = c->odo_cap = 0;
}

/* Forgets the choices recorded so far (the source itself goes on). */
static inline void ch_forget(ch *c) { c->nrec = 0; }

/* Out of memory: libwsm's rule (wsm.h), through common/'s family. */
static inline void ch_oom_(void) { wsi_oom("libwsm"); }

static inline void ch_note_(ch *c, uint64_t value, uint64_t range, unsigned how)
{
    c->pos++;
    if (c->on_choice) c->on_choice(c->on_ud, value, range);
    if (!c->record) return;
    if (c->nrec == c->caprec) {
        size_t cap = c->caprec ? c->caprec * 2 : 64;
        ch_rec *r = (ch_rec *)wsi_realloc(c->rec, cap * sizeof *r);
        if (!r) ch_oom_();
        c->rec = r;
        c->caprec = cap;
    }
    c->rec[c->nrec].value = value;
    c->rec[c->nrec].range = range;
    c->rec[c->nrec].how = how;
    c->nrec++;
}

/* FuzzedDataProvider::ConsumeIntegralInRange with sizeof(T) == width bytes, as an offset
 * in 0..range. */
static inline uint64_t ch_fdp_range_(ch *c, uint64_t range, unsigned width)
{
    uint64_t result = 0;
    size_t offset = 0;
    if (c->remaining == c->front && range) c->exhausted = 1;
    while (offset < (size_t)width * 8 && (range >> offset) > 0 && c->remaining != c->front) {
        --c->remaining;
        result = (result << 8) | c->data[c->remaining];
        offset += 8;
    }
    if (range != UINT64_MAX) result %= range + 1;
    return result;
}

/* One choice as an offset in 0..range, from whichever back end. */
static inline uint64_t ch_draw_(ch *c, uint64_t range, unsigned how)
{
    uint64_t v = 0;
    switch (c->kind) {
    case CH_PRNG:
        v = wsi_splitmix64(&c->state);
        if (how == CH_HOW_BOOL) v &= 1;
        else if (range != UINT64_MAX) v %= range + 1;
        break;
    case CH_FDP:
        if (how == CH_HOW_BYTE) {
            /* ConsumeBytes: from the start, while anything is left */
            if (c->front < c->remaining) v = c->data[c->front++];
            else c->exhausted = 1;
        } else if (how == CH_HOW_BOOL) {
            v = 1 & ch_fdp_range_(c, 255, 1);
        } else {
            v = ch_fdp_range_(c, range, 8);
        }
        break;
    case CH_REPLAY:
        if (c->pos < c->nrep) v = c->rep[c->pos] > range ? range : c->rep[c->pos];
        else c->exhausted = 1;
        break;
    case CH_ODOMETER: {
        size_t i = c->pos;
        uint64_t cap = range < c->max_value ? range : c->max_value;
        if (i >= c->max_depth) {
            c->truncated = 1;
            v = 0;
            break;
        }
        if (i >= c->odo_n) {
            if (c->odo_n == c->odo_cap) {
                size_t cap2 = c->odo_cap ? c->odo_cap * 2 : 32;
                uint64_t *a = (uint64_t *)wsi_realloc(c->odo_val, cap2 * sizeof *a);
                if (!a) ch_oom_();
                c->odo_val = a;
                a = (uint64_t *)wsi_realloc(c->odo_max, cap2 * sizeof *a);
                if (!a) ch_oom_();
                c->odo_max = a;
                c->odo_cap = cap2;
            }
            c->odo_val[i] = 0;
            c->odo_n = i + 1;
        }
        c->odo_max[i] = cap;
        v = c->odo_val[i] > cap ? cap : c->odo_val[i];
        break;
    }
    default: break;
    }
    ch_note_(c, v, range, how);
    return v;
}

/* ----- Choosing ------------------------------------------------------------------------- */

/* An integer in [lo, hi] (lo <= hi; aborts otherwise, as FuzzedDataProvider does). */
static inline uint64_t ch_int(ch *c, uint64_t lo, uint64_t hi)
{
    if (lo > hi) abort();
    return lo + ch_draw_(c, hi - lo, CH_HOW_INT);
}

/* 0 or 1 (FuzzedDataProvider::ConsumeBool). */
static inline int ch_bool(ch *c) { return (int)ch_draw_(c, 1, CH_HOW_BOOL); }

/* One of n things, 0..n-1 (PickValueInArray; n >= 1). */
static inline size_t ch_pick(ch *c, size_t n)
{
    if (n == 0) abort();
    return (size_t)ch_int(c, 0, (uint64_t)n - 1);
}

/* One of n things with weights w[0..n) (sum > 0): one ch_int over the total, so that 0
 * -- and so shrinking -- picks the first thing with a non-zero weight. */
static inline size_t ch_weighted(ch *c, const unsigned *w, size_t n)
{
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += w[i];
    if (total == 0) abort();
    uint64_t v = ch_int(c, 0, total - 1);
    for (size_t i = 0; i < n; i++) {
        if (v < w[i]) return i;
        v -= w[i];
    }
    return n - 1;
}

/* Up to n bytes into out (FuzzedDataProvider::ConsumeBytes: from the start of the data,
 * fewer when less is left); the other back ends draw n bytes.  Returns how many. */
static inline size_t ch_bytes(ch *c, void *out, size_t n)
{
    unsigned char *o = (unsigned char *)out;
    size_t k = 0;
    if (c->kind == CH_FDP) {
        size_t left = c->remaining - c->front;
        if (n > left) n = left;
    }
    for (; k < n; k++) o[k] = (unsigned char)ch_draw_(c, 255, CH_HOW_BYTE);
    return k;
}

/* ----- Runs, records, odometer ---------------------------------------------------------- */

/* The choices recorded so far. */
static inline const ch_rec *ch_recorded(const ch *c, size_t *n)
{
    *n = c->nrec;
    return c->rec;
}

/* Odometer: moves to the next vector (call after a complete run).  Returns 1, or 0 when
 * every vector within the bounds has been run.  The recorded choices are forgotten. */
static inline int ch_odo_next(ch *c)
{
    size_t used = c->pos < c->odo_n ? c->pos : c->odo_n;
    c->pos = 0;
    c->truncated = 0;
    c->nrec = 0;
    for (size_t i = used; i-- > 0;) {
        if (c->odo_val[i] < c->odo_max[i]) {
            c->odo_val[i]++;
            c->odo_n = i + 1;
            return 1;
        }
    }
    c->odo_n = 0;
    return 0;
}

/* Starts the same source's next run: REPLAY from its first value again, FDP from the
 * whole input again; PRNG and the odometer go on (use ch_odo_next for the latter). */
static inline void ch_rewind(ch *c, size_t size)
{
    c->pos = 0;
    c->nrec = 0;
    c->exhausted = 0;
    if (c->kind == CH_FDP) {
        c->front = 0;
        c->remaining = size;
    }
}

/* How many bytes FuzzedDataProvider reads for a choice of this range and kind. */
static inline size_t ch_fdp_width(uint64_t range, unsigned how)
{
    if (how == CH_HOW_BOOL || how == CH_HOW_BYTE) return 1;
    size_t k = 0;
    for (size_t offset = 0; offset < 64 && (range >> offset) > 0; offset += 8) k++;
    return k;
}

/* Writes recorded choices as fuzz bytes that CH_FDP reads back as the same choices: the
 * ConsumeBytes ones at the start in order, the others from the end backwards, each most
 * significant byte last-but-first as FDP reads it.  Trailing choices that took lo need no
 * byte (FDP answers lo once the data is used up) and are left out.  Returns the length;
 * *out is heap memory (wsi_free() it), never NULL. */
static inline size_t ch_to_fdp(const ch_rec *rec, size_t n, uint8_t **out)
{
    /* drop the trailing zeros that need no bytes (not ConsumeBytes ones: those count) */
    while (n > 0 && rec[n - 1].value == 0 && rec[n - 1].how != CH_HOW_BYTE) n--;
    size_t nfront = 0, nend = 0;
    for (size_t i = 0; i < n; i++) {
        if (rec[i].how == CH_HOW_BYTE) nfront++;
        else nend += ch_fdp_width(rec[i].range, rec[i].how);
    }
    uint8_t *buf = (uint8_t *)wsi_malloc(nfront + nend + 1);
    if (!buf) ch_oom_();
    size_t f = 0, e = nfront + nend; /* the end part is filled from its last byte down */
    for (size_t i = 0; i < n; i++) {
        if (rec[i].how == CH_HOW_BYTE) {
            buf[f++] = (uint8_t)rec[i].value;
            continue;
        }
        size_t k = ch_fdp_width(rec[i].range, rec[i].how);
        /* FDP reads data[e-1] first, as the most significant byte */
        for (size_t b = 0; b < k; b++) buf[--e] = (uint8_t)(rec[i].value >> (8 * (k - 1 - b)));
    }
    *out = buf;
    return nfront + nend;
}

#ifdef __cplusplus
}
#endif

#endif /* WSM_CHOICE_H */
