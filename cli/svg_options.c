#include "cli/svg_options.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/messages.h"
#include "util/xalloc.h"

/* A number in [min, max]; the whole argument must be the number. */
static int parse_double(const char *name, const char *arg, double min, double max, double *out)
{
	if (!arg || kp_args_parse_double(arg, min, max, false, out) < 0) {
		kp_err("--%s: expected a number from %g to %g, not \"%s\"", name, min, max,
		       arg ? arg : "");
		return -1;
	}
	return 1;
}

/* (every such option's min is 1 or more: the shared parser's "no sign"
 * refuses only what is below it anyway) */
static int parse_int(const char *name, const char *arg, int min, int max, int *out)
{
	uint64_t v;

	if (!arg || kp_args_parse_u64(arg, (uint64_t)min, (uint64_t)max, &v) < 0) {
		kp_err("--%s: expected a whole number from %d to %d, not \"%s\"", name, min, max,
		       arg ? arg : "");
		return -1;
	}
	*out = (int)v;
	return 1;
}

static int set_minwidth(void *cli, const char *arg, const struct kp_opt *row)
{
	struct kp_svg_opts *o = cli;

	(void)row;
	size_t len = arg ? strlen(arg) : 0;
	char num[64];
	double v;

	/* "0.5" pixels or "0.1%" of the total, as flamegraph.pl */
	if (len == 0 || len >= sizeof(num)) {
		kp_err("--minwidth: expected pixels (0.1) or a percentage (0.5%%), not \"%s\"",
		       arg ? arg : "");
		return -1;
	}
	memcpy(num, arg, len + 1);
	o->minwidth_percent = num[len - 1] == '%';
	if (o->minwidth_percent)
		num[len - 1] = '\0';
	if (parse_double("minwidth", num, 0, o->minwidth_percent ? 100 : 1e9, &v) < 0)
		return -1;
	o->minwidth = v;
	return 1;
}

/* it goes into CSS: keep it to what font names are made of */
static int set_fonttype(void *cli, const char *arg, const struct kp_opt *row)
{
	struct kp_svg_opts *o = cli;

	(void)row;
	if (!arg || !*arg || strpbrk(arg, "<>&{};\\\n\r\t")) {
		kp_err("--fonttype: \"%s\" is not a font name", arg ? arg : "");
		return -1;
	}
	o->fonttype = arg;
	return 1;
}

static int set_colors(void *cli, const char *arg, const struct kp_opt *row)
{
	struct kp_svg_opts *o = cli;

	(void)row;
	if (!kp_svg_palette_known(arg)) {
		kp_err("--colors: unknown palette \"%s\" (hot, mem, io, wakeup, chain, java, js, "
		       "perl, red, green, blue, aqua, yellow, purple, orange)",
		       arg ? arg : "");
		return -1;
	}
	o->colors = arg;
	return 1;
}

static int set_bgcolors(void *cli, const char *arg, const struct kp_opt *row)
{
	struct kp_svg_opts *o = cli;

	(void)row;
	if (!arg || !kp_svg_bgcolors_known(arg)) {
		kp_err("--bgcolors: expected yellow, blue, green, grey or #rrggbb, not \"%s\"",
		       arg ? arg : "");
		return -1;
	}
	o->bgcolors = arg;
	return 1;
}

/* A whole number from the row's min to max into an int field. */
static int set_int(void *cli, const char *arg, const struct kp_opt *row)
{
	return parse_int(row->name, arg, (int)row->min, (int)row->max,
			 (int *)(void *)((char *)cli + row->off));
}

/* A number from the row's min to max into a double field. */
static int set_number(void *cli, const char *arg, const struct kp_opt *row)
{
	return parse_double(row->name, arg, row->min, row->max,
			    (double *)(void *)((char *)cli + row->off));
}

/* The flame graph's options: flamegraph.pl's names, what each sets in
 * struct kp_svg_opts (a setter's return: 1 taken, -1 said why not), a
 * number's bounds, its help line. Its getopt value is 1000 + its row (a
 * second name: the row above's, so getopt counts them one). */
#define AT(f)		  KP_OPT_AT(struct kp_svg_opts, f)
#define INT(f, lo, hi)	  KP_OPT_CALL, AT(f), .min = lo, .max = hi, .set = set_int
#define NUMBER(f, lo, hi) KP_OPT_CALL, AT(f), .min = lo, .max = hi, .set = set_number

