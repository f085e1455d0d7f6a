#include "cli/svg_options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/messages.h"
#include "util/xalloc.h"

enum {
	OPT_TITLE = 1000,
	OPT_SUBTITLE,
	OPT_WIDTH,
	OPT_HEIGHT,
	OPT_FONTSIZE,
	OPT_FONTTYPE,
	OPT_FONTWIDTH,
	OPT_MINWIDTH,
	OPT_COUNTNAME,
	OPT_NAMETYPE,
	OPT_COLORS,
	OPT_BGCOLORS,
	OPT_HASH,
	OPT_RANDOM,
	OPT_INVERTED,
	OPT_REVERSE,
	OPT_FLAMECHART,
	OPT_NEGATE,
	OPT_TOTAL,
	OPT_FACTOR,
	OPT_NOTES,
};

const struct option kp_svg_options_long[] = {
	{"title", required_argument, NULL, OPT_TITLE},
	{"subtitle", required_argument, NULL, OPT_SUBTITLE},
	{"width", required_argument, NULL, OPT_WIDTH},
	{"height", required_argument, NULL, OPT_HEIGHT},
	{"fontsize", required_argument, NULL, OPT_FONTSIZE},
	{"fonttype", required_argument, NULL, OPT_FONTTYPE},
	{"fontwidth", required_argument, NULL, OPT_FONTWIDTH},
	{"minwidth", required_argument, NULL, OPT_MINWIDTH},
	{"countname", required_argument, NULL, OPT_COUNTNAME},
	{"nametype", required_argument, NULL, OPT_NAMETYPE},
	{"colors", required_argument, NULL, OPT_COLORS},
	{"color", required_argument, NULL, OPT_COLORS},
	{"bgcolors", required_argument, NULL, OPT_BGCOLORS},
	{"hash", no_argument, NULL, OPT_HASH},
	{"random", no_argument, NULL, OPT_RANDOM},
	{"inverted", no_argument, NULL, OPT_INVERTED},
	{"reverse", no_argument, NULL, OPT_REVERSE},
	{"flamechart", no_argument, NULL, OPT_FLAMECHART},
	{"negate", no_argument, NULL, OPT_NEGATE},
	{"total", required_argument, NULL, OPT_TOTAL},
	{"factor", required_argument, NULL, OPT_FACTOR},
	{"notes", required_argument, NULL, OPT_NOTES},
	{NULL, 0, NULL, 0},
};

struct option *kp_svg_options_with(const struct option *own, size_t nown)
{
	size_t nsvg = 0;
	struct option *opts;

	while (kp_svg_options_long[nsvg].name)
		nsvg++;
	opts = kp_xcalloc(nown + nsvg + 1, sizeof(*opts));
	memcpy(opts, own, nown * sizeof(*opts));
	memcpy(opts + nown, kp_svg_options_long, nsvg * sizeof(*opts));
	return opts;
}

static const char *name_of(int val)
{
	for (const struct option *o = kp_svg_options_long; o->name; o++)
		if (o->val == val)
			return o->name;
	return "?";
}

/* A number in [min, max]; the whole argument must be the number. */
static int parse_double(int val, const char *arg, double min, double max, double *out)
{
	if (!arg || kp_args_parse_double(arg, min, max, false, out) < 0) {
		kp_err("--%s: expected a number from %g to %g, not \"%s\"", name_of(val), min, max,
		       arg ? arg : "");
		return -1;
	}
	return 1;
}

static int parse_int(int val, const char *arg, int min, int max, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = arg && *arg ? strtol(arg, &end, 10) : 0;
	if (!arg || !*arg || *end || errno || v < min || v > max) {
		kp_err("--%s: expected a whole number from %d to %d, not \"%s\"", name_of(val), min,
		       max, arg ? arg : "");
		return -1;
	}
	*out = (int)v;
	return 1;
}

static int parse_minwidth(const char *arg, struct kp_svg_opts *o)
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
	if (parse_double(OPT_MINWIDTH, num, 0, o->minwidth_percent ? 100 : 1e9, &v) < 0)
		return -1;
	o->minwidth = v;
	return 1;
}

static int check_text(int val, const char *arg)
{
	if (!arg) {
		kp_err("--%s needs a value", name_of(val));
		return -1;
	}
	return 1;
}

int kp_svg_options_apply(int val, const char *arg, struct kp_svg_opts *o)
{
	switch (val) {
	case OPT_TITLE:
		o->title = arg;
		return check_text(val, arg);
	case OPT_SUBTITLE:
		o->subtitle = arg;
		return check_text(val, arg);
	case OPT_WIDTH:
		return parse_int(val, arg, 40, 1000000, &o->width);
	case OPT_HEIGHT:
		return parse_int(val, arg, 1, 1000, &o->frame_height);
	case OPT_FONTSIZE:
		return parse_double(val, arg, 0.1, 1000, &o->fontsize);
	case OPT_FONTWIDTH:
		return parse_double(val, arg, 0.01, 10, &o->fontwidth);
	case OPT_FONTTYPE:
		/* it goes into CSS: keep it to what font names are made of */
		if (!arg || !*arg || strpbrk(arg, "<>&{};\\\n\r\t")) {
			kp_err("--fonttype: \"%s\" is not a font name", arg ? arg : "");
			return -1;
		}
		o->fonttype = arg;
		return 1;
	case OPT_MINWIDTH:
		return parse_minwidth(arg, o);
	case OPT_COUNTNAME:
		o->countname = arg;
		return check_text(val, arg);
	case OPT_NAMETYPE:
		o->nametype = arg;
		return check_text(val, arg);
	case OPT_COLORS:
		if (!kp_svg_palette_known(arg)) {
			kp_err("--colors: unknown palette \"%s\" (hot, mem, io, wakeup, chain, "
			       "java, "
			       "js, perl, red, green, blue, aqua, yellow, purple, orange)",
			       arg ? arg : "");
			return -1;
		}
		o->colors = arg;
		return 1;
	case OPT_BGCOLORS:
		if (!arg || !kp_svg_bgcolors_known(arg)) {
			kp_err("--bgcolors: expected yellow, blue, green, grey or #rrggbb, not "
			       "\"%s\"",
			       arg ? arg : "");
			return -1;
		}
		o->bgcolors = arg;
		return 1;
	case OPT_HASH:
		o->hash = true;
		return 1;
	case OPT_RANDOM:
		o->random = true;
		return 1;
	case OPT_INVERTED:
		o->inverted = true;
		return 1;
	case OPT_REVERSE:
		o->reverse = true;
		return 1;
	case OPT_FLAMECHART:
		o->flamechart = true;
		return 1;
	case OPT_NEGATE:
		o->negate = true;
		return 1;
	case OPT_TOTAL:
		return parse_double(val, arg, 1e-9, 9007199254740992.0, &o->total);
	case OPT_FACTOR:
		return parse_double(val, arg, 1e-12, 1e12, &o->factor);
	case OPT_NOTES:
		o->notes = arg;
		return check_text(val, arg);
	default:
		return 0;
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
