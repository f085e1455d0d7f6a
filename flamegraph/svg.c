/* The flame-graph SVG. Geometry follows flamegraph.pl step by step, so the
 * same folded input draws the same boxes:
 *   1. stack lines sorted bytewise ("a;b;c N", kinds as _[k]/_[j]/_[i]),
 *      or kept in input order for a flame chart;
 *   2. kp_layout_flow (layout.c): walking the sorted stacks, a frame
 *      that differs from the previous stack at the same depth closes
 *      there and a new one opens;
 *      a closed frame spans [start, end) in cumulative counts;
 *   3. frames narrower than minwidth (in counts: minwidth px divided by
 *      px per count) are dropped; their counts stay in their parents;
 *   4. x = 10 + start * (width - 20) / total, printed %.1f; the width is
 *      the difference of the printed ends; y from the bottom (or from the
 *      top for an icicle graph), 16 px a level.
 * The numbers are formatted the way Perl formats them (see perl_num).
 *
 * Differential tables (a BEFORE count beside each stack's count, as
 * difffolded.pl writes them) are drawn as flamegraph.pl draws them: the
 * same geometry from the AFTER counts; a stack's delta is AFTER - BEFORE,
 * a frame's delta the sum of the deltas of the stacks that end in it (its
 * self change), coloured on flamegraph.pl's white-to-red (growth) and
 * white-to-blue scale relative to the largest stack delta (at least 1).
 * With diff_shares (kprof diff) BEFORE is first scaled to AFTER's total,
 * so the deltas are changes of share.
 *
 * Off-CPU time (stacks whose leaf is a marker frame, profile/wait.h):
 * frames more than half off-CPU take the io palette's blues, as
 * flamegraph.pl --colors io draws bcc's offcputime, whatever the palette
 * (a change of share colours a differential frame first), and every frame
 * with some says how much in its title. */
#include "flamegraph/svg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "flamegraph/layout.h"
#include "flamegraph/palette.h"
#include "flamegraph/svg_script.h"
#include "flamegraph/xmlout.h"
#include "util/utf8.h"
#include "util/xalloc.h"

#define XPAD	    KP_LAYOUT_XPAD
#define FRAMEPAD    1.0
#define SEARCHCOLOR "rgb(230,0,230)"

void kp_svg_opts_init(struct kp_svg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 1200;
	o->frame_height = 16;
	o->fontsize = 12;
	o->fonttype = "Verdana";
	o->minwidth = 0.1;
	o->countname = NULL; /* "samples", unless the caller knows better */
	o->nametype = "Function:";
	o->colors = "hot";
	o->fontwidth = 0.59;
	o->factor = 1;
}

bool kp_svg_palette_known(const char *name)
{
	return name && kp_palette_lookup(name) >= 0;
}

bool kp_svg_bgcolors_known(const char *name)
{
	const char *c1, *c2;
	size_t l1, l2;

	return kp_palette_background(name, KP_PAL_HOT, &c1, &l1, &c2, &l2);
}

struct svg {
	const struct kp_folded *f;
	const struct kp_svg_opts *o;
	FILE *out;
	struct kp_layout lay; /* the frames and the scales */
	enum kp_palette pal;
	enum kp_color_mode mode;
	uint64_t rng;
	char *scratch; /* annotated names for colouring */
	size_t scratch_cap;
};

static void put(FILE *out, const char *s)
{
	fputs_unlocked(s, out);
}

static void putnum(FILE *out, double v)
{
	char buf[64];
	int n = kp_layout_perl_num(buf, sizeof(buf), v);

	fwrite_unlocked(buf, 1, (size_t)n, out);
}

static void putesc(FILE *out, const char *s)
{
	kp_xml_escape(out, s, strlen(s));
}

static void put_commas(FILE *out, const char *digits)
{
	size_t len = strlen(digits), i = 0;

	if (digits[0] == '-') {
		putc_unlocked('-', out);
		i = 1;
	}
	for (; i < len; i++) {
		putc_unlocked(digits[i], out);
		if (i + 1 < len && (len - i - 1) % 3 == 0)
			putc_unlocked(',', out);
	}
}

