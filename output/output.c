#include "output/output.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/folded_write.h"
#include "formats/heatmap.h"
#include "formats/top.h"
#include "formats/pprof.h"
#include "formats/recording.h"
#include "formats/speedscope.h"
#include "formats/zstdio.h"
#include "flamegraph/svg.h"
#include "profile/run_meta.h"
#include "profile/wait.h"
#include "util/xalloc.h"

/* The folded table the name-based writers draw from. */
static struct kp_folded *fold(const struct kp_output_ctx *ctx, struct kp_diag *d)
{
	struct kp_folded *f = kp_folded_new();

	if (!kp_fold_add_profile(f, ctx->profile, &ctx->fold)) {
		kp_diag_set(d, -ERANGE, "the profile's counts cannot be folded exactly");
		kp_folded_free(f);
		return NULL;
	}
	return f;
}

static int write_folded(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	struct kp_folded *f = fold(ctx, d);
	int err;

	if (!f)
		return -ERANGE;
	err = kp_folded_write(f, out, ctx->annotate ? KP_FOLDED_ANNOTATE_ALL : 0);
	if (err)
		kp_diag_errno(d, err, "cannot write the folded stacks");
	kp_folded_free(f);
	return err;
}

/* The lines under the title of a recording's flame graph, made from its
 * metadata, so that the recorder and `kprof report` of its .kprof draw the
 * same: the command, then the event, rate, duration, samples and lost
 * samples. None for a profile that was not recorded (folded text). */
static size_t run_lines(const struct kp_profile *p, const char *value, char lines[2][4200])
{
	struct kp_run_meta m;
	const char *ev, *freq, *period, *samples, *lost;

	kp_run_meta_read(p, &m);
	ev = m.event;
	freq = m.text.frequency;
	period = m.text.period;
	samples = m.text.samples;
	lost = m.text.lost;
	if (!m.command)
		return 0;
	snprintf(lines[0], sizeof(lines[0]), "%s", m.command);
	if (!ev || !m.text.duration || !samples || !lost || (!freq && !period))
		return 1;
	if (value && strcmp(value, KP_VALUE_OFFCPU) == 0)
		/* every wait is timed; the event only chose which stacks were
		 * taken (docs/offcpu.md) */
		snprintf(lines[1], sizeof(lines[1]),
			 "off-CPU time of every wait (us), stacks from %s; %.1f s, %s stacks, %s "
			 "lost",
			 ev, m.duration, samples, lost);
	else if (value && strcmp(value, KP_VALUE_WALL) == 0)
		snprintf(lines[1], sizeof(lines[1]),
			 "wall-clock time (us): on CPU %s %s %s %s, off CPU every wait timed; %.1f "
			 "s, %s samples, %s lost",
			 ev, freq ? "at" : "every", freq ? freq : period, freq ? "Hz" : "events",
			 m.duration, samples, lost);
	else
		snprintf(lines[1], sizeof(lines[1]), "%s %s %s %s, %.1f s, %s samples, %s lost", ev,
			 freq ? "at" : "every", freq ? freq : period, freq ? "Hz" : "events",
			 m.duration, samples, lost);
	return 2;
}

