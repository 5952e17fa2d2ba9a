/* picture_svg.c -- the flush diagrams as SVG (wsc_picture.h, docs/wsim-diagram.md).
 *
 * Reads the engine's flush records through ws_sim.h's accessors (ws_sim_flush and
 * friends: the same data ws_sim_diagram prints as text) and lays each flush out as the
 * seed page "Window" draws one: deliveries on the left, the round trip's commands on the
 * right, arrows between.  Everything is placed on a grid of fixed row heights, so nothing
 * overlaps however many commands a flush has: the picture grows downwards.  Coordinates
 * are integers and text is measured by counting characters of a monospace font, so the
 * output depends on the run only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wsi_alloc.h"
#include "wsi_buf.h"
#include "wsc_picture.h"

/* The grid, in pixels.  A monospace glyph of FONT px is at most 0.6 em wide: CHARW10 is
 * ten times that, rounded up, for integer arithmetic. */
enum {
    FONT = 12,
    CHARW10 = 73,
    MARGIN = 16,
    LEFT_W = 300,            /* the deliveries' column */
    GAP = 110,               /* between the columns: the arrows */
    RIGHT_W = 660,           /* the round trips' column */
    TAG_W = 250,             /* a command row's tag (what the command is, whose) */
    ROW = 20,                /* one command */
    PIPE_GAP = 8,            /* between two pipelines of a round trip */
    RT_HEAD = 24,            /* a round trip's heading inside its box */
    RT_GAP = 14,             /* between two round trips */
    BOX_H = 38,              /* one delivery */
    BOX_GAP = 6,
    FLUSH_HEAD = 46,         /* a flush's heading and the columns' captions */
    FLUSH_GAP = 28,
    WIDTH = MARGIN + LEFT_W + GAP + RIGHT_W + MARGIN,
    MAX_PX = 32000,          /* the longest side a picture asks to be drawn at: librsvg
                                refuses images over 32,767 px, so a taller picture asks for
                                a smaller width and height than its viewBox (it scales) */
    LEFT_X = MARGIN,
    RIGHT_X = MARGIN + LEFT_W + GAP,
};

/* How many characters fit in px pixels. */
static size_t fit(int px) { return px > 0 ? (size_t)px * 10 / CHARW10 : 0; }

/* The length of the UTF-8 sequence starting at s (at most n bytes), or 0 when it is not
 * one (then the byte is shown as \xNN). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t l = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3
               : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
    if (l == 0 || l > n) return 0;
    for (size_t i = 1; i < l; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if (l == 2 && s[0] < 0xc2) return 0; /* overlong */
    if (l == 3 && s[0] == 0xe0 && s[1] < 0xa0) return 0;
    if (l == 3 && s[0] == 0xed && s[1] >= 0xa0) return 0; /* surrogates */
    if (l == 4 && (s[0] > 0xf4 || (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
        return 0;
    return l;
}

/* Writes s escaped for XML text and attribute values, at most max characters (a \xNN
 * counts as four); a longer s is cut and ends with an ellipsis. */
static void esc(FILE *f, const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p), shown = 0;
    for (size_t i = 0; i < n;) {
        size_t l = utf8_len(p + i, n - i);
        size_t w = l && p[i] >= 0x20 && p[i] != 0x7f ? 1 : 4;
        if (shown + w > max || (shown + w == max && i + (l ? l : 1) < n)) {
            fputs("\xe2\x80\xa6", f); /* U+2026 */
            return;
        }
        if (w == 4) {
            fprintf(f, "\\x%02x", p[i]);
            i++;
        } else if (p[i] == '&') {
            fputs("&amp;", f), i++;
        } else if (p[i] == '<') {
            fputs("&lt;", f), i++;
        } else if (p[i] == '>') {
            fputs("&gt;", f), i++;
        } else if (p[i] == '"') {
            fputs("&quot;", f), i++;
        } else if (p[i] == '\'') {
            fputs("&apos;", f), i++;
        } else {
            fwrite(p + i, 1, l, f);
            i += l;
        }
        shown += w;
    }
}

/* What a command row is, for its colour and its arrow. */
typedef enum rowkind { R_OTHER, R_SEGMENT, R_MULTI, R_EXEC, R_OWN_SETTLE, R_RETRY, R_SETTLE } rowkind;

/* The kind of row a flush command's role makes (segment, MULTI, EXEC, settle ...);
 * R_OTHER for anything else. */
static rowkind kind_of(const char *role)
{
    static const struct { const char *role; rowkind kind; } roles[] = {
        {"segment", R_SEGMENT}, {"MULTI", R_MULTI},     {"EXEC", R_EXEC},
        {"own settle", R_OWN_SETTLE}, {"retry write", R_RETRY}, {"settle", R_SETTLE},
    };
    for (size_t i = 0; role && i < sizeof roles / sizeof *roles; i++)
        if (strcmp(role, roles[i].role) == 0) return roles[i].kind;
    return R_OTHER;
}

/* One command of the flush being drawn, placed. */
typedef struct row {
    ws_flush_command c;
    rowkind kind;
    size_t who;              /* the delivery it came from (index into the flush's), or NONE */
    int y;                   /* its top */
    int atomic;              /* inside a MULTI ... EXEC block */
} row;

#define NONE ((size_t)-1)

/* The flush's deliveries by address, to find a command's delivery in O(log n): a flush
 * can hold thousands.  Only lookups depend on the addresses, never the output. */
typedef struct dref {
    const ws_delivery *d;
    size_t k;                /* its index in the flush's deliveries */
} dref;

/* qsort's order of delivery references, by address (for bsearch in index_of). */
static int dref_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const dref *)a)->d, y = (uintptr_t)((const dref *)b)->d;
    return x < y ? -1 : x > y;
}

