/* The output formats of `kprof` (recording) and `kprof report`: chosen by
 * -f NAME, else by the -o file's extension, else the command's default;
 * each written from a named profile by one function of the table in
 * output.c. */
#ifndef KP_CLI_OUTPUT_H
#define KP_CLI_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile/fold.h"
#include "flamegraph/svg.h"
#include "profile/profile.h"
#include "util/diag.h"
#include "util/outfile.h"

/* What a writer may need besides the profile. */
struct kp_output_ctx {
	const struct kp_profile *profile; /* named */
	struct kp_fold_opts fold;	  /* roots and value for folded, SVG, top */
	const struct kp_svg_opts *svg;	  /* SVG options (title, palette, ...) */
	bool annotate;			  /* folded: _[k] _[j] _[i] suffixes */
	size_t top;			  /* top: how many functions (default 20) */
	bool per_line;			  /* speedscope: a frame per source line */
};

struct kp_output_format {
	const char *name;	 /* -f NAME */
	const char *const *exts; /* -o FILE extensions that choose it, NULL-terminated */
	bool binary;		 /* not for a terminal */
	bool lines;		 /* keeps source files and lines: worth reading them */
	const char *what;	 /* one line for --help */
	int (*write)(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d);
};

/* The format called name, or NULL. */
const struct kp_output_format *kp_output_by_name(const char *name);
/* The format whose extension ends path (longest match), or NULL. */
const struct kp_output_format *kp_output_by_path(const char *path);
/* "svg, folded, top, ..." for messages. Static storage. */
const char *kp_output_names(void);
/* One line per format, for --help. */
void kp_output_help(FILE *out);

/* Writes ctx->profile in fmt to out. Returns 0 or a negative errno (d). */
int kp_output_write(const struct kp_output_format *fmt, const struct kp_output_ctx *ctx, FILE *out,
		    struct kp_diag *d);

/* The outputs one command writes: one per -o (repeatable), or stdout. */
struct kp_outputs {
	size_t n;
	const struct kp_output_format **fmt; /* n, static */
	struct kp_outfile *file;	     /* n */
	bool terminal_top;		     /* no -f, no -o, stdout a terminal: the top table */
};

/* Chooses each output's format (fname given by -f, else the -o path's
 * extension, else svg; the top table when neither -f nor -o is given and
 * stdout is a terminal) and creates the files, before any work: a bad path
 * or format fails at once. cmd names the command in messages ("report: ",
 * "" for the recording). Returns 0, or the exit status after printing why
 * (2: usage, 1: a path). Free with kp_outputs_free in every case. */
int kp_outputs_open(struct kp_outputs *o, const char *fname, const char *const *paths,
		    size_t npaths, const char *cmd);
/* Writes ctx to every output and puts each in place under its name; on
 * failure prints why. where (may be NULL) receives "a.svg, b.folded".
 * Returns 0 or 1. */
int kp_outputs_write(struct kp_outputs *o, const struct kp_output_ctx *ctx, char *where,
		     size_t wsize);
/* Takes -o arg for a command that writes one output (cmd: "flamegraph"):
 * a second -o is refused rather than silently winning. Returns 0, or 2
 * after saying why. */
int kp_output_once(const char **path, const char *arg, const char *cmd);
/* Discards what was not committed and frees. Safe on a zeroed struct. */
void kp_outputs_free(struct kp_outputs *o);

#endif