/* clang-format off */
static const struct kp_opt svg_opts[] = {
	{"title", 0, KP_OPT_TEXT, AT(title), .help = "  --title TEXT        title (default \"Flame Graph\", \"Icicle Graph\" with --inverted)\n"},
	{"subtitle", 0, KP_OPT_TEXT, AT(subtitle), .help = "  --subtitle TEXT     second title line\n"},
	{"width", 0, INT(width, 40, 1000000), .help = "  --width PX          image width (default 1200)\n"},
	{"height", 0, INT(frame_height, 1, 1000), .help = "  --height PX         height of each frame (default 16)\n"},
	{"fontsize", 0, NUMBER(fontsize, 0.1, 1000), .help = "  --fontsize N        font size (default 12)\n"},
	{"fonttype", 0, KP_OPT_CALL, .set = set_fonttype, .help = "  --fonttype FONT     font family (default Verdana)\n"},
	{"fontwidth", 0, NUMBER(fontwidth, 0.01, 10), .help = "  --fontwidth N       average glyph width relative to the font size (default 0.59)\n"},
	{"minwidth", 0, KP_OPT_CALL, .set = set_minwidth, .help = "  --minwidth N[%]     leave out frames narrower than N px or N% (default 0.1 px)\n"},
	{"countname", 0, KP_OPT_TEXT, AT(countname), .help =
		"  --countname TEXT    what the counts are (default \"samples\"; \"us\" when a\n"
		"                      recording's value is time, counted in microseconds; a\n"
		"                      folded file's \"# countname: UNIT\" line)\n"},
	{"nametype", 0, KP_OPT_TEXT, AT(nametype), .help = "  --nametype TEXT     what the names are (default \"Function:\")\n"},
	{"colors", 0, KP_OPT_CALL, .set = set_colors, .help =
		"  --colors PALETTE    hot (default), mem, io, wakeup, chain, java, js, perl, red, green, "
		"blue, aqua, yellow, purple, orange (or --color)\n"},
	{"color", 0, KP_OPT_CALL, .set = set_colors},
	{"bgcolors", 0, KP_OPT_CALL, .set = set_bgcolors, .help = "  --bgcolors COLOR    background: yellow, blue, green, grey or #rrggbb\n"},
	{"hash", 0, KP_OPT_FLAG, AT(hash), .help = "  --hash              colours from flamegraph.pl's name hash\n"},
	{"random", 0, KP_OPT_FLAG, AT(random), .help = "  --random            random colours (default: fixed colour per name)\n"},
	{"inverted", 0, KP_OPT_FLAG, AT(inverted), .help = "  --inverted          icicle graph: roots at the top\n"},
	{"reverse", 0, KP_OPT_FLAG, AT(reverse), .help = "  --reverse           reverse each stack (merge from the leaves)\n"},
	{"flamechart", 0, KP_OPT_FLAG, AT(flamechart), .help = "  --flamechart        keep input order (time) instead of sorting and merging\n"},
	{"negate", 0, KP_OPT_FLAG, AT(negate), .help = "  --negate            swap the hues of differential graphs\n"},
	{"total", 0, NUMBER(total, 1e-9, 9007199254740992.0), .help = "  --total N           width stands for N counts when N is above the sum\n"},
	{"factor", 0, NUMBER(factor, 1e-12, 1e12), .help = "  --factor N          multiply counts shown in titles by N\n"},
	{"notes", 0, KP_OPT_TEXT, AT(notes), .help = "  --notes TEXT        notes kept in the SVG as a comment\n"},
};
/* clang-format on */

#define N_SVG (sizeof(svg_opts) / sizeof(svg_opts[0]))

/* a row without a help line is the second name of the row above */
static int val_of(size_t i)
{
	return 1000 + (int)(svg_opts[i].help ? i : i - 1);
}

static const struct kp_opt *row_of(int val)
{
	for (size_t i = 0; i < N_SVG; i++)
		if (val_of(i) == val)
			return &svg_opts[i];
	return NULL;
}

struct option *kp_svg_options_with(const struct option *own, size_t nown)
{
	struct option *opts = kp_xcalloc(nown + N_SVG + 1, sizeof(*opts));

	memcpy(opts, own, nown * sizeof(*opts));
	for (size_t i = 0; i < N_SVG; i++)
		opts[nown + i] = (struct option){
			svg_opts[i].name,
			svg_opts[i].kind == KP_OPT_FLAG ? no_argument : required_argument, NULL,
			val_of(i)};
	return opts;
}

int kp_svg_options_apply(int val, const char *arg, struct kp_svg_opts *o)
{
	const struct kp_opt *r = row_of(val);

	if (r && r->kind == KP_OPT_FLAG)
		*(bool *)((char *)o + r->off) = true;
	else if (r && r->kind == KP_OPT_TEXT && arg)
		*(const char **)(void *)((char *)o + r->off) = arg;
	else if (r && r->kind == KP_OPT_TEXT)
		kp_err("--%s needs a value", r->name);
	else if (r)
		return r->set(o, arg, r);
	return !r ? 0 : r->kind == KP_OPT_TEXT && !arg ? -1 : 1;
}

void kp_svg_options_help(FILE *out)
{
	kp_opts_help(svg_opts, N_SVG, out);
}