static void put_text(FILE *out, const char *id, double x, double y, const char *cls, const char *s)
{
	char buf[64];

	put(out, "<text");
	if (id) {
		put(out, " id=\"");
		put(out, id);
		put(out, "\"");
	}
	if (cls) {
		put(out, " class=\"");
		put(out, cls);
		put(out, "\"");
	}
	snprintf(buf, sizeof(buf), " x=\"%.2f\" y=\"", x);
	put(out, buf);
	putnum(out, y);
	put(out, "\">");
	putesc(out, s);
	put(out, "</text>\n");
}

static void put_js_string(FILE *out, const char *s)
{
	putc_unlocked('"', out);
	kp_js_escape(out, s, strlen(s));
	putc_unlocked('"', out);
}

/* XML comments may not contain "--" nor end in "-". */
static void put_comment_text(FILE *out, const char *s)
{
	size_t len = strlen(s);
	char *copy = kp_xstrndup(s, len);

	for (size_t i = 0; i + 1 < len; i++)
		if (copy[i] == '-' && copy[i + 1] == '-')
			copy[i + 1] = '_';
	if (len && copy[len - 1] == '-')
		copy[len - 1] = '_';
	kp_xml_escape(out, copy, len);
	free(copy);
}

static const char *title_of(const struct kp_svg_opts *o)
{
	if (o->title && *o->title)
		return o->title;
	if (o->flamechart)
		return "Flame Chart";
	return o->inverted ? "Icicle Graph" : "Flame Graph";
}

struct page {
	double fs, ypad1, ypad2, extra_top, height;
	size_t nlines; /* subtitle and info lines */
};

static void write_head(struct svg *g, const struct page *l)
{
	const struct kp_svg_opts *o = g->o;
	FILE *out = g->out;
	const char *bg1, *bg2;
	size_t bg1_len, bg2_len, line = 0;
	char buf[128];

	kp_palette_background(o->bgcolors, g->pal, &bg1, &bg1_len, &bg2, &bg2_len);
	put(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		 "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
		 "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n");
	snprintf(buf, sizeof(buf), "<svg version=\"1.1\" width=\"%d\" height=\"", o->width);
	put(out, buf);
	putnum(out, l->height);
	snprintf(buf, sizeof(buf), "\" onload=\"kprofInit(evt)\" viewBox=\"0 0 %d ", o->width);
	put(out, buf);
	putnum(out, l->height);
	put(out,
	    "\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
	    "<!-- Flame graph written by kprof: click a frame to zoom, Ctrl-F to search. -->\n");
	put(out, "<!-- NOTES: ");
	if (o->notes)
		put_comment_text(out, o->notes);
	put(out, " -->\n<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" "
		 "x2=\"0\" >\n\t\t<stop stop-color=\"");
	kp_xml_escape(out, bg1, bg1_len);
	put(out, "\" offset=\"5%\" />\n\t\t<stop stop-color=\"");
	kp_xml_escape(out, bg2, bg2_len);
	put(out, "\" offset=\"95%\" />\n\t</linearGradient>\n</defs>\n"
		 "<style type=\"text/css\">\n\ttext { font-family:");
	putesc(out, o->fonttype);
	put(out, "; font-size:");
	putnum(out, l->fs);
	put(out,
	    "px; fill:rgb(0,0,0); }\n"
	    "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
	    "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
	    "\t#subtitle, .info, #nosamples { text-anchor:middle; fill:rgb(80,80,80); }\n"
	    "\t#title { text-anchor:middle; font-size:");
	putnum(out, l->fs + 5);
	put(out,
	    "px; }\n"
	    "\t#unzoom { cursor:pointer; }\n"
	    "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
	    "\t.hide { display:none; }\n"
	    "\t.parent { opacity:0.5; }\n"
	    "</style>\n<script type=\"text/ecmascript\">\n<![CDATA[\nvar kprofConfig = {width: ");
	snprintf(buf, sizeof(buf), "%d, xpad: %g, frameheight: %d, fontsize: ", o->width, XPAD,
		 o->frame_height);
	put(out, buf);
	putnum(out, l->fs);
	put(out, ", fontwidth: ");
	putnum(out, o->fontwidth);
	put(out, o->inverted ? ", inverted: true" : ", inverted: false");
	put(out, ",\n\tsearchcolor: \"" SEARCHCOLOR "\", nametype: ");
	put_js_string(out, o->nametype);
	put(out, ", countname: ");
	put_js_string(out, o->countname);
	put(out, "};\n");
	put(out, kp_svg_script);
	put(out, "]]>\n</script>\n");

	snprintf(buf, sizeof(buf), "<rect x=\"0.0\" y=\"0\" width=\"%d.0\" height=\"", o->width);
	put(out, buf);
	snprintf(buf, sizeof(buf), "%.1f", l->height);
	put(out, buf);
	put(out, "\" fill=\"url(#background)\" />\n");
	put_text(out, "title", o->width / 2, l->fs * 2, NULL, title_of(o));
	if (o->subtitle && *o->subtitle)
		put_text(out, "subtitle", o->width / 2, l->fs * 4, NULL, o->subtitle);
	line = o->subtitle && *o->subtitle ? 1 : 0;
	for (size_t i = 0; i < o->n_info_lines; i++, line++)
		put_text(out, NULL, o->width / 2, l->fs * 4 + (double)line * (l->fs + 4), "info",
			 o->info_lines[i] ? o->info_lines[i] : "");
	put_text(out, "details", XPAD, l->height - l->ypad2 / 2, NULL, " ");
	put_text(out, "unzoom", XPAD, l->fs * 2, "hide", "Reset Zoom");
	put_text(out, "search", o->width - XPAD - 100, l->fs * 2, NULL, "Search");
	put_text(out, "ignorecase", o->width - XPAD - 16, l->fs * 2, NULL, "ic");
	put_text(out, "matched", o->width - XPAD - 100, l->height - l->ypad2 / 2, NULL, " ");
}

