/* The formats of `kprof diff`: its reports (diff/diff_report.h), the
 * differential flame graph and the differential folded stacks. */
#include <stdio.h>

#include "output/output.h"
#include "diff/diff_report.h"
#include "formats/folded_write.h"

static int write_text(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	int err = kp_diff_text_write(ctx->diff->files->df, ctx->diff->report, out);

	return err ? kp_diag_errno(d, err, "cannot write the output") : 0;
}

static int write_json(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	return kp_diff_json_write(ctx->diff->files->df, ctx->diff->report, out, d);
}

static int write_svg(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	const struct kp_output_diff *od = ctx->diff;
	struct kp_diff_svg_opts o = {
		.svg = ctx->svg, .base_shape = od->base_shape, .value = od->value};

	return kp_diff_svg_write(od->files->df, od->report, od->files->fold, &o, out, d);
}

/* "stack BASE NEW" lines, as difffolded.pl writes them */
static int write_folded(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	int err = kp_folded_write(ctx->diff->files->fold, out, KP_FOLDED_ANNOTATE_ALL);

	return err ? kp_diag_errno(d, err, "cannot write the output") : 0;
}

static int write_markdown(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	int err = kp_diff_text_write_markdown(ctx->diff->files->df, ctx->diff->report, out);

	return err ? kp_diag_errno(d, err, "cannot write the output") : 0;
}

static int write_junit(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	int err = kp_diff_junit_write(ctx->diff->files->df, ctx->diff->report, out);

	return err ? kp_diag_errno(d, err, "cannot write the output") : 0;
}

static int write_github(const struct kp_output_ctx *ctx, FILE *out, struct kp_diag *d)
{
	int err = kp_diff_text_write_github(ctx->diff->files->df, ctx->diff->report, out);

	return err ? kp_diag_errno(d, err, "cannot write the output") : 0;
}

static const char *const text_exts[] = {".txt", NULL};
static const char *const json_exts[] = {".json", NULL};
static const char *const svg_exts[] = {".svg", NULL};
static const char *const folded_exts[] = {".folded", NULL};
static const char *const markdown_exts[] = {".md", NULL};
static const char *const junit_exts[] = {".xml", NULL};
static const char *const no_exts[] = {NULL};

static const struct kp_output_format diff_formats[] = {
	{.name = "text", .exts = text_exts, .what = "for people and job logs", .write = write_text},
	{.name = "json", .exts = json_exts, .what = "for bots (docs/diff.md)", .write = write_json},
	{.name = "svg",
	 .exts = svg_exts,
	 .diff_folded = true,
	 .what = "a differential flame graph",
	 .write = write_svg},
	{.name = "folded",
	 .exts = folded_exts,
	 .diff_folded = true,
	 .what = "\"stack BASE NEW\" lines, as difffolded.pl",
	 .write = write_folded},
	{.name = "markdown",
	 .exts = markdown_exts,
	 .what = "a pull-request comment",
	 .write = write_markdown},
	{.name = "junit", .exts = junit_exts, .what = "JUnit XML", .write = write_junit},
	{.name = "github",
	 .exts = no_exts,
	 .what = "GitHub Actions annotations",
	 .write = write_github},
};

const struct kp_output_table kp_output_diff = {
	.v = diff_formats,
	.n = sizeof(diff_formats) / sizeof(diff_formats[0]),
	.fallback = &diff_formats[0], /* text */
	.extension_over_name = true,
};

bool kp_outputs_diff_folded(const struct kp_outputs *o)
{
	bool fold = false;

	for (size_t i = 0; i < o->n; i++)
		fold |= o->fmt[i]->diff_folded;
	return fold;
}