static int write_svg(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	struct kp_folded *f = fold(ctx, d);
	const struct kp_profile_value_type *vt =
		kp_profile_value_type(ctx->profile, ctx->fold.value);
	const char *value = vt ? kp_profile_str(ctx->profile, vt->type, NULL) : NULL;
	struct kp_svg_opts o;
	static char lines[2][4200], title[256];
	const char *info[2] = {lines[0], lines[1]};
	struct kp_run_meta run;
	const char *range;
	int err;

	kp_run_meta_read(ctx->profile, &run);
	range = run.range;
	if (!f)
		return -ERANGE;
	if (ctx->svg)
		o = *ctx->svg;
	else
		kp_svg_opts_init(&o);
	/* the default title says what was measured; a --title wins */
	if (!o.title && !o.flamechart && value && strcmp(value, KP_VALUE_OFFCPU) == 0)
		o.title = o.inverted ? "Off-CPU Time Icicle Graph" : "Off-CPU Time Flame Graph";
	if (!o.title && !o.flamechart && value && strcmp(value, KP_VALUE_WALL) == 0)
		o.title =
			o.inverted ? "Wall-Clock Time Icicle Graph" : "Wall-Clock Time Flame Graph";
	/* a slice says its range (seconds from the start) */
	if (range && !o.flamechart) {
		snprintf(title, sizeof(title), "%s, %s s",
			 o.title      ? o.title
			 : o.inverted ? "Icicle Graph"
				      : "Flame Graph",
			 range);
		if (!ctx->svg || !ctx->svg->title)
			o.title = title;
	}
	/* time values are folded into microseconds */
	if (!o.countname && kp_fold_micros(ctx->profile, ctx->fold.value))
		o.countname = "us";
	if (!o.n_info_lines) {
		o.info_lines = info;
		o.n_info_lines = run_lines(ctx->profile, value, lines);
		/* a recording with no samples still says so */
		o.allow_empty |= o.n_info_lines > 0;
	}
	err = kp_svg_write(f, &o, out, d);
	kp_folded_free(f);
	return err;
}

static int write_top(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	struct kp_folded *f = fold(ctx, d);
	const struct kp_profile_value_type *vt =
		kp_profile_value_type(ctx->profile, ctx->fold.value);
	int err;

	if (!f)
		return -ERANGE;
	err = kp_top_write(f, out, ctx->top ? ctx->top : 20,
			   vt ? kp_profile_str(ctx->profile, vt->type, NULL) : "samples",
			   kp_fold_micros(ctx->profile, ctx->fold.value) ? "us" : NULL);
	if (err)
		kp_diag_errno(d, err, "cannot write the report");
	kp_folded_free(f);
	return err;
}

/* The whole profile, not a fold of it: --value, --pid and --tid do not
 * apply; `kprof report` applies them when the recording is read back. */
static int write_kprof(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	/* one location per distinct frames: every name, file and line stays,
	 * the individual instruction addresses go (a few times smaller) */
	struct kp_profile *merged = kp_profile_merge_locations(ctx->profile);
	int err = ctx->windows ? kp_recording_write_fast(merged, out, d)
			       : kp_recording_write(merged, out, d);

	kp_profile_free(merged);
	return err;
}

static int write_pprof(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	/* pprof readers show the value kprof draws first */
	struct kp_pprof_opts o = {.default_value = ctx->fold.value};

	return kp_pprof_write(ctx->profile, &o, out, d);
}

static int write_speedscope(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	struct kp_speedscope_opts o = {
		.fold = ctx->fold, .lines = ctx->per_line, .exporter = "kprof " KP_VERSION};

	return kp_speedscope_write(ctx->profile, &o, out, d);
}

static int write_html(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	struct kp_heatmap_opts o = {.fold = ctx->fold,
				    .inputs = (const char *const *)ctx->inputs,
				    .ninputs = ctx->ninputs,
				    .title = ctx->svg ? ctx->svg->title : NULL};

	return kp_heatmap_write(ctx->profile, &o, out, d);
}

static const char *const svg_exts[] = {".svg", NULL};
/* .zst after the text formats that tools read back (kprof report reads
 * compressed folded text): written compressed (kp_outputs_write) */
static const char *const folded_exts[] = {".folded", ".txt", ".folded.zst", NULL};
static const char *const top_exts[] = {".top", NULL};
static const char *const kprof_exts[] = {".kprof", NULL};
static const char *const pprof_exts[] = {".pb.gz", NULL};
static const char *const speedscope_exts[] = {".speedscope.json", ".speedscope.json.zst", NULL};
static const char *const html_exts[] = {".html", NULL};

enum { SVG, FOLDED, TOP, KPROF, PPROF, SPEEDSCOPE, HTML };

