/* The output formats of the commands that write several (the recording,
 * `kprof report`, `kprof diff`): chosen by -f NAME, else by the -o file's
 * extension, else the command's default; each written by one function of
 * its command's table: a profile's formats in output.c, diff's in
 * output_diff.c. The command line only parses and prints (cli/output.h
 * says the why of a failure); this folder prints nothing. */
#ifndef KP_OUTPUT_OUTPUT_H
#define KP_OUTPUT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "diff/diff_files.h"
#include "diff/diff_report.h"
#include "flamegraph/svg.h"
#include "profile/fold.h"
#include "profile/profile.h"
#include "util/diag.h"
#include "util/outfile.h"

/* What diff's formats write from (output_diff.c). */
struct kp_output_diff {
	const struct kp_diff_files *files; /* the comparison */
	const struct kp_diff_report *report;
	const char *value; /* --value, or NULL */
	bool base_shape;   /* --base-shape */
};

/* What a writer may need. */
struct kp_output_ctx {
	const struct kp_profile *profile;  /* named (a profile's formats) */
	const struct kp_output_diff *diff; /* diff's formats */
	struct kp_fold_opts fold;	   /* roots and value for folded, SVG, top */
	const struct kp_svg_opts *svg;	   /* SVG options (title, palette, ...) */
	bool annotate;			   /* folded: _[k] _[j] _[i] suffixes */
	size_t top;			   /* top: how many functions (default 20) */
	bool per_line;			   /* speedscope: a frame per source line */
	bool windows; /* one of many (kprof --every): compress fast, not small */
	/* the files the profile was read from (kprof report): the heatmap
	 * page's command */
	char *const *inputs;
	size_t ninputs;
};

struct kp_output_format {
	const char *name;	 /* -f NAME */
	const char *const *exts; /* -o FILE extensions that choose it, NULL-terminated */
	bool binary;		 /* not for a terminal */
	bool lines;		 /* keeps source files and lines: worth reading them */
	bool diff_folded;	 /* diff: drawn from the differential folded table */
	const char *what;	 /* one line for --help */
	int (*write)(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d);
};

/* The formats one command chooses from, and how it chooses. */
struct kp_output_table {
	const struct kp_output_format *v;
	size_t n;
	/* neither -f nor an extension of the table */
	const struct kp_output_format *fallback;
	/* no -f, no -o, stdout a terminal: this one (NULL: the fallback) */
	const struct kp_output_format *on_terminal;
	/* several -o: each the format of its extension, -f only for those
	 * without one (else -f names every output's format) */
	bool extension_over_name;
	/* the same -o path twice is a usage error */
	bool refuse_repeated_path;
};

/* A profile's formats: svg (the default), folded, top, kprof, pprof,
 * speedscope (output.c). */
extern const struct kp_output_table kp_output_profile;
/* kprof diff's: text (the default), json, svg, folded, markdown, junit,
 * github (output_diff.c). */
extern const struct kp_output_table kp_output_diff;

/* Whether one of o's formats of kp_output_diff draws the differential
 * folded table (kp_diff_files_opts.fold). */
struct kp_outputs;
bool kp_outputs_diff_folded(const struct kp_outputs *o);

/* The format of t called name, or NULL. */
const struct kp_output_format *kp_output_by_name(const struct kp_output_table *t, const char *name);
/* The format of t whose extension ends path (longest match), or NULL. */
const struct kp_output_format *kp_output_by_path(const struct kp_output_table *t, const char *path);
/* "svg, folded, top, ..." for messages. Static storage, overwritten by
 * the next call. */
const char *kp_output_names(const struct kp_output_table *t);
/* One line per format, for --help. */
void kp_output_help(const struct kp_output_table *t, FILE *out);

/* Writes ctx->profile in fmt to out. Returns 0 or a negative errno (d). */
int kp_output_write(const struct kp_output_format *fmt, const struct kp_output_ctx *ctx, FILE *out,
		    struct kp_diag *d);

/* The outputs one command writes: one per -o (repeatable), or stdout. */
struct kp_outputs {
	size_t n;
	const struct kp_output_format **fmt; /* n, static */
	struct kp_outfile *file;	     /* n */
	bool *zst;			     /* n: written through zstd (name ends .zst) */
	bool terminal_top; /* no -f, no -o, stdout a terminal: the table's on_terminal */
	/* kp_outputs_open failed on an -o extension no format has: the
	 * caller lists the table's formats after the message */
	bool unknown_ext;
};

/* Chooses each output's format of t (fname given by -f, else the -o
 * path's extension, else t's fallback; as t says for a terminal and for
 * several outputs) and creates the files, before any work: a bad path or
 * format fails at once. cmd names the command in the message ("report: ",
 * "" for the recording). Returns 0, or the exit status with why in d (2:
 * usage, o->unknown_ext when an extension chose no format; 1: a path).
 * Free with kp_outputs_free in every case. */
int kp_outputs_create(struct kp_outputs *o, const struct kp_output_table *t, const char *fname,
		      const char *const *paths, size_t npaths, const char *cmd, struct kp_diag *d);
/* Writes ctx to every output and puts each in place under its name.
 * where (may be NULL) receives "a.svg, b.folded". Returns 0, or 1 with
 * why in d. */
int kp_outputs_commit(struct kp_outputs *o, const struct kp_output_ctx *ctx, char *where,
		      size_t wsize, struct kp_diag *d);
/* Discards what was not committed and frees. Safe on a zeroed struct. */
void kp_outputs_free(struct kp_outputs *o);

#endif