/* The name as flamegraph.pl would hold it: with its kind suffix (and _[w]
 * for waker frames of chain graphs); the palettes read it. */
static const char *annotated(struct svg *g, const struct kp_layout_node *n, size_t *len)
{
	size_t nlen;
	const char *name = n->depth ? kp_folded_frame_name(g->f, n->fid, &nlen) : "";
	const char *suffix = kp_folded_kind_suffix(kp_folded_frame_kind(n->fid));
	size_t slen = strlen(suffix);

	if (!n->depth)
		nlen = 0;
	kp_xgrow(&g->scratch, &g->scratch_cap, nlen + slen + 5, 1);
	memcpy(g->scratch, name, nlen);
	memcpy(g->scratch + nlen, suffix, slen);
	memcpy(g->scratch + nlen + slen, n->waker ? "_[w]" : "", n->waker ? 4 : 0);
	*len = nlen + slen + (n->waker ? 4 : 0);
	g->scratch[*len] = '\0';
	return g->scratch;
}

/* Integer counts print exactly (flamegraph.pl's %.0f of a double sum
 * drifts past 2^53); decimal counts, --factor and the root under --total
 * keep flamegraph.pl's rounding. */
static bool exact_title(const struct svg *g, const struct kp_layout_node *n)
{
	return kp_folded_decimals(g->f) == 0 && g->o->factor == 1 &&
	       (n->depth || g->lay.timemax == g->lay.time);
}

/* flamegraph.pl's color_scale: white for no change, to red (255,0,0) for
 * the largest growth and blue (0,0,255) for the largest shrink. */
static struct kp_color color_scale(double value, double max, bool negate)
{
	int r = 255, gr = 255, b = 255;

	if (negate)
		value = -value;
	if (value > 0)
		gr = b = (int)(210 * (max - value) / max);
	else if (value < 0)
		r = gr = (int)(210 * (max + value) / max);
	return (struct kp_color){(uint8_t)r, (uint8_t)gr, (uint8_t)b};
}

