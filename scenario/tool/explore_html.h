/* explore_html.h -- `wsim explore --format html` (explore_html.c): the crash explorer's
 * report as one page (docs/wsim-explore.md, "One page: --format html").
 *
 * The page promises:
 *   - self-contained: its style sheet is inline, it has no script, no image, no font,
 *     no link out of the page (every href is a fragment, "#..."), so it opens the same
 *     offline, from a CI artifact or an e-mail;
 *   - well-formed XML as well as HTML5 (a "polyglot" page: every element closed, every
 *     attribute quoted, no named entity but XML's five), so `xmllint --noout` checks it
 *     strictly; text escaped (& < > " ' as entities, a control byte or a byte that is not
 *     UTF-8 as \xNN);
 *   - the scenario's file and title, a summary (points per verdict, as the text report's
 *     last lines count them, and the points the scenario forbids), then a table with one
 *     row per crash point, in the text report's order, coloured by its verdict (class
 *     "point v-VERDICT", VERDICT one of fine doubled lost split leaked stranded
 *     not-reached error), each with its violations' sentences and a link to where it
 *     crashes in the trace;
 *   - the trace of the scenario's run without a crash (what `wsim trace` prints), one
 *     anchor per round trip (id "rt-CONN-N", as the table names it: "window #3") and per
 *     command (id "rt-CONN-N.K", K from 1): a point "before K/N" links to its command, a
 *     point "replies lost" to its round trip;
 *   - deterministic: the same exploration and trace give the same bytes.
 */
#ifndef WSIM_EXPLORE_HTML_H
#define WSIM_EXPLORE_HTML_H

#include <stdio.h>

#include "wsc.h"

/* Writes the page for the exploration ex of the scenario file `path` (title: its
 * `scenario` line) to out; trace is the run's trace text (NULL or "": the page says there
 * is none).  Returns 0, or -1 when writing failed (errno set). */
int wsim_explore_html(FILE *out, const char *path, const char *title, const wsc_exploration *ex,
                      const char *trace);

#endif /* WSIM_EXPLORE_HTML_H */
