/* kp_collapse: perf script -> folded stacks, with stackcollapse-perf.pl's rules.
 *
 * The Perl script is a handful of regular expressions; each is reproduced
 * here as a hand-written matcher that returns what Perl's backtracking
 * matcher returns (captures included), in linear time. The comment above
 * each matcher quotes the expression it stands for.
 *
 * Speed: a profile repeats the same frame lines over and over (the same
 * return addresses), so each distinct frame line is matched and tidied once
 * and remembered as a list of frame ids; a sample is then a short array of
 * ids, added to a folded table (profile/folded.h, verbatim: names as the
 * script prints them) keyed by that array. The one folded writer
 * (formats/folded_write.h) joins names into "a;b;c" text once per
 * distinct stack, at the end, in the script's order. */
#include "formats/collapse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/folded_write.h"
#include "profile/folded.h"
#include "util/bytes.h"
#include "util/count.h"
#include "util/xalloc.h"

/* A line longer than this is skipped (counted as bad) instead of buffered.
 * Overridable at build time, as the cache limits below, to test that path. */
#ifndef MAX_LINE
#define MAX_LINE (64u << 20)
#endif
/* small enough that the chunk just read is still in L2 when parsed */
#define READ_BUF_SIZE  (256u << 10)
#define MAX_EVENT_NAME 255
/* Frame lines remembered (at most 1M lines, 128 MB of text: about 230 MB
 * with the table); beyond this, new lines are worked out each time, which
 * is slower but keeps memory bounded on inputs where no line repeats.
 * Overridable at build time to test that path. */
#ifndef MAX_CACHED_LINES
#define MAX_CACHED_LINES (1u << 20)
#endif
#ifndef MAX_CACHED_BYTES
#define MAX_CACHED_BYTES (128u << 20)
#endif
/* In a part id: this frame takes the next line as its srcline. Frame ids
 * (name id * 8) stay below it: 2^28 distinct names would need far more
 * memory first. */
#define PART_SRCLINE 0x80000000u

/* Perl's \s and \w on byte strings (no locale, no utf8 flag): ASCII only. */
static inline bool is_ws(unsigned char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v';
}

static inline bool is_digit(unsigned char ch)
{
	return ch >= '0' && ch <= '9';
}

static inline bool is_word(unsigned char ch)
{
	return is_digit(ch) || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}

/* The tables here hash every input line, so they use a hash that takes 16
 * bytes per multiply (the wyhash construction) rather than util/hash.h's
 * 8 bytes per four multiplies. */
