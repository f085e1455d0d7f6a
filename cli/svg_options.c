#include "cli/svg_options.h"

#include <errno.h>
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

static int parse_int(const char *name, const char *arg, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = arg && *arg ? strtol(arg, &end, 10) : 0;
	if (!arg || !*arg || *end || errno || v < min || v > max) {
		kp_err("--%s: expected a whole number from %d to %d, not \"%s\"", name, min, max,
		       arg ? arg : "");
		return -1;
	}
	*out = (int)v;
	return 1;
}

static int set_minwidth(const char *arg, struct kp_svg_opts *o)
{
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
static int set_fonttype(const char *arg, struct kp_svg_opts *o)
{
	if (!arg || !*arg || strpbrk(arg, "<>&{};\\\n\r\t")) {
		kp_err("--fonttype: \"%s\" is not a font name", arg ? arg : "");
		return -1;
	}
	o->fonttype = arg;
	return 1;
}

static int set_colors(const char *arg, struct kp_svg_opts *o)
{
	if (!kp_svg_palette_known(arg)) {
		kp_err("--colors: unknown palette \"%s\" (hot, mem, io, wakeup, chain, java, js, "
		       "perl, red, green, blue, aqua, yellow, purple, orange)",
		       arg ? arg : "");
		return -1;
	}
	o->colors = arg;
	return 1;
}

static int set_bgcolors(const char *arg, struct kp_svg_opts *o)
{
	if (!arg || !kp_svg_bgcolors_known(arg)) {
		kp_err("--bgcolors: expected yellow, blue, green, grey or #rrggbb, not \"%s\"",
		       arg ? arg : "");
		return -1;
	}
	o->bgcolors = arg;
	return 1;
}

/* What an option does with its value. */
enum svg_kind {
	SVG_FLAG,   /* sets a bool (no value) */
	SVG_TEXT,   /* keeps the string */
	SVG_INT,    /* a whole number from min to max into an int */
	SVG_NUMBER, /* a number from min to max into a double */
	SVG_CALL,   /* set() checks and keeps it */
};

/* One flame-graph option: flamegraph.pl's name, what it sets in struct
 * kp_svg_opts, a number's bounds. Its getopt value is 1000 + its row (a
 * second name of set()'s option: the first's, so getopt counts them one). */
struct svg_opt {
	const char *name;
	enum svg_kind kind;
	size_t off;
	double min, max;
	int (*set)(const char *arg, struct kp_svg_opts *o);
};

#define AT(f) .off = offsetof(struct kp_svg_opts, f)

/* clang-format off */
static const struct svg_opt svg_opts[] = {
	{"title", SVG_TEXT, AT(title)},
	{"subtitle", SVG_TEXT, AT(subtitle)},
	{"width", SVG_INT, AT(width), .min = 40, .max = 1000000},
	{"height", SVG_INT, AT(frame_height), .min = 1, .max = 1000},
	{"fontsize", SVG_NUMBER, AT(fontsize), .min = 0.1, .max = 1000},
	{"fonttype", SVG_CALL, .set = set_fonttype},
	{"fontwidth", SVG_NUMBER, AT(fontwidth), .min = 0.01, .max = 10},
	{"minwidth", SVG_CALL, .set = set_minwidth},
	{"countname", SVG_TEXT, AT(countname)},
	{"nametype", SVG_TEXT, AT(nametype)},
	{"colors", SVG_CALL, .set = set_colors},
	{"color", SVG_CALL, .set = set_colors},
	{"bgcolors", SVG_CALL, .set = set_bgcolors},
	{"hash", SVG_FLAG, AT(hash)},
	{"random", SVG_FLAG, AT(random)},
	{"inverted", SVG_FLAG, AT(inverted)},
	{"reverse", SVG_FLAG, AT(reverse)},
	{"flamechart", SVG_FLAG, AT(flamechart)},
	{"negate", SVG_FLAG, AT(negate)},
	{"total", SVG_NUMBER, AT(total), .min = 1e-9, .max = 9007199254740992.0},
	{"factor", SVG_NUMBER, AT(factor), .min = 1e-12, .max = 1e12},
	{"notes", SVG_TEXT, AT(notes)},
};
/* clang-format on */

#define N_SVG (sizeof(svg_opts) / sizeof(svg_opts[0]))

static int val_of(size_t i)
{
	size_t j = 0;

	while (svg_opts[i].set && svg_opts[j].set != svg_opts[i].set)
		j++;
	return 1000 + (int)(svg_opts[i].set ? j : i);
}

static const struct svg_opt *row_of(int val)
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
		opts[nown + i] = (struct option){svg_opts[i].name,
						 svg_opts[i].kind == SVG_FLAG ? no_argument
									      : required_argument,
						 NULL, val_of(i)};
	return opts;
}

int kp_svg_options_apply(int val, const char *arg, struct kp_svg_opts *o)
{
	const struct svg_opt *r = row_of(val);
	char *field = r ? (char *)o + r->off : NULL;

	if (!r)
		return 0;
	switch (r->kind) {
	case SVG_FLAG:
		*(bool *)field = true;
		return 1;
	case SVG_TEXT:
		*(const char **)field = arg;
		if (!arg)
			kp_err("--%s needs a value", r->name);
		return arg ? 1 : -1;
	case SVG_INT:
		return parse_int(r->name, arg, (int)r->min, (int)r->max, (int *)(void *)field);
	case SVG_NUMBER:
		return parse_double(r->name, arg, r->min, r->max, (double *)(void *)field);
	default:
		return r->set(arg, o);
	}
}

void kp_svg_options_help(FILE *out)
{
	fputs("  --title TEXT        title (default \"Flame Graph\", \"Icicle Graph\" with "
	      "--inverted)\n"
	      "  --subtitle TEXT     second title line\n"
	      "  --width PX          image width (default 1200)\n"
	      "  --height PX         height of each frame (default 16)\n"
	      "  --fontsize N        font size (default 12)\n"
	      "  --fonttype FONT     font family (default Verdana)\n"
	      "  --fontwidth N       average glyph width relative to the font size (default 0.59)\n"
	      "  --minwidth N[%]     leave out frames narrower than N px or N% (default 0.1 px)\n"
	      "  --countname TEXT    what the counts are (default \"samples\"; \"us\" when a\n"
	      "                      recording's value is time, counted in microseconds; a\n"
	      "                      folded file's \"# countname: UNIT\" line)\n"
	      "  --nametype TEXT     what the names are (default \"Function:\")\n"
	      "  --colors PALETTE    hot (default), mem, io, wakeup, chain, java, js, perl, red, "
	      "green, "
	      "blue, aqua, yellow, purple, orange (or --color)\n"
	      "  --bgcolors COLOR    background: yellow, blue, green, grey or #rrggbb\n"
	      "  --hash              colours from flamegraph.pl's name hash\n"
	      "  --random            random colours (default: fixed colour per name)\n"
	      "  --inverted          icicle graph: roots at the top\n"
	      "  --reverse           reverse each stack (merge from the leaves)\n"
	      "  --flamechart        keep input order (time) instead of sorting and merging\n"
	      "  --negate            swap the hues of differential graphs\n"
	      "  --total N           width stands for N counts when N is above the sum\n"
	      "  --factor N          multiply counts shown in titles by N\n"
	      "  --notes TEXT        notes kept in the SVG as a comment\n",
	      out);
}