/* A change in percent or points, "%.2f" with a "+" for growth, as
 * flamegraph.pl prints it (never "-0.00" for no change). */
static void put_change(FILE *out, double v)
{
	char buf[64];

	if (v == 0)
		v = 0; /* -0.0 */
	snprintf(buf, sizeof(buf), "%s%.2f", v > 0 ? "+" : "", v);
	put(out, buf);
}

/* The differential part of a title: flamegraph.pl's "; +D%" (the self
 * delta in percent of the total), or for share changes "; self +D,
 * total +T points" (the frame's self and total share in AFTER minus the
 * same in BEFORE; NEW minus BASE even when AFTER holds BASE). */
static void put_delta(struct svg *g, const struct kp_layout_node *n)
{
	const struct kp_svg_opts *o = g->o;
	FILE *out = g->out;
	unsigned decimals = kp_folded_decimals(g->f);
	double sign = o->diff_swapped ? -1 : 1, total;

	if (!o->diff_shares) {
		put(out, "; ");
		put_change(out,
			   100 * (o->negate ? -n->delta : n->delta) / (g->lay.timemax * o->factor));
		put(out, "%");
		return;
	}
	total = 100 * kp_count_double(n->samples, decimals) / g->lay.time;
	if (g->lay.time_before > 0)
		total -= 100 * kp_count_double(n->before, decimals) / g->lay.time_before;
	put(out, "; self ");
	put_change(out, sign * 100 * n->delta / g->lay.time);
	put(out, ", total ");
	put_change(out, sign * total);
	put(out, " points");
}

/* The off-CPU part of a title, for a frame with off-CPU time in it:
 * "; 80% off-CPU" (the rest is on CPU); "<1%" and ">99%" rather than a
 * rounding to 0 or 100 that would hide one side. */
static void put_offcpu(struct svg *g, const struct kp_layout_node *n)
{
	double pct;
	char buf[32];

	if (!n->offcpu || !n->samples)
		return;
	pct = 100 * kp_count_double(n->offcpu, 0) / kp_count_double(n->samples, 0);
	if (n->offcpu < n->samples && pct >= 99.5)
		snprintf(buf, sizeof(buf), "; >99%% off-CPU");
	else if (pct < 0.5)
		snprintf(buf, sizeof(buf), "; <1%% off-CPU");
	else
		snprintf(buf, sizeof(buf), "; %.0f%% off-CPU", pct);
	putesc(g->out, buf);
}

/* The frame's <title>: its name, count, share, change, off-CPU part and
 * note. */
static void write_title(struct svg *g, const struct kp_layout_node *n, const char *name,
			size_t nlen, double end)
{
	const struct kp_svg_opts *o = g->o;
	FILE *out = g->out;
	char samples[KP_COUNT_BUF + 16], buf[160];

	put(out, "<g>\n<title>");
	kp_xml_escape(out, name, nlen);
	put(out, " (");
	if (exact_title(g, n))
		kp_count_format(n->samples, 0, samples);
	else
		snprintf(samples, sizeof(samples), "%.0f", (end - n->start) * o->factor);
	put_commas(out, samples);
	putc_unlocked(' ', out);
	putesc(out, o->countname);
	if (!n->depth) {
		put(out, ", 100%");
		put_offcpu(g, n);
		put(out, ")</title>");
		return;
	}
	snprintf(buf, sizeof(buf), ", %.2f%%",
		 100 * strtod(samples, NULL) / (g->lay.timemax * o->factor));
	put(out, buf);
	if (n->has_delta)
		put_delta(g, n);
	put_offcpu(g, n);
	if (o->frame_note) {
		const char *note =
			o->frame_note(o->frame_note_arg, name, nlen, kp_folded_frame_kind(n->fid));

		if (note) {
			put(out, "; ");
			kp_xml_escape(out, note, strlen(note));
		}
	}
	put(out, ")</title>");
}

/* The frame's fill: grey for chain graphs' separators, the change scale
 * for a frame with a delta, the io palette's blues (flamegraph.pl's for
 * off-CPU graphs) for a frame more than half off-CPU, else the palette's
 * colour of its annotated name ann[0..alen). */