static const struct kp_output_format profile_formats[] = {
	[SVG] = {.name = "svg",
		 .exts = svg_exts,
		 .what = "interactive flame graph (the default)",
		 .write = write_svg},
	[FOLDED] = {.name = "folded",
		    .exts = folded_exts,
		    .what = "folded stacks, \"frame;frame;... COUNT\" lines",
		    .write = write_folded},
	[TOP] = {.name = "top",
		 .exts = top_exts,
		 .what = "the functions by self and total share (--top N)",
		 .write = write_top},
	[KPROF] = {.name = "kprof",
		   .exts = kprof_exts,
		   .binary = true,
		   .lines = true,
		   .what = "a .kprof recording: the whole profile, zstd-compressed",
		   .write = write_kprof},
	[PPROF] = {.name = "pprof",
		   .exts = pprof_exts,
		   .binary = true,
		   .lines = true,
		   .what = "gzip-compressed profile.proto (go tool pprof, Pyroscope, Parca)",
		   .write = write_pprof},
	[SPEEDSCOPE] = {.name = "speedscope",
			.exts = speedscope_exts,
			.lines = true,
			.what = "speedscope JSON (speedscope.app; --lines: a frame per line)",
			.write = write_speedscope},
	[HTML] = {.name = "html",
		  .exts = html_exts,
		  .what = "the heatmap page: samples by time, the flame graph of a selection",
		  .write = write_html},
};

const struct kp_output_table kp_output_profile = {
	.v = profile_formats,
	.n = sizeof(profile_formats) / sizeof(profile_formats[0]),
	.fallback = &profile_formats[SVG],
	.on_terminal = &profile_formats[TOP],
	.refuse_repeated_path = true,
};

const struct kp_output_format *kp_output_by_name(const struct kp_output_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->v[i].name, name) == 0)
			return &t->v[i];
	return NULL;
}

const struct kp_output_format *kp_output_by_path(const struct kp_output_table *t, const char *path)
{
	const struct kp_output_format *best = NULL;
	size_t len = path ? strlen(path) : 0, best_len = 0;

	for (size_t i = 0; i < t->n; i++) {
		for (const char *const *e = t->v[i].exts; *e; e++) {
			size_t el = strlen(*e);

			if (el < len && el > best_len && strcmp(path + len - el, *e) == 0) {
				best = &t->v[i];
				best_len = el;
			}
		}
	}
	return best;
}

const char *kp_output_names(const struct kp_output_table *t)
{
	static char buf[256];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->n && n < sizeof(buf); i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? ", " : "",
				      t->v[i].name);
	return buf;
}

void kp_output_help(const struct kp_output_table *t, FILE *out)
{
	for (size_t i = 0; i < t->n; i++) {
		char exts[96] = "";
		size_t n = 0;

		for (const char *const *e = t->v[i].exts; *e && n < sizeof(exts); e++)
			n += (size_t)snprintf(exts + n, sizeof(exts) - n, "%s%s", n ? ", " : "",
					      *e);
		fprintf(out, "    %-11s %s (-o %s)\n", t->v[i].name, t->v[i].what, exts);
	}
}

int kp_output_write(const struct kp_output_format *fmt, const struct kp_output_ctx *ctx, FILE *out,
		    struct kp_diag *d)
{
	return fmt->write(ctx, out, d);
}

/* True when path's file name has an extension: a dot that does not start
 * it ("x.png", not "x" nor ".profile"). */
static bool has_ext(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL, *base = slash ? slash + 1 : path;
	const char *dot = base ? strrchr(base, '.') : NULL;

	return dot && dot != base && dot[1];
}

static bool ends_zst(const char *path)
{
	size_t len = path ? strlen(path) : 0;

	return len > 4 && strcmp(path + len - 4, ".zst") == 0;
}

/* A usage error for -o path (without -f) whose extension no format of t
 * has: writing an SVG into x.png would surprise. Returns 0 or 2. */
static int check_ext(struct kp_outputs *o, const struct kp_output_table *t, const char *path,
		     const char *cmd, struct kp_diag *d)
{
	if (!has_ext(path) || kp_output_by_path(t, path))
		return 0;
	kp_diag_set(d, -EINVAL,
		    "%s-o %s: unknown extension; the formats (-f NAME) and their extensions:", cmd,
		    path);
	o->unknown_ext = true;
	return 2;
}

/* The format of output path (NULL: stdout) of npaths, named by -f or
 * NULL. */
