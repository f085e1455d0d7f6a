/* The heatmap page: a profile with a time axis as one self-contained HTML
 * page (no network request): a FlameScope-style heatmap of its samples
 * (columns of seconds, rows of 20 ms; for timelines past 10 minutes
 * columns of minutes, rows of seconds), the flame graph of the cells
 * selected by dragging over it (search, zoom, tooltips), the selection in
 * the URL fragment (#from=S&to=S, seconds from the start), the `kprof
 * report --from --to` command that gives the same profile, and the
 * selection's folded text. docs/formats.md, "The heatmap page".
 *
 * The page holds the profile's stacks by name (folded text's names, the
 * root frames as o->fold says) and, per cell, how many samples of each
 * stack it has, as JSON gzip'd in base64 (the browser's DecompressionStream
 * inflates it): memory and size follow cells and distinct stacks a cell,
 * not samples. A profile without time is one cell of all its samples. */
#ifndef KP_FORMATS_HEATMAP_H
#define KP_FORMATS_HEATMAP_H

#include <stddef.h>
#include <stdio.h>

#include "profile/fold.h"
#include "profile/profile.h"
#include "util/diag.h"

struct kp_heatmap_opts {
	struct kp_fold_opts fold; /* root frames; fold.value: what an untimed profile counts */
	/* the recordings the page was made from, for its command (NULL:
	 * "RECORDING.kprof") */
	const char *const *inputs;
	size_t ninputs;
	const char *title; /* NULL: "Heatmap" */
};

/* gzip's level for the page's data: libdeflate's 6 (its default) packs a
 * day's 33 MB of JSON to some 5 MB in a fraction of a second */
#define KP_HEATMAP_LEVEL 6

/* Writes the page of p to out. Returns 0 or a negative errno (d set). */
int kp_heatmap_write(const struct kp_profile *p, const struct kp_heatmap_opts *o, FILE *out,
		     struct kp_diag *d);

/* Writes the page's data, the JSON object the page holds gzip'd and in
 * base64 (docs/formats.md), to out. Returns 0 or a negative errno (d
 * set: a crafted recording's waits cover too many cells). */
int kp_heatmap_write_data(const struct kp_profile *p, const struct kp_heatmap_opts *o, FILE *out,
			  struct kp_diag *d);

/* The page's script and style (heatmap_page.c). */
extern const char kp_heatmap_script[];
extern const char kp_heatmap_style[];

#endif