static struct kp_color frame_color(struct svg *g, const struct kp_layout_node *n, const char *ann,
				   size_t alen)
{
	if (n->depth && alen == 2 && ann[0] == '-' && ann[1] == '-')
		return (struct kp_color){160, 160, 160};
	if (n->depth && alen == 1 && ann[0] == '-')
		return (struct kp_color){200, 200, 200};
	if (n->has_delta)
		return color_scale(n->delta, g->lay.maxdelta, g->o->negate);
	if (n->offcpu > n->samples - n->offcpu)
		return kp_palette_color(KP_PAL_IO, g->mode, ann, alen,
					n->depth ? kp_folded_frame_kind(n->fid) : KP_FRAME_ROOT,
					&g->rng);
	return kp_palette_color(g->pal, g->mode, ann, alen,
				n->depth ? kp_folded_frame_kind(n->fid) : KP_FRAME_ROOT, &g->rng);
}

/* The label of a frame from x1 to x2, between y1 and y2: as many
 * characters as fit, ".." when cut; frames too narrow for three
 * characters get none (the script adds it on zoom). */
static void write_label(struct svg *g, const struct page *l, const char *name, size_t nlen,
			double x1, double x2, double y1, double y2)
{
	FILE *out = g->out;
	double chars_d = (x2 - x1) / (l->fs * g->o->fontwidth);
	char buf[160];
	size_t chars, cps;

	if (chars_d < 3)
		return;
	chars = chars_d > 1e6 ? 1000000 : (size_t)chars_d;
	cps = kp_utf8_count(name, nlen);
	snprintf(buf, sizeof(buf), "<text x=\"%.2f\" y=\"", x1 + 3);
	put(out, buf);
	putnum(out, 3 + (y1 + y2) / 2);
	put(out, "\">");
	if (chars < cps) {
		kp_xml_escape(out, name, kp_utf8_prefix(name, nlen, chars - 2));
		put(out, "..");
	} else {
		kp_xml_escape(out, name, nlen);
	}
	put(out, "</text>\n");
}

static void write_frame(struct svg *g, const struct page *l, const struct kp_layout_node *n)
{
	const struct kp_svg_opts *o = g->o;
	FILE *out = g->out;
	double end = n->depth ? n->end : g->lay.timemax;
	double x1 = XPAD + n->start * g->lay.widthpertime, x2 = XPAD + end * g->lay.widthpertime;
	double y1, y2;
	char sx1[64], sx2[64], buf[160];
	long long t1, t2, tw;
	size_t nlen, alen;
	const char *name;
	const char *ann = annotated(g, n, &alen);
	struct kp_color c;

	if (n->depth) {
		name = kp_folded_frame_name(g->f, n->fid, &nlen);
		/* the waker annotation is not part of the name either */
		if (nlen >= 4 && memcmp(name + nlen - 4, "_[w]", 4) == 0)
			nlen -= 4;
	} else {
		name = "all";
		nlen = 3;
	}
	if (!o->inverted) {
		y1 = l->height - l->ypad2 - (n->depth + 1.0) * o->frame_height + FRAMEPAD;
		y2 = l->height - l->ypad2 - (double)n->depth * o->frame_height;
	} else {
		y1 = l->ypad1 + l->extra_top + (double)n->depth * o->frame_height;
		y2 = l->ypad1 + l->extra_top + (n->depth + 1.0) * o->frame_height - FRAMEPAD;
	}
	/* the width is the difference of the printed ends, as flamegraph.pl
	 * computes it: siblings then meet exactly */
	snprintf(sx1, sizeof(sx1), "%.1f", x1);
	snprintf(sx2, sizeof(sx2), "%.1f", x2);
	t1 = llround(strtod(sx1, NULL) * 10);
	t2 = llround(strtod(sx2, NULL) * 10);
	tw = t2 - t1;

	write_title(g, n, name, nlen, end);
	c = frame_color(g, n, ann, alen);
	snprintf(buf, sizeof(buf), "<rect x=\"%s\" y=\"", sx1);
	put(out, buf);
	putnum(out, y1);
	snprintf(buf, sizeof(buf),
		 "\" width=\"%s%lld.%lld\" height=\"%.1f\" fill=\"#%02x%02x%02x\" rx=\"2\" "
		 "ry=\"2\" />\n",
		 tw < 0 ? "-" : "", llabs(tw) / 10, llabs(tw) % 10, y2 - y1, c.r, c.g, c.b);
	put(out, buf);
	write_label(g, l, name, nlen, x1, x2, y1, y2);
	put(out, "</g>\n");
}