/* The index of d among the flush's deliveries, or NONE. */
static size_t index_of(const dref *refs, size_t n, const ws_delivery *d)
{
    if (!d) return NONE;
    dref key = {d, 0};
    const dref *hit = bsearch(&key, refs, n, sizeof *refs, dref_cmp);
    return hit ? hit->k : NONE;
}

/* The id a diagram shows for d: the flush's own record of it, else its raw id. */
static const char *shown_id(const dref *refs, const ws_flush_delivery *dl, size_t n,
                            const ws_delivery *d)
{
    size_t k = index_of(refs, n, d);
    return k != NONE ? dl[k].id : d ? ws_delivery_id(d) : "";
}

/* The fill and stroke of a delivery's box, by its outcome. */
static void outcome_colours(const char *outcome, const char **fill, const char **stroke)
{
    if (!strcmp(outcome, "ack")) *fill = "#e6f4e6", *stroke = "#2e7d32";
    else if (!strcmp(outcome, "drop")) *fill = "#fbe4e2", *stroke = "#c62828";
    else if (!strcmp(outcome, "retry") || !strcmp(outcome, "retry_after"))
        *fill = "#fff0dc", *stroke = "#e65100";
    else *fill = "#eeeeee", *stroke = "#616161";
}

/* The background colour of a row of kind k, or NULL for none. */
static const char *row_fill(rowkind k)
{
    switch (k) {
    case R_SEGMENT: return "#e6f4e6";
    case R_SETTLE:
    case R_OWN_SETTLE: return "#fff4c2";
    case R_RETRY: return "#fff0dc";
    default: return NULL;
    }
}

/* A curved arrow from a delivery's box (its middle at y1) to a command's row (y2). */
static void arrow(FILE *f, int y1, int y2, int settle, const char *stroke, int faint)
{
    int x1 = LEFT_X + LEFT_W, x2 = RIGHT_X - 2;
    fprintf(f,
            "<path d=\"M%d %d C%d %d %d %d %d %d\" fill=\"none\" stroke=\"%s\" "
            "stroke-width=\"1.2\"%s%s marker-end=\"url(#arrow)\"/>\n",
            x1, y1, x1 + GAP / 2, y1, x2 - GAP / 2, y2, x2, y2, settle ? "#8d6e00" : stroke,
            settle ? " stroke-dasharray=\"5 3\"" : "", faint ? " stroke-opacity=\"0.4\"" : "");
}

/* A row's tag: what the command is and whose ("segment of 1-0", "settles 1-0 2-0"), with
 * its fate when it was not applied as sent; heap, or NULL when out of memory. */
static char *row_tag(const row *r, const dref *refs, const ws_flush_delivery *dl, size_t ndl)
{
    wsi_buf b = {0}; /* out of memory sticks: wsi_buf_take gives NULL */
    if (r->kind == R_SETTLE && !r->c.from && r->c.nsettles) {
        wsi_buf_puts(&b, "settles");
        for (size_t q = 0; q < r->c.nsettles; q++) {
            wsi_buf_puts(&b, " ");
            wsi_buf_puts(&b, shown_id(refs, dl, ndl, r->c.settles[q]));
        }
    } else if (r->c.role) {
        wsi_buf_puts(&b, r->c.role);
        if (r->c.from) {
            wsi_buf_puts(&b, " of ");
            wsi_buf_puts(&b, shown_id(refs, dl, ndl, r->c.from));
        }
    }
    if (r->c.fate) {
        wsi_buf_puts(&b, " (");
        wsi_buf_puts(&b, r->c.fate);
        wsi_buf_puts(&b, ")");
    }
    return wsi_buf_take(&b);
}