static inline uint64_t mum(uint64_t a, uint64_t b)
{
	__uint128_t r = (__uint128_t)a * b;

	return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static uint64_t fast_hash(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ len, a = 0, b = 0;

	for (; len > 16; p += 16, len -= 16) {
		memcpy(&a, p, 8);
		memcpy(&b, p + 8, 8);
		h = mum(a ^ 0xa0761d6478bd642fULL, b ^ h);
	}
	if (len >= 8) {
		memcpy(&a, p, 8);
		memcpy(&b, p + len - 8, 8);
	} else if (len >= 4) {
		uint32_t x, y;

		memcpy(&x, p, 4);
		memcpy(&y, p + len - 4, 4);
		a = x;
		b = y;
	} else if (len > 0) {
		a = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
		b = 0;
	} else {
		a = b = 0;
	}
	return mum(a ^ 0xe7037ed1a0b428dbULL ^ h, b ^ 0x8ebc6af09c88c6e3ULL);
}

/* What a frame line turned into (cached per distinct line and Java-ness). */
enum line_kind {
	LINE_UNSEEN = 0,
	LINE_NOT_FRAME, /* not a frame line: maybe bad */
	LINE_SKIP,	/* a frame line that adds nothing: "(process name)" */
	LINE_FRAMES,	/* parts pool[off .. off+n) */
};

struct line_res {
	uint32_t off, n;
	uint8_t kind;
};

/* A distinct frame line: its bytes linebuf[off .. off+len). */
struct line_ent {
	uint64_t hash;
	size_t off;
	uint32_t len;
	bool used;
	struct line_res res[2]; /* [1] when the comm is java* (Java names are tidied) */
};

struct kp_collapse {
	struct kp_collapse_opts opts;
	struct kp_collapse_stats st;
	char *event;	   /* the event kept; owned */
	char *other_event; /* first event skipped; owned */

	struct line_ent *lines; /* frame lines seen: open addressing */
	size_t nlines, lines_cap;
	struct kp_bytes linebuf;
	uint32_t *pool; /* part ids of cached lines */
	size_t npool, pool_cap;
	struct kp_bytes scratch; /* a name being built */

	/* distinct stacks (frame ids, root first) and their sums of
	 * periods, exact; frame and root names are interned in it */
	struct kp_folded *stacks;
	uint32_t *key; /* the stack being added */
	size_t key_cap;

	/* the sample being read */
	bool have_pname;
	bool java; /* pname starts with "java": Java names get tidied */
	uint32_t pname_id;
	struct kp_bytes pname;
	kp_count period;
	bool weighted; /* its header gave a period (not "" or "0") */
	uint32_t *ids; /* name ids of its frames, in input order */
	size_t nids, ids_cap;
	size_t *blocks; /* first id of each frame line */
	size_t nblocks, blocks_cap;
	size_t *pending; /* ids[] slots still waiting for their srcline line */
	size_t npending, pending_next, pending_cap;

	/* input framing */
	struct kp_bytes carry; /* partial line from the previous chunk */
	bool skipping;	       /* inside an over-long line */
	uint64_t line_no;
	unsigned input;
	char *readbuf;
};

struct kp_collapse *kp_collapse_new(const struct kp_collapse_opts *opts)
{
	struct kp_collapse *c = kp_xcalloc(1, sizeof(*c));

	c->opts = *opts;
	if (opts->event_filter && opts->event_filter[0])
		c->event = kp_xstrdup(opts->event_filter);
	c->opts.event_filter = NULL; /* the caller's string is not kept */
	c->st.event = c->event;
	c->lines_cap = 1024;
	c->lines = kp_xcalloc(c->lines_cap, sizeof(*c->lines));
	c->stacks = kp_folded_new();
	kp_folded_set_verbatim(c->stacks, true);
	return c;
}

void kp_collapse_free(struct kp_collapse *c)
{
	if (!c)
		return;
	free(c->lines);
	free(c->linebuf.p);
	free(c->pool);
	free(c->scratch.p);
	kp_folded_free(c->stacks);
	free(c->key);
	free(c->event);
	free(c->other_event);
	free(c->pname.p);
	free(c->ids);
	free(c->blocks);
	free(c->pending);
	free(c->carry.p);
	free(c->readbuf);
	free(c);
}

size_t kp_collapse_nstacks(const struct kp_collapse *c)
{
	return kp_folded_nstacks(c->stacks);
}

const struct kp_collapse_stats *kp_collapse_stats(const struct kp_collapse *c)
{
	return &c->st;
}

static void reset_sample(struct kp_collapse *c)
{
	c->have_pname = false;
	c->nids = 0;
	c->nblocks = 0;
	c->npending = c->pending_next = 0;
}

static void bad_line(struct kp_collapse *c)
{
	if (!c->st.bad_lines++) {
		c->st.first_bad_input = c->input;
		c->st.first_bad_line = c->line_no;
	}
}

/* The frame id of name b, interned in the table. */
static uint32_t intern_bytes(struct kp_collapse *c, const struct kp_bytes *b)
{
	return kp_folded_frame_id(c->stacks, b->len ? b->p : "", b->len, KP_FRAME_USER);
}

/* Whether frame id is named b. */
static bool same_name(const struct kp_collapse *c, uint32_t id, const struct kp_bytes *b)
{
	size_t len;
	const char *name = kp_folded_frame_name(c->stacks, id, &len);

	return len == b->len && (!len || memcmp(name, b->p, len) == 0);
}

/* --- the sample header ------------------------------------------------- */

/* /^(\S.+?)\s+(\d+)\/ *(\d+) *\s+/ (spaces added before each * to keep
 * this comment a comment): comm, then PID (or TID), then /TID.
 * Perl tries the shortest comm first (at least two characters), so the
 * first whitespace run after position 2 that is followed by digits, maybe
 * slashes and digits, and whitespace ends the comm. Only the first position
 * of each whitespace run needs a test: later ones reach the same digits. */
static bool match_header(const char *s, size_t n, size_t *comm_len, const char **d1, size_t *d1n,
			 const char **d3, size_t *d3n)
{
	if (n < 3 || is_ws((unsigned char)s[0]))
		return false;
	for (size_t k = 2; k < n; k++) {
		size_t p, q;

		if (!is_ws((unsigned char)s[k]) || (k > 2 && is_ws((unsigned char)s[k - 1])))
			continue;
		for (p = k; p < n && is_ws((unsigned char)s[p]); p++)
			;
		for (q = p; q < n && is_digit((unsigned char)s[q]); q++)
			;
		if (q == p || q == n)
			continue;
		if (is_ws((unsigned char)s[q])) {
			*comm_len = k;
			*d1 = s + p;
			*d1n = q - p;
			*d3 = NULL;
			*d3n = 0;
			return true;
		}
		if (s[q] == '/') {
			size_t r, t;

			for (r = q; r < n && s[r] == '/'; r++)
				;
			for (t = r; t < n && is_digit((unsigned char)s[t]); t++)
				;
			if (t < n && is_ws((unsigned char)s[t])) {
				*comm_len = k;
				*d1 = s + p;
				*d1n = q - p;
				*d3 = t > r ? s + r : NULL;
				*d3n = t - r;
				return true;
			}
		}
	}
	return false;
}

/* /:\s*(\d+)*\s+(\S+):\s*$/ : optional period and the event name, which
 * must end the line. Worked from the end: the event is the last word
 * (without its final colon), preceded by whitespace, optional digits,
 * optional whitespace and a colon. */
static bool match_event(const char *s, size_t n, const char **ev, size_t *evn, const char **per,
			size_t *pern)
{
	size_t e = n, t0, u, v, x;

	while (e > 0 && is_ws((unsigned char)s[e - 1]))
		e--;
	if (e < 2 || s[e - 1] != ':')
		return false;
	e--; /* the event ends before the final colon */
	for (t0 = e; t0 > 0 && !is_ws((unsigned char)s[t0 - 1]); t0--)
		;
	if (t0 == e || t0 == 0)
		return false;
	for (u = t0; u > 0 && is_ws((unsigned char)s[u - 1]); u--)
		;
	if (u == 0)
		return false;
	*ev = s + t0;
	*evn = e - t0;
	if (s[u - 1] == ':') {
		*per = NULL;
		*pern = 0;
		return true;
	}
	if (!is_digit((unsigned char)s[u - 1]))
		return false;
	for (v = u; v > 0 && is_digit((unsigned char)s[v - 1]); v--)
		;
	for (x = v; x > 0 && is_ws((unsigned char)s[x - 1]); x--)
		;
	if (x == 0 || s[x - 1] != ':')
		return false;
	*per = s + v;
	*pern = u - v;
	return true;
}

/* A sample's weight: its period. "" and "0" are false in Perl and mean 1.
 * False past 2^64 - 1: perf's periods are 64-bit, so such a header is not
 * believed. Sums of periods are exact (kp_count): Perl's go inexact past
 * 2^64, kprof's never do, as 2^64 samples would be needed to overflow. */
static bool parse_period(const char *p, size_t n, kp_count *v)
{
	unsigned decimals;

	*v = 1;
	if (!p || n == 0 || (n == 1 && p[0] == '0'))
		return true;
	return kp_count_parse(p, n, v, &decimals) == 0 && *v <= UINT64_MAX;
}

static void note_other_event(struct kp_collapse *c, const char *ev, size_t evn)
{
	c->st.filtered++;
	if (!c->other_event) {
		c->other_event = kp_xstrndup(ev, evn < MAX_EVENT_NAME ? evn : MAX_EVENT_NAME);
		c->st.other_event = c->other_event;
	}
}

/* Returns false when the line is not a header. */
static bool header_line(struct kp_collapse *c, const char *s, size_t n)
{
	size_t comm_len, d1n, d3n, evn, pern;
	const char *d1, *d3, *ev, *per = NULL;
	const char *pid, *tid;
	size_t pidn, tidn;

	if (!match_header(s, n, &comm_len, &d1, &d1n, &d3, &d3n))
		return false;
	if (match_event(s, n, &ev, &evn, &per, &pern)) {
		if (!c->event) {
			/* like the script: without a filter, keep the first
			 * event seen (mixing cycles and instructions misleads) */
			c->event = kp_xstrndup(ev, evn);
			c->st.event = c->event;
			c->st.event_defaulted = true;
		} else if (strlen(c->event) != evn || memcmp(c->event, ev, evn) != 0) {
			/* the sample's frames are skipped while no pname is set */
			note_other_event(c, ev, evn);
			return true;
		}
	} else {
		per = NULL;
		pern = 0;
	}
	if (!parse_period(per, pern, &c->period))
		return false;
	c->weighted = per && pern && !(pern == 1 && per[0] == '0');

	/* no /TID (or a TID of "0", false in Perl): the number is the TID */
	if (d3 && !(d3n == 1 && d3[0] == '0')) {
		pid = d1;
		pidn = d1n;
		tid = d3;
		tidn = d3n;
	} else {
		pid = "?";
		pidn = 1;
		tid = d1;
		tidn = d1n;
	}
	c->pname.len = 0;
	kp_bytes_put(&c->pname, s, comm_len);
	if (c->opts.tid || c->opts.pid) {
		kp_bytes_putc(&c->pname, '-');
		kp_bytes_put(&c->pname, pid, pidn);
		if (c->opts.tid) {
			kp_bytes_putc(&c->pname, '/');
			kp_bytes_put(&c->pname, tid, tidn);
		}
	}
	for (size_t i = 0; i < c->pname.len; i++)
		if (c->pname.p[i] == ' ')
			c->pname.p[i] = '_';
	c->have_pname = true;
	c->java = c->pname.len >= 4 && memcmp(c->pname.p, "java", 4) == 0;
	if (!(c->pname_id && same_name(c, c->pname_id, &c->pname)))
		c->pname_id = intern_bytes(c, &c->pname);
	return true;
}

/* --- frame lines ------------------------------------------------------- */

/* /^\s*(\w+)\s*(.+) \((.*)\)/ : address, symbol, module. (.+) is greedy,
 * so the symbol runs to the last " (" that has a ")" somewhere after it,
 * and the module runs to the last ")" of the line. When that " (" comes
 * too early for the greedy split, Perl backtracks into \s* and \w+: the
 * symbol is then the single character before it. */
static bool match_frame(const char *s, size_t n, const char **pc, size_t *pcn, const char **func,
			size_t *funcn, const char **mod, size_t *modn)
{
	size_t w0, w1, s0, L, J, st;
	const char *rp;

	for (w0 = 0; w0 < n && is_ws((unsigned char)s[w0]); w0++)
		;
	for (w1 = w0; w1 < n && is_word((unsigned char)s[w1]); w1++)
		;
	if (w1 == w0)
		return false;
	for (s0 = w1; s0 < n && is_ws((unsigned char)s[s0]); s0++)
		;
	rp = memrchr(s + w1, ')', n - w1);
	if (!rp)
		return false;
	L = (size_t)(rp - s);
	/* largest J with s[J..J+2) == " (" and J + 2 <= L */
	if (L < 2)
		return false;
	J = L - 2;
	for (;;) {
		if (s[J] == ' ' && s[J + 1] == '(')
			break;
		if (J == 0)
			return false;
		J--;
	}
	if (J >= s0 + 1)
		st = s0;
	else if (J >= w0 + 2)
		st = J - 1;
	else
		return false;
	*pc = s + w0;
	*pcn = (st < w1 ? st : w1) - w0;
	*func = s + st;
	*funcn = J - st;
	*mod = s + J + 2;
	*modn = L - (J + 2);
	return true;
}

static bool mem_has(const char *s, size_t n, const char *needle)
{
	size_t len = strlen(needle);

	/* s is NULL for an empty name before the first one was built */
	return n >= len && memmem(s, n, needle, len) != NULL;
}

/* m:/tmp/perf-\d+\.map: */
static bool is_jit_map(const char *s, size_t n)
{
	const char *p = s, *end = s + n;

	while ((p = memmem(p, (size_t)(end - p), "/tmp/perf-", 10)) != NULL) {
		const char *q = p + 10, *r = q;

		while (r < end && is_digit((unsigned char)*r))
			r++;
		if (r > q && end - r >= 4 && memcmp(r, ".map", 4) == 0)
			return true;
		p++;
	}
	return false;
}

/* m/(^\[|vmlinux$)/ && !~ /unknown/ */
static bool is_kernel_mod(const char *m, size_t n)
{
	bool k = (n > 0 && m[0] == '[') || (n >= 7 && memcmp(m + n - 7, "vmlinux", 7) == 0);

	return k && !mem_has(m, n, "unknown");
}

/* The generic tidy on text[off, off+len): ';' -> ':', drop everything from
 * the first '(' (unless it opens "(anonymous namespace)", or the name looks
 * like a Go method "pkg.(*T).M"), delete quotes. Returns the new length. */
static size_t tidy_generic(char *f, size_t len)
{
	char *p;

	for (p = memchr(f, ';', len); p; p = memchr(p, ';', len - (size_t)(p - f)))
		*p = ':';
	p = memchr(f, '(', len);
	if (p) {
		/* m/\.\(.*\)\./ : a ".(" before a later ")." */
		const char *a = memmem(f, len, ".(", 2);
		bool go = false;

		if (a)
			for (size_t k = (size_t)(a - f) + 2; k + 1 < len; k++)
				if (f[k] == ')' && f[k + 1] == '.') {
					go = true;
					break;
				}
		if (!go) {
			/* Perl: s/\((?!anonymous namespace\)).*$// (minus the $) */
			static const char anon[] = "anonymous namespace)";
			const size_t an = sizeof(anon) - 1;

			while (p) {
				size_t rest = len - (size_t)(p - f) - 1;

				if (!(rest >= an && memcmp(p + 1, anon, an) == 0)) {
					len = (size_t)(p - f);
					break;
				}
				p = memchr(p + 1, '(', rest);
			}
		}
	}
	if (memchr(f, '"', len) || memchr(f, '\'', len)) {
		size_t o = 0;

		for (size_t i = 0; i < len; i++)
			if (f[i] != '"' && f[i] != '\'')
				f[o++] = f[i];
		len = o;
	}
	return len;
}

static void pool_push(struct kp_collapse *c, uint32_t v)
{
	if (c->npool + 1 > c->pool_cap)
		kp_xgrow(&c->pool, &c->pool_cap, c->npool + 1, sizeof(*c->pool));
	c->pool[c->npool++] = v;
}

/* One "->"-separated part of a frame's symbol (perf's inline chains): its
 * name id goes to the pool. */
static void add_part(struct kp_collapse *c, const char *part, size_t pn, bool first, bool *unknown,
		     const char *pc, size_t pcn, const char *mod, size_t modn, bool kmod, bool jit,
		     bool java)
{
	struct kp_bytes *t = &c->scratch;
	uint32_t id;

	t->len = 0;
	if (pn == 9 && memcmp(part, "[unknown]", 9) == 0) {
		/* use the module's file name instead, if known */
		kp_bytes_putc(t, '[');
		if (!(modn == 9 && memcmp(mod, "[unknown]", 9) == 0)) {
			const char *sl = memrchr(mod, '/', modn);
			const char *b = sl ? sl + 1 : mod;

			kp_bytes_put(t, b, (size_t)(mod + modn - b));
		} else {
			kp_bytes_put(t, "unknown", 7);
			*unknown = true;
		}
		if (c->opts.addrs) {
			kp_bytes_put(t, " <", 2);
			kp_bytes_put(t, pc, pcn);
			kp_bytes_putc(t, '>');
		}
		kp_bytes_putc(t, ']');
	} else {
		kp_bytes_put(t, part, pn);
	}
	if (t->len)
		t->len = tidy_generic(t->p, t->len);
	/* Java: "Lorg/foo/Bar;.baz" -> "org/foo/Bar:.baz" (for comms java*) */
	if (java && t->len && t->p[0] == 'L' && memchr(t->p, '/', t->len)) {
		memmove(t->p, t->p + 1, t->len - 1);
		t->len--;
	}
	if (!first) {
		if (!mem_has(t->p, t->len, "_[i]"))
			kp_bytes_put(t, "_[i]", 4);
	} else if (kmod) {
		kp_bytes_put(t, "_[k]", 4);
	} else if (jit) {
		if (!mem_has(t->p, t->len, "_[j]"))
			kp_bytes_put(t, "_[j]", 4);
	}
	id = intern_bytes(c, t);
	pool_push(c, id | (c->opts.srcline && !*unknown ? PART_SRCLINE : 0));
}

/* Works out what a line gives as a frame line; the parts go to the pool
 * from *off on. */
static enum line_kind eval_frame_line(struct kp_collapse *c, const char *s, size_t n, bool java,
				      uint32_t *off, uint32_t *cnt)
{
	const char *pc, *func, *mod, *p, *end;
	size_t pcn, funcn, modn;
	bool kmod, jit, unknown = false, first = true;

	if (!match_frame(s, n, &pc, &pcn, &func, &funcn, &mod, &modn))
		return LINE_NOT_FRAME;

	/* s/\+0x[\da-f]+$// : the symbol offset perf >= 4.8 prints */
	{
		size_t h = funcn;

		while (h > 0 && (is_digit((unsigned char)func[h - 1]) ||
				 (func[h - 1] >= 'a' && func[h - 1] <= 'f')))
			h--;
		if (h < funcn && h >= 3 && memcmp(func + h - 3, "+0x", 3) == 0)
			funcn = h - 3;
	}
	if (funcn && func[0] == '(')
		return LINE_SKIP; /* a process name, not a frame */

	kmod = c->opts.kernel && is_kernel_mod(mod, modn);
	jit = c->opts.jit && is_jit_map(mod, modn);
	*off = (uint32_t)c->npool;

	/* split /\->/ : trailing empty parts are dropped, as Perl's split does */
	end = func + funcn;
	while (end - func >= 2 && end[-1] == '>' && end[-2] == '-')
		end -= 2;
	p = func;
	while (p < end) {
		const char *arrow = memmem(p, (size_t)(end - p), "->", 2);
		const char *pe = arrow ? arrow : end;

		add_part(c, p, (size_t)(pe - p), first, &unknown, pc, pcn, mod, modn, kmod, jit,
			 java);
		first = false;
		if (!arrow)
			break;
		p = arrow + 2;
	}
	*cnt = (uint32_t)(c->npool - *off);
	return LINE_FRAMES;
}

static void lines_grow(struct kp_collapse *c)
{
	size_t cap = c->lines_cap * 2, mask = cap - 1;
	struct line_ent *t = kp_xcalloc(cap, sizeof(*t));

	for (size_t k = 0; k < c->lines_cap; k++) {
		size_t i;

		if (!c->lines[k].used)
			continue;
		for (i = c->lines[k].hash & mask; t[i].used; i = (i + 1) & mask)
			;
		t[i] = c->lines[k];
	}
	free(c->lines);
	c->lines = t;
	c->lines_cap = cap;
}

/* The cached result for line s (NULL when the cache is full and the line
 * is not in it). */
static struct line_res *line_lookup(struct kp_collapse *c, const char *s, size_t n, bool java)
{
	uint64_t h = fast_hash(s, n);
	size_t mask = c->lines_cap - 1, i;
	struct line_ent *e;

	for (i = h & mask; c->lines[i].used; i = (i + 1) & mask) {
		e = &c->lines[i];
		if (e->hash == h && e->len == n && memcmp(c->linebuf.p + e->off, s, n) == 0)
			return &e->res[java];
	}
	if (c->nlines >= MAX_CACHED_LINES || c->linebuf.len + n > MAX_CACHED_BYTES ||
	    n > UINT32_MAX)
		return NULL;
	e = &c->lines[i];
	e->used = true;
	e->hash = h;
	e->off = c->linebuf.len;
	e->len = (uint32_t)n;
	kp_bytes_put(&c->linebuf, s, n);
	if (++c->nlines * 2 > c->lines_cap) {
		lines_grow(c);
		return line_lookup(c, s, n, java);
	}
	return &e->res[java];
}

/* Returns false when the line is not a frame line. */
static bool frame_line(struct kp_collapse *c, const char *s, size_t n)
{
	bool java = c->have_pname && c->java;
	size_t mark = c->npool;
	enum line_kind kind;
	uint32_t off = 0, cnt = 0;
	struct line_res *r = line_lookup(c, s, n, java);

	if (r) {
		if (r->kind == LINE_UNSEEN) {
			uint32_t o = 0, m = 0;

			/* eval does not touch c->lines: r stays valid */
			r->kind = (uint8_t)eval_frame_line(c, s, n, java, &o, &m);
			r->off = o;
			r->n = m;
		}
		kind = (enum line_kind)r->kind;
		off = r->off;
		cnt = r->n;
	} else {
		kind = eval_frame_line(c, s, n, java, &off, &cnt);
	}
	if (kind == LINE_NOT_FRAME)
		return false;
	if (c->have_pname && kind == LINE_FRAMES) {
		if (c->nblocks + 1 > c->blocks_cap)
			kp_xgrow(&c->blocks, &c->blocks_cap, c->nblocks + 1, sizeof(*c->blocks));
		c->blocks[c->nblocks++] = c->nids;
		if (c->nids + cnt > c->ids_cap)
			kp_xgrow(&c->ids, &c->ids_cap, c->nids + cnt, sizeof(*c->ids));
		for (uint32_t i = 0; i < cnt; i++) {
			uint32_t v = c->pool[off + i];

			if (v & PART_SRCLINE) {
				if (c->npending + 1 > c->pending_cap)
					kp_xgrow(&c->pending, &c->pending_cap, c->npending + 1,
						 sizeof(*c->pending));
				c->pending[c->npending++] = c->nids;
			}
			c->ids[c->nids++] = v & ~PART_SRCLINE;
		}
	}
	if (!r)
		c->npool = mark;
	return true;
}

/* --srcline: the line after a frame is its source location; brackets
 * ("libc.so[27b25]", "[kernel.kallsyms][ffff...]") and outer blanks go,
 * and what is left is added to the frame's name after a ':'. */
static void srcline_line(struct kp_collapse *c, const char *s, size_t n)
{
	size_t slot = c->pending[c->pending_next++];
	struct kp_bytes *t = &c->scratch;
	uint32_t id = c->ids[slot];
	size_t i = 0, mark, a, b, len;
	const char *name;

	t->len = 0;
	name = kp_folded_frame_name(c->stacks, id, &len);
	kp_bytes_put(t, name, len);
	kp_bytes_putc(t, ':');
	mark = t->len;
	while (i < n) {
		const char *lb = memchr(s + i, '[', n - i), *rb;

		if (!lb) {
			kp_bytes_put(t, s + i, n - i);
			break;
		}
		rb = memchr(lb + 1, ']', n - (size_t)(lb + 1 - s));
		if (!rb) {
			kp_bytes_put(t, s + i, n - i);
			break;
		}
		kp_bytes_put(t, s + i, (size_t)(lb - (s + i)));
		i = (size_t)(rb - s) + 1;
	}
	a = mark;
	b = t->len;
	while (a < b && is_ws((unsigned char)t->p[a]))
		a++;
	while (b > a && is_ws((unsigned char)t->p[b - 1]))
		b--;
	if (b > a) {
		memmove(t->p + mark, t->p + a, b - a);
		t->len = mark + (b - a);
		c->ids[slot] = intern_bytes(c, t);
	}
	if (c->pending_next == c->npending)
		c->npending = c->pending_next = 0;
}

/* --- the table of stacks ---------------------------------------------- */

static void end_sample(struct kp_collapse *c)
{
	size_t n = c->nids + 1, k = 0;

	if (!c->have_pname)
		return;
	if (n > c->key_cap)
		kp_xgrow(&c->key, &c->key_cap, n, sizeof(*c->key));
	c->key[k++] = c->pname_id;
	/* frame lines come leaf first; each line's parts keep their order */
	for (size_t b = c->nblocks; b-- > 0;) {
		size_t end = b + 1 < c->nblocks ? c->blocks[b + 1] : c->nids;

		for (size_t j = c->blocks[b]; j < end; j++)
			c->key[k++] = c->ids[j];
	}
	/* cannot fail, the total cannot overflow: see parse_period */
	kp_folded_add_ids(c->stacks, c->key, n, c->period, 0);
	c->st.samples++;
	c->st.weighted += c->weighted;
	reset_sample(c);
}

static void do_line(struct kp_collapse *c, const char *s, size_t n)
{
	c->line_no++;
	c->st.lines++;
	if (n && s[n - 1] == '\r') /* CRLF input */
		n--;
	if (c->pending_next < c->npending) {
		srcline_line(c, s, n);
		return;
	}
	if (n == 0) {
		end_sample(c);
		return;
	}
	if (s[0] == '#')
		return;
	if (header_line(c, s, n) || frame_line(c, s, n))
		return;
	bad_line(c);
}

/* A line over MAX_LINE: counted as bad, never processed, whether it came
 * in one chunk or several. */
static void long_line(struct kp_collapse *c)
{
	c->line_no++;
	c->st.lines++;
	c->st.long_lines++;
	bad_line(c);
}

/* The line carried over from earlier input ends: a line too long to keep
 * is counted as bad, any other is processed. */
static void finish_carried_line(struct kp_collapse *c)
{
	if (c->skipping) {
		long_line(c);
		c->skipping = false;
	} else {
		do_line(c, c->carry.p, c->carry.len);
	}
	c->carry.len = 0;
}

void kp_collapse_feed(struct kp_collapse *c, const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	if (c->carry.len || c->skipping) {
		const char *nl = memchr(p, '\n', len);
		size_t take = nl ? (size_t)(nl - p) : len;

		if (!c->skipping && c->carry.len + take > MAX_LINE) {
			c->skipping = true;
			c->carry.len = 0;
		}
		if (!c->skipping)
			kp_bytes_put(&c->carry, p, take);
		if (!nl)
			return;
		finish_carried_line(c);
		p = nl + 1;
	}
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));

		if (!nl) {
			size_t rest = (size_t)(end - p);

			if (rest > MAX_LINE)
				c->skipping = true;
			else
				kp_bytes_put(&c->carry, p, rest);
			break;
		}
		if ((size_t)(nl - p) > MAX_LINE)
			long_line(c);
		else
			do_line(c, p, (size_t)(nl - p));
		p = nl + 1;
	}
}