static const struct kp_output_format *choose(const struct kp_outputs *o,
					     const struct kp_output_table *t,
					     const struct kp_output_format *named, const char *path,
					     size_t npaths)
{
	const struct kp_output_format *by_ext = kp_output_by_path(t, path);

	if (named && (!t->extension_over_name || npaths <= 1 || !by_ext))
		return named;
	if (by_ext)
		return by_ext;
	return o->terminal_top ? t->on_terminal : t->fallback;
}

int kp_outputs_create(struct kp_outputs *o, const struct kp_output_table *t, const char *fname,
		      const char *const *paths, size_t npaths, const char *cmd, struct kp_diag *d)
{
	const struct kp_output_format *named = NULL;

	memset(o, 0, sizeof(*o));
	if (fname) {
		named = kp_output_by_name(t, fname);
		if (!named) {
			kp_diag_set(d, -EINVAL, "%sunknown format '%s' (%s)", cmd, fname,
				    kp_output_names(t));
			return 2;
		}
	}
	o->n = npaths ? npaths : 1;
	o->fmt = kp_xcalloc(o->n, sizeof(*o->fmt));
	o->file = kp_xcalloc(o->n, sizeof(*o->file));
	o->zst = kp_xcalloc(o->n, sizeof(*o->zst));
	o->terminal_top = t->on_terminal && !fname && !npaths && isatty(STDOUT_FILENO);
	for (size_t i = 0; i < o->n; i++) {
		const char *path = npaths ? paths[i] : NULL;

		for (size_t j = 0; t->refuse_repeated_path && j < i; j++) {
			if (strcmp(paths[j], path) == 0) {
				kp_diag_set(d, -EINVAL, "%s-o %s is given twice", cmd, path);
				return 2;
			}
		}
		if (!named && check_ext(o, t, path, cmd, d))
			return 2;
		o->fmt[i] = choose(o, t, named, path, npaths);
		o->zst[i] = ends_zst(path);
		if (o->zst[i] && o->fmt[i]->binary) {
			kp_diag_set(d, -EINVAL,
				    "%s-o %s: -f %s is compressed already: drop the .zst", cmd,
				    path, o->fmt[i]->name);
			return 2;
		}
		if (o->fmt[i]->binary && (!path || strcmp(path, "-") == 0) &&
		    isatty(STDOUT_FILENO)) {
			kp_diag_set(d, -EINVAL,
				    "%s-f %s is binary: give -o FILE or redirect stdout", cmd,
				    o->fmt[i]->name);
			return 2;
		}
		if (kp_outfile_open(&o->file[i], path, d) < 0)
			return 1;
	}
	return 0;
}

/* Output i, through zstd when its name ends in .zst. Returns 0 or a
 * negative errno (d). */
static int write_one(struct kp_outputs *o, size_t i, const struct kp_output_ctx *ctx,
		     struct kp_diag *d)
{
	struct kp_zstd_writer *z;
	int err;

	if (!o->zst[i])
		return kp_output_write(o->fmt[i], ctx, o->file[i].fp, d);
	z = kp_zstd_writer_new(o->file[i].fp, 0);
	err = kp_output_write(o->fmt[i], ctx, kp_zstd_writer_file(z), d);
	if (err < 0) {
		kp_zstd_writer_free(z);
		return err;
	}
	return kp_zstd_writer_finish(z, d);
}

int kp_outputs_commit(struct kp_outputs *o, const struct kp_output_ctx *ctx, char *where,
		      size_t wsize, struct kp_diag *d)
{
	if (where && wsize)
		where[0] = '\0';
	for (size_t i = 0; i < o->n; i++) {
		if (write_one(o, i, ctx, d) < 0 || kp_outfile_commit(&o->file[i], d) < 0) {
			if (d && !d->msg[0])
				kp_diag_set(d, -EIO, "cannot write the output");
			return 1;
		}
		if (where && wsize) {
			size_t len = strlen(where);

			snprintf(where + len, wsize - len, "%s%s", i ? ", " : "",
				 kp_outfile_name(&o->file[i]));
		}
	}
	return 0;
}

void kp_outputs_free(struct kp_outputs *o)
{
	for (size_t i = 0; o->file && i < o->n; i++)
		kp_outfile_abort(&o->file[i]);
	free(o->file);
	free(o->fmt);
	free(o->zst);
	memset(o, 0, sizeof(*o));
}