/* Lays flush i out and draws it with its top at y; returns the y below it, or -1 when out
 * of memory.
 *
 * The layout is one walk down both columns at once.  Each delivery's box sits level with
 * the first row of its own commands (its segment or its atomic block), so its arrow is
 * level too; a delivery with no command of its own (dropped: "settle only") gets a box of
 * its own before the next one, and the command column leaves room for it.  Boxes keep the
 * settle order, rows the sending order: a row is only ever pushed down, never up, so
 * nothing overlaps.  A long flush (more than 16 deliveries) gets one-line boxes. */
static int draw_flush(FILE *f, const ws_sim *sim, size_t i, int y)
{
    ws_flush_info fi;
    ws_sim_flush(sim, i, &fi);
    size_t nd = fi.deliveries, nc = fi.commands;
    ws_flush_delivery *dl = wsi_calloc(nd ? nd : 1, sizeof *dl);
    row *rows = wsi_calloc(nc ? nc : 1, sizeof *rows);
    int *box_y = wsi_calloc(nd ? nd : 1, sizeof *box_y);
    size_t *anchor_of = wsi_malloc((nc ? nc : 1) * sizeof *anchor_of); /* row -> its delivery */
    unsigned char *anchored = wsi_calloc(nd ? nd : 1, 1);
    dref *refs = wsi_malloc((nd ? nd : 1) * sizeof *refs);
    if (!dl || !rows || !box_y || !anchor_of || !anchored || !refs) {
        wsi_free(dl), wsi_free(rows), wsi_free(box_y), wsi_free(anchor_of), wsi_free(anchored), wsi_free(refs);
        return -1;
    }
    for (size_t k = 0; k < nd; k++) {
        ws_sim_flush_delivery(sim, i, k, &dl[k]);
        refs[k] = (dref){dl[k].d, k};
    }
    qsort(refs, nd, sizeof *refs, dref_cmp);
    /* a delivery's anchor is its first command that is not a settle */
    for (size_t k = 0; k < nc; k++) {
        ws_sim_flush_command(sim, i, k, &rows[k].c);
        rows[k].kind = kind_of(rows[k].c.role);
        rows[k].who = index_of(refs, nd, rows[k].c.from);
        anchor_of[k] = NONE;
        size_t w = rows[k].who;
        if (w != NONE && rows[k].kind != R_SETTLE && !anchored[w]) anchor_of[k] = w, anchored[w] = 1;
    }
    int compact = nd > 16;
    int box_h = compact ? ROW : BOX_H, box_gap = compact ? 4 : BOX_GAP;

    /* the heading and the captions */
    fprintf(f, "<g class=\"flush\" id=\"flush-%zu\">\n", i + 1);
    fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"14\" font-weight=\"bold\">flush %llu of ",
            MARGIN, y + 16, (unsigned long long)fi.number);
    esc(f, ws_sub_name(fi.sub), 60);
    fprintf(f, " after read %llu (", (unsigned long long)fi.read);
    esc(f, fi.why, 40);
    fprintf(f, "): %zu round trip%s, %zu command%s, %zu deliver%s</text>\n", fi.round_trips,
            fi.round_trips == 1 ? "" : "s", nc, nc == 1 ? "" : "s", nd, nd == 1 ? "y" : "ies");
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555555\">the deliveries it settled and their "
               "outcomes</text>\n", LEFT_X, y + 38);
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555555\">its round trip%s: the commands in "
               "the order they left</text>\n", RIGHT_X, y + 38, fi.round_trips == 1 ? "" : "s");
    int top = y + FLUSH_HEAD;

    /* the layout: both columns at once */
    int ly = top, ry = top;
    size_t next = 0; /* the first delivery without a box yet */
    for (size_t k = 0; k < nc;) {
        size_t end = k;
        while (end < nc && rows[end].c.round_trip == rows[k].c.round_trip) end++;
        ry += RT_HEAD;
        int atomic = 0;
        for (size_t j = k; j < end; j++) {
            if (j > k && rows[j].c.pipeline != rows[j - 1].c.pipeline) {
                ry += PIPE_GAP;
                atomic = 0;
            }
            if (rows[j].kind == R_MULTI) atomic = 1;
            size_t d = anchor_of[j];
            if (d != NONE && d >= next) {
                for (; next < d; next++) { /* the boxes before it, in settle order */
                    box_y[next] = ly;
                    ly += box_h + box_gap;
                }
                int off = (box_h - ROW) / 2, level = ly > ry - off ? ly : ry - off;
                box_y[d] = level;
                ly = level + box_h + box_gap;
                ry = level + off;
                next = d + 1;
            }
            rows[j].atomic = atomic;
            rows[j].y = ry;
            ry += ROW;
            if (rows[j].kind == R_EXEC) atomic = 0;
        }
        ry += 6 + RT_GAP;
        k = end;
    }
    for (; next < nd; next++) {
        box_y[next] = ly;
        ly += box_h + box_gap;
    }

    /* the round trips: box, heading, rows */
    for (size_t k = 0; k < nc;) {
        size_t end = k;
        while (end < nc && rows[end].c.round_trip == rows[k].c.round_trip) end++;
        const ws_flush_command *c0 = &rows[k].c;
        size_t pipes = 1;
        for (size_t j = k + 1; j < end; j++) pipes += rows[j].c.pipeline != rows[j - 1].c.pipeline;
        int box_top = rows[k].y - RT_HEAD, box_bottom = rows[end - 1].y + ROW + 6;
        fprintf(f, "<rect class=\"round-trip\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                   "rx=\"6\" fill=\"#fafafa\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                RIGHT_X, box_top, RIGHT_W, box_bottom - box_top,
                c0->rt_status ? "#c62828" : "#37474f");
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">round trip #%llu on the "
                   "window connection%s%s: %zu command%s in %zu pipeline%s</text>\n",
                RIGHT_X + 10, box_top + 16, (unsigned long long)c0->rt_index,
                c0->rt_status ? ", " : "", c0->rt_status ? ws_err_name(c0->rt_status) : "",
                end - k, end - k == 1 ? "" : "s", pipes, pipes == 1 ? "" : "s");
        for (size_t j = k; j < end; j++) {
            const row *r = &rows[j];
            const char *fill = row_fill(r->kind);
            if (fill)
                fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"/>\n",
                        RIGHT_X + 4, r->y, RIGHT_W - 8, ROW, fill);
            if (j > k && r->c.pipeline != rows[j - 1].c.pipeline) {
                int sep = (rows[j - 1].y + ROW + r->y) / 2;
                fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#90a4ae\" "
                           "stroke-dasharray=\"3 3\"/>\n",
                        RIGHT_X + 4, sep, RIGHT_X + RIGHT_W - 4, sep);
            }
            if (r->kind == R_MULTI) {
                size_t e = j;
                while (e + 1 < end && rows[e + 1].atomic && rows[e + 1].kind != R_MULTI &&
                       rows[e].kind != R_EXEC)
                    e++;
                fprintf(f, "<rect class=\"atomic\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
                           "rx=\"4\" fill=\"none\" stroke=\"#6a1b9a\" stroke-width=\"2\"/>\n",
                        RIGHT_X + 6, r->y + 1, RIGHT_W - 12, rows[e].y + ROW - r->y - 2);
            }
        }
        for (size_t j = k; j < end; j++) {
            const row *r = &rows[j];
            int failed = r->c.fate != NULL;
            fputs("<g class=\"command\"><title>", f);
            esc(f, r->c.text, 2000);
            fputs(" -> ", f);
            esc(f, r->c.reply, 2000);
            if (failed) {
                fputs(" (", f);
                esc(f, r->c.fate, 100);
                fputs(")", f);
            }
            fputs("</title>", f);
            int tx = RIGHT_X + 12 + (r->atomic && r->kind != R_MULTI && r->kind != R_EXEC ? 14 : 0);
            fprintf(f, "<text x=\"%d\" y=\"%d\"%s>", tx, r->y + 14,
                    failed ? " fill=\"#c62828\"" : "");
            esc(f, r->c.text, fit(RIGHT_X + RIGHT_W - TAG_W - 8 - tx));
            fprintf(f, "</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\" fill=\"%s\" "
                       "font-size=\"11\">",
                    RIGHT_X + RIGHT_W - 12, r->y + 14, failed ? "#c62828" : "#455a64");
            char *tag = row_tag(r, refs, dl, nd);
            esc(f, tag ? tag : "", fit(TAG_W - 16));
            wsi_free(tag);
            fputs("</text></g>\n", f);
        }
        k = end;
    }

    /* the deliveries: arrows first (under the boxes), then the boxes.  A delivery with
     * commands of its own gets a solid arrow to each run of them; one without ("settle
     * only", as the seed page says) a dashed one to each settle that names it. */
    size_t settle_only = 0;
    for (size_t d = 0; d < nd; d++) settle_only += !anchored[d];
    for (size_t j = 0; j < nc; j++) {
        const row *r = &rows[j];
        const char *fill, *stroke;
        size_t w = r->who;
        if (w != NONE && anchored[w]) {
            if (r->kind != R_SETTLE && (j == 0 || rows[j - 1].who != w || rows[j - 1].kind == R_SETTLE)) {
                outcome_colours(dl[w].outcome, &fill, &stroke);
                arrow(f, box_y[w] + box_h / 2, r->y + ROW / 2, 0, stroke, 0);
            }
        } else if (w != NONE) { /* a settle-only delivery's own settle (a list's LREM) */
            outcome_colours(dl[w].outcome, &fill, &stroke);
            arrow(f, box_y[w] + box_h / 2, r->y + ROW / 2, 1, stroke, settle_only > 12);
        }
        for (size_t q = 0; q < r->c.nsettles; q++) { /* ... or the shared XACK naming it */
            size_t v = index_of(refs, nd, r->c.settles[q]);
            if (v == NONE || anchored[v]) continue;
            outcome_colours(dl[v].outcome, &fill, &stroke);
            arrow(f, box_y[v] + box_h / 2, r->y + ROW / 2, 1, stroke, settle_only > 12);
        }
    }
    for (size_t d = 0; d < nd; d++) {
        const char *fill, *stroke;
        outcome_colours(dl[d].outcome, &fill, &stroke);
        int by = box_y[d];
        fputs("<g class=\"delivery\"><title>entry ", f);
        esc(f, dl[d].id, 2000);
        fprintf(f, ": %s, %s, %zu queued%s</title>", dl[d].outcome, dl[d].segment,
                dl[d].queued, anchored[d] ? "" : "; settle only");
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" rx=\"%d\" fill=\"%s\" "
                   "stroke=\"%s\" stroke-width=\"1.5\"/>",
                LEFT_X, by, LEFT_W, box_h, compact ? 3 : 5, fill, stroke);
        if (compact) {
            /* one line: the id in bold, then what became of it */
            size_t room = fit(LEFT_W - 16), idl = strlen(dl[d].id);
            fprintf(f, "<text x=\"%d\" y=\"%d\"><tspan font-weight=\"bold\">", LEFT_X + 8, by + 14);
            esc(f, dl[d].id, room > 20 ? room - 20 : 1);
            fprintf(f, "</tspan><tspan fill=\"%s\"> ", stroke);
            size_t used = (idl < room - 20 ? idl : room - 20) + 1;
            char what[96];
            snprintf(what, sizeof what, "%s: %s", dl[d].outcome, dl[d].segment);
            esc(f, what, room > used ? room - used : 1);
            fputs("</tspan></text></g>\n", f);
            continue;
        }
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-weight=\"bold\">entry ", LEFT_X + 8, by + 15);
        esc(f, dl[d].id, fit(LEFT_W - 16) - 6);
        fprintf(f, "</text><text x=\"%d\" y=\"%d\" fill=\"%s\">%s: %s", LEFT_X + 8, by + 31,
                stroke, dl[d].outcome, dl[d].segment);
        if (dl[d].queued) fprintf(f, " (%zu queued)", dl[d].queued);
        fputs("</text></g>\n", f);
    }
    fputs("</g>\n", f);
    int bottom = ry > ly ? ry : ly;
    wsi_free(dl), wsi_free(rows), wsi_free(box_y), wsi_free(anchor_of), wsi_free(anchored), wsi_free(refs);
    return bottom;
}