int kp_svg_write(const struct kp_folded *f, const struct kp_svg_opts *opts, FILE *out,
		 struct kp_diag *d)
{
	struct kp_svg_opts defaults, copy = *opts;
	const struct kp_svg_opts *o = &copy;
	struct svg g = {.f = f, .o = o, .out = out};
	struct page l;
	int pal;

	/* a caller that left a string NULL gets the default */
	kp_svg_opts_init(&defaults);
	if (!copy.fonttype)
		copy.fonttype = defaults.fonttype;
	if (!copy.countname)
		copy.countname = "samples";
	if (!copy.nametype)
		copy.nametype = defaults.nametype;
	if (!copy.colors)
		copy.colors = defaults.colors;
	if (!copy.info_lines)
		copy.n_info_lines = 0;
	pal = kp_palette_lookup(o->colors);
	if (pal < 0)
		return kp_diag_set(d, -EINVAL, "unknown palette \"%s\"", o->colors);
	g.pal = (enum kp_palette)pal;
	if (!kp_svg_bgcolors_known(o->bgcolors) && o->bgcolors && *o->bgcolors)
		return kp_diag_set(d, -EINVAL, "unknown background \"%s\"", o->bgcolors);
	if (o->width < 2 * XPAD + 1 || o->frame_height < 1 || !(o->fontsize > 0) ||
	    !(o->fontwidth > 0) || !(o->factor > 0) || !(o->minwidth >= 0) ||
	    !isfinite(o->fontsize) || !isfinite(o->minwidth))
		return kp_diag_set(d, -EINVAL, "flame graph options out of range");
	if (!(kp_folded_total(f) > 0) && !o->allow_empty)
		return kp_diag_set(d, -ENODATA, "no samples to draw");
	g.mode = o->random ? KP_COLOR_RANDOM : o->hash ? KP_COLOR_HASH : KP_COLOR_NAMESEED;
	/* --random: a different picture each run */
	g.rng = ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ 0x6b70726f66ULL;

	g.lay = (struct kp_layout){.f = f, .o = o, .chain = g.pal == KP_PAL_CHAIN};
	if (kp_folded_total(f) > 0)
		kp_layout_flow(&g.lay);

	l.fs = o->fontsize;
	l.ypad1 = l.fs * 3;
	l.ypad2 = l.fs * 2 + 10;
	l.nlines = (o->subtitle && *o->subtitle ? 1 : 0) + o->n_info_lines;
	l.extra_top = l.nlines ? l.fs * 2 + (double)(l.nlines - 1) * (l.fs + 4) : 0;
	l.height = (g.lay.depthmax + 1.0) * o->frame_height + l.ypad1 + l.ypad2 + l.extra_top;

	write_head(&g, &l);
	put(out, "<g id=\"frames\">\n");
	for (size_t i = 0; i < g.lay.nnodes; i++)
		write_frame(&g, &l, &g.lay.nodes[i]);
	put(out, "</g>\n");
	if (!g.lay.nnodes)
		put_text(out, "nosamples", o->width / 2.0,
			 l.height - l.ypad2 - o->frame_height / 2.0, NULL,
			 "No samples were recorded");
	put(out, "</svg>\n");
	kp_layout_fini(&g.lay);
	free(g.scratch);
	if (ferror(out))
		return kp_diag_errno(d, -(errno ? errno : EIO), "cannot write the flame graph");
	return 0;
}