void kp_collapse_end_input(struct kp_collapse *c)
{
	if (c->skipping || c->carry.len)
		finish_carried_line(c);
	if (c->have_pname)
		c->st.unterminated++;
	reset_sample(c);
	c->line_no = 0;
	c->input++;
}

int kp_collapse_read_fd(struct kp_collapse *c, int fd, const char *name, struct kp_diag *d)
{
	if (!c->readbuf)
		c->readbuf = kp_xmalloc(READ_BUF_SIZE);
	for (;;) {
		ssize_t r = read(fd, c->readbuf, READ_BUF_SIZE);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return kp_diag_errno(d, -errno, "%s", name);
		}
		if (r == 0)
			break;
		kp_collapse_feed(c, c->readbuf, (size_t)r);
	}
	kp_collapse_end_input(c);
	return 0;
}

/* --- output ------------------------------------------------------------ */

int kp_collapse_write(struct kp_collapse *c, FILE *out, struct kp_diag *d)
{
	/* the kinds' suffixes are in the names already, as the script wrote
	 * them */
	int err = kp_folded_write(c->stacks, out, KP_FOLDED_BY_STACK);

	if (fflush(out) != 0 || ferror(out) || err)
		return kp_diag_errno(d, -(errno ? errno : EIO), "cannot write the folded stacks");
	return 0;
}

/* cpu-clock and task-clock count nanoseconds: their period is time */
static const char *const ns_events[] = {"cpu-clock", "task-clock"};

void kp_collapse_countname(const struct kp_collapse *c, char *buf, size_t size)
{
	const char *ev = c->st.event;
	size_t n = 0;

	snprintf(buf, size, "samples");
	if (!c->st.weighted || !ev)
		return;
	/* the event without its modifiers (cpu-clock:ppp), of name bytes only */
	while (ev[n] && ev[n] != ':' && n + 1 < size &&
	       (isalnum((unsigned char)ev[n]) || strchr("-_./", ev[n])))
		n++;
	if (!n || (ev[n] && ev[n] != ':'))
		return;
	for (size_t i = 0; i < sizeof(ns_events) / sizeof(ns_events[0]); i++)
		if (strlen(ns_events[i]) == n && memcmp(ev, ns_events[i], n) == 0) {
			snprintf(buf, size, "ns");
			return;
		}
	snprintf(buf, size, "%.*s", (int)n, ev);
}