/* The key to the colours and lines, at y; returns the y below it. */
static int legend(FILE *f, int y)
{
    static const struct { const char *fill, *stroke, *what; } keys[] = {
        {"#e6f4e6", "#2e7d32", "ack: its segment kept"},
        {"#fbe4e2", "#c62828", "drop: its segment dropped"},
        {"#fff0dc", "#e65100", "retry, retry_after"},
        {"#eeeeee", "#616161", "abandoned, lost in a crash"},
    };
    fprintf(f, "<g class=\"legend\">\n<text x=\"%d\" y=\"%d\" fill=\"#555555\">deliveries:</text>\n",
            MARGIN, y + 14);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        int x = MARGIN + 90 + (int)i * 230;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"%s\" "
                   "stroke=\"%s\"/><text x=\"%d\" y=\"%d\">%s</text>\n",
                x, y + 3, keys[i].fill, keys[i].stroke, x + 20, y + 14, keys[i].what);
    }
    y += 22;
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555555\">commands:</text>\n", MARGIN, y + 14);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"#e6f4e6\"/>"
               "<text x=\"%d\" y=\"%d\">a kept segment</text>\n",
            MARGIN + 90, y + 3, MARGIN + 110, y + 14);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"#fff4c2\"/>"
               "<text x=\"%d\" y=\"%d\">the settle</text>\n",
            MARGIN + 320, y + 3, MARGIN + 340, y + 14);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"14\" fill=\"none\" "
               "stroke=\"#6a1b9a\" stroke-width=\"2\"/><text x=\"%d\" y=\"%d\">atomic: MULTI, "
               "its commands, its own settle, EXEC</text>\n",
            MARGIN + 550, y + 3, MARGIN + 570, y + 14);
    y += 22;
    fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"#555555\">arrows: solid from a delivery to its "
               "own commands; dashed, settle only, to the settle of one that has none. - - - "
               "between two pipelines</text>\n</g>\n",
            MARGIN, y + 14);
    return y + 22;
}

