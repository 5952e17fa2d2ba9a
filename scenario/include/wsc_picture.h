/* wsc_picture.h -- the flush diagrams as a picture: `wsim diagram --format svg`
 * (scenario/src/picture_svg.c, docs/wsim-diagram.md).
 *
 * The picture is the seed page "Window"'s, drawn for every flush of a run: on the left
 * the deliveries the flush settled, each with its outcome and what became of its
 * segment; on the right the flush's round trips, their commands in the order they were
 * sent, each committed segment and the settles marked (row colour and a tag naming the
 * delivery), atomic blocks (MULTI ... EXEC) boxed; a solid arrow from each delivery to
 * its own commands (its segment, its atomic block), and from a delivery with none (a
 * dropped one: "settle only", the seed says) a dashed one to the settle that names it.
 * Flushes are stacked one under the other, in the order they left, under the scenario's
 * title.
 *
 * What the document promises:
 *   - self-contained SVG 1.1: no external fonts, images, stylesheets or links (the only
 *     URI is the SVG namespace); text uses the generic `monospace` family;
 *   - deterministic: the same run gives the same bytes (integer coordinates, no clock,
 *     no pointers, no locale);
 *   - well-formed XML with every text escaped: & < > " ' as entities, a control byte or a
 *     byte that is not UTF-8 as the four characters \xNN;
 *   - no overlap however long the flush: every command has a row of its own and every
 *     delivery a box of its own, so the picture grows downwards (a box sits level with
 *     its first own command when the column allows, and nothing is ever pushed up; a
 *     flush of more than 16 deliveries gets one-line boxes); a command or id longer than
 *     its column is cut with an ellipsis, and the whole of it (with the reply) is in the
 *     row's <title> tooltip;
 *   - drawable: a picture taller than 32,000 px (thousands of commands) keeps its
 *     coordinates (viewBox) but asks to be drawn 32,000 px high and narrower in
 *     proportion, which librsvg (at most 32,767 px a side) and browsers accept;
 *   - a run without flushes gives a small valid picture that says so.
 */
#ifndef WSC_PICTURE_H
#define WSC_PICTURE_H

#include <stddef.h>

#include "ws_sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Renders every flush of sim (ws_sim_flush_count and its accessors) as one SVG document
 * under the heading `title` (NULL: none).  Returns the document (heap, NUL-terminated,
 * wsi_free() it; *len, when len is not NULL, gets its length) or NULL when out of memory. */
char *wsc_picture_svg(const ws_sim *sim, const char *title, size_t *len);

#ifdef __cplusplus
}
#endif

#endif /* WSC_PICTURE_H */