/* Every flush of sim as one SVG document under title (heap, *len bytes), or NULL when
 * out of memory (wsc_picture.h). */
char *wsc_picture_svg(const ws_sim *sim, const char *title, size_t *len)
{
    /* drawn into a body first: the height is known only at the end */
    char *body = NULL, *doc = NULL;
    size_t body_len = 0, doc_len = 0;
    FILE *f = open_memstream(&body, &body_len);
    if (!f) return NULL;
    int y = MARGIN;
    if (title) {
        fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"15\" font-weight=\"bold\">", MARGIN,
                y + 14);
        esc(f, title, fit(WIDTH - 2 * MARGIN) * 12 / 15);
        fputs("</text>\n", f);
        y += 30;
    }
    size_t n = ws_sim_flush_count(sim);
    if (n == 0) {
        fprintf(f, "<text x=\"%d\" y=\"%d\">no flush: nothing was sent through a window in "
                   "this run</text>\n", MARGIN, y + 14);
        y += 30;
    }
    for (size_t i = 0; i < n && y >= 0; i++) {
        y = draw_flush(f, sim, i, y);
        if (y >= 0) y += FLUSH_GAP;
    }
    if (y >= 0 && n) y = legend(f, y);
    if (fclose(f) != 0 || y < 0) {
        wsi_free(body);
        return NULL;
    }
    int height = y + MARGIN;
    /* the size to draw at: the picture's own, or scaled down to MAX_PX high */
    long draw_w = WIDTH, draw_h = height;
    if (height > MAX_PX) {
        draw_w = (long)WIDTH * MAX_PX / height;
        draw_h = MAX_PX;
        if (draw_w < 1) draw_w = 1;
    }
    FILE *d = open_memstream(&doc, &doc_len);
    if (!d) {
        wsi_free(body);
        return NULL;
    }
    fprintf(d, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(d, "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%ld\" "
               "height=\"%ld\" viewBox=\"0 0 %d %d\" font-family=\"monospace\" "
               "font-size=\"%d\">\n", draw_w, draw_h, WIDTH, height, FONT);
    fputs("<title>", d);
    esc(d, title ? title : "flush diagrams", 500);
    fputs("</title>\n<desc>wsim diagram --format svg: every flush of the run, its deliveries "
          "and outcomes on the left, its round trips' commands in order on the right "
          "(docs/wsim-diagram.md)</desc>\n", d);
    fputs("<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" "
          "markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0 L10 5 L0 10 z\" "
          "fill=\"#455a64\"/></marker></defs>\n", d);
    fprintf(d, "<rect width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n", WIDTH, height);
    fwrite(body, 1, body_len, d);
    fputs("</svg>\n", d);
    wsi_free(body);
    if (fclose(d) != 0) {
        wsi_free(doc);
        return NULL;
    }
    if (len) *len = doc_len;
    return doc;
}
