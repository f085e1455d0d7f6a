/* JavaScript frames named from a live V8 heap (see v8.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/v8.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define MAX_FRAMES    128	/* frames of a sample looked at */
#define MAX_READS     768	/* reads of the process's memory a sample */
#define MAX_CACHE     8192	/* functions cached; then the cache starts over */
#define NAME_CHARS    160	/* a function's name is cut there */
#define SCRIPT_CHARS  400	/* a script's name */
#define STRING_DEPTH  8		/* cons and thin strings followed */
#define MAX_LENGTH    (1 << 28) /* V8's longest string, and array */
#define SOURCE_SCAN   (1 << 20) /* source read to count lines, at most */
#define MAX_BYTES     (2 << 20) /* bytes read a sample, at most */
#define CHUNK	      65536
#define MAX_LOCALS    100000 /* context locals a ScopeInfo may claim */
#define INLINED_NAMES 75     /* V8's kScopeInfoMaxInlinedLocalNamesSize */

/* A function named: by its address while its map and shared info stay. */
struct entry {
	uint64_t fn, map, sfi, context, bytecode;
	uint64_t nos;	/* the shared info's name or scope info, as read */
	char *base;	/* "name script:line" */
	char *named[3]; /* "JS:~base", "JS:^base", "JS:*base", made when asked */
	bool has_script;
	bool not_function; /* the slot's object is none: kept by its map */
};

struct kp_v8 {
	struct kp_v8meta m;
	struct kp_v8_mem mem;
	struct kp_u64map index;	  /* function address -> entry index + 1 */
	struct kp_u64map by_sfi;  /* shared info address -> entry index + 1 */
	struct kp_u64map fn_maps; /* maps of functions named so far */
	struct entry *e;
	size_t n, cap;
	unsigned budget;     /* reads left this sample */
	size_t bytes_budget; /* bytes left this sample */
	struct kp_v8_stats st;
	unsigned char chunk[CHUNK]; /* source read to count lines */
};

struct kp_v8 *kp_v8_new(const struct kp_v8meta *m, const struct kp_v8_mem *mem)
{
	struct kp_v8 *v = kp_xcalloc(1, sizeof(*v));

	v->m = *m;
	v->mem = *mem;
	kp_u64map_init(&v->index);
	kp_u64map_init(&v->by_sfi);
	kp_u64map_init(&v->fn_maps);
	return v;
}

static void cache_clear(struct kp_v8 *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free(v->e[i].base);
		for (int k = 0; k < 3; k++)
			free(v->e[i].named[k]);
	}
	v->n = 0;
	kp_u64map_fini(&v->index);
	kp_u64map_init(&v->index);
	kp_u64map_fini(&v->by_sfi);
	kp_u64map_init(&v->by_sfi);
	kp_u64map_fini(&v->fn_maps);
	kp_u64map_init(&v->fn_maps);
}

void kp_v8_free(struct kp_v8 *v)
{
	if (!v)
		return;
	cache_clear(v);
	kp_u64map_fini(&v->index);
	kp_u64map_fini(&v->by_sfi);
	kp_u64map_fini(&v->fn_maps);
	free(v->e);
	free(v);
}

void kp_v8_stats(const struct kp_v8 *v, struct kp_v8_stats *st)
{
	*st = v->st;
	st->cached = v->n;
}

/* ---- bounded reads ---- */

static bool rd(struct kp_v8 *v, uint64_t addr, void *buf, size_t len)
{
	if (!v->budget || len > v->bytes_budget)
		return false;
	v->budget--;
	v->bytes_budget -= len;
	v->st.reads++;
	if (addr < 4096 || addr + len < addr || !v->mem.read(v->mem.arg, addr, buf, len)) {
		v->st.read_fails++;
		return false;
	}
	return true;
}

static bool is_obj(const struct kp_v8 *v, uint64_t w)
{
	return (w & (uint64_t)v->m.heap_tag_mask) == (uint64_t)v->m.heap_tag && w > 4096;
}

static bool is_smi(const struct kp_v8 *v, uint64_t w)
{
	return (w & (uint64_t)v->m.smi_tag_mask) == 0;
}

static int64_t smi(uint64_t w)
{
	return (int64_t)w >> 32; /* 31-bit shift over a 1-bit tag */
}

/* The tagged word at field off of object obj. */
static bool field(struct kp_v8 *v, uint64_t obj, int64_t off, uint64_t *out)
{
	return rd(v, obj - 1 + (uint64_t)off, out, 8);
}

/* The instance type of heap object obj, through its map. */
static bool type_of(struct kp_v8 *v, uint64_t obj, unsigned *type)
{
	uint64_t map;
	uint16_t t;

	if (!is_obj(v, obj) || !field(v, obj, v->m.obj_map, &map) || !is_obj(v, map) ||
	    !rd(v, map - 1 + (uint64_t)v->m.map_instance_type, &t, sizeof(t)))
		return false;
	*type = t;
	return true;
}

/* ---- strings ---- */

struct sbuf {
	char *p;
	size_t len, cap; /* cap: bytes for text, one more for the NUL */
	size_t chars;	 /* characters still wanted */
};

static void put_cp(struct sbuf *b, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x20 || c == 0x7f)
		c = '?'; /* a control character would cut or garble a frame */
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3f));
		u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	if (!b->chars || b->len + n > b->cap) {
		b->chars = 0;
		return;
	}
	memcpy(b->p + b->len, u, n);
	b->len += n;
	b->chars--;
}

/* Characters [from, from + count) of a sequential string's payload at
 * addr (two_byte: UTF-16) appended to b. */
static bool seq_chars(struct kp_v8 *v, uint64_t addr, bool two_byte, uint64_t from, uint64_t count,
		      struct sbuf *b)
{
	unsigned char raw[2 * NAME_CHARS + 2 * SCRIPT_CHARS];
	size_t want = count < b->chars ? (size_t)count : b->chars;
	size_t unit = two_byte ? 2 : 1;

	if (want > sizeof(raw) / unit)
		want = sizeof(raw) / unit;
	if (!want)
		return true;
	if (!rd(v, addr + from * unit, raw, want * unit))
		return false;
	for (size_t i = 0; i < want; i++) {
		uint32_t c = two_byte ? (uint32_t)(raw[2 * i] | raw[2 * i + 1] << 8) : raw[i];

		if (two_byte && c >= 0xd800 && c < 0xdc00 && i + 1 < want) {
			uint32_t lo = (uint32_t)(raw[2 * i + 2] | raw[2 * i + 3] << 8);

			if (lo >= 0xdc00 && lo < 0xe000) {
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
				i++;
			}
		}
		if (c >= 0xd800 && c < 0xe000)
			c = 0xfffd;
		put_cp(b, c);
	}
	return true;
}

/* Characters [from, from + count) of string obj appended to b; NULL, or
 * why it cannot be read. */
static const char *string_part(struct kp_v8 *v, uint64_t obj, uint64_t from, uint64_t count,
			       struct sbuf *b, int depth)
{
	const struct kp_v8meta *m = &v->m;
	unsigned type, repr;
	int32_t len;

	if (depth > STRING_DEPTH)
		return "string nested too deep";
	if (!type_of(v, obj, &type) || !rd(v, obj - 1 + (uint64_t)m->string_length, &len, 4))
		return "string not readable";
	if ((int64_t)type >= m->first_nonstring_type || (type & (unsigned)m->not_string_mask))
		return "name is not a string";
	if (len < 0 || len > MAX_LENGTH || from > (uint64_t)len)
		return "string length out of range";
	if (count > (uint64_t)len - from)
		count = (uint64_t)len - from;
	repr = type & (unsigned)m->repr_mask;
	if (repr == (unsigned)m->seq_tag) {
		bool one = (type & (unsigned)m->encoding_mask) == (unsigned)m->one_byte_tag;

		return seq_chars(v, obj - 1 + (uint64_t)(one ? m->seq_one_chars : m->seq_two_chars),
				 !one, from, count, b)
			       ? NULL
			       : "string not readable";
	}
	if (repr == (unsigned)m->thin_tag) {
		uint64_t actual;

		if (!field(v, obj, m->thin_actual, &actual))
			return "string not readable";
		return string_part(v, actual, from, count, b, depth + 1);
	}
	if (repr == (unsigned)m->sliced_tag) {
		uint64_t parent, off;

		if (!field(v, obj, m->sliced_parent, &parent) ||
		    !field(v, obj, m->sliced_offset, &off) || !is_smi(v, off) || smi(off) < 0)
			return "string not readable";
		return string_part(v, parent, (uint64_t)smi(off) + from, count, b, depth + 1);
	}
	if (repr == (unsigned)m->cons_tag) {
		uint64_t first, second;
		int32_t flen;
		const char *why;

		if (!field(v, obj, m->cons_first, &first) ||
		    !field(v, obj, m->cons_second, &second) ||
		    !rd(v, first - 1 + (uint64_t)m->string_length, &flen, 4) || flen < 0 ||
		    flen > len)
			return "string not readable";
		if (from < (uint64_t)flen) {
			uint64_t c1 = count < (uint64_t)flen - from ? count : (uint64_t)flen - from;

			if ((why = string_part(v, first, from, c1, b, depth + 1)))
				return why;
			from = (uint64_t)flen;
			count -= c1;
		}
		if (count && b->chars)
			return string_part(v, second, from - (uint64_t)flen, count, b, depth + 1);
		return NULL;
	}
	return "external string"; /* its bytes are the embedder's, not the heap's */
}

/* String obj as UTF-8 into buf[0..size), at most chars characters. */
static const char *string_read(struct kp_v8 *v, uint64_t obj, char *buf, size_t size, size_t chars)
{
	struct sbuf b = {buf, 0, size - 1, chars};
	const char *why = string_part(v, obj, 0, MAX_LENGTH, &b, 0);

	buf[b.len] = '\0';
	return why;
}

/* Whether heap object obj is a string (of any representation). */
static bool is_string(struct kp_v8 *v, uint64_t obj)
{
	unsigned t;

	return type_of(v, obj, &t) && (int64_t)t < v->m.first_nonstring_type &&
	       !(t & (unsigned)v->m.not_string_mask);
}

/* ---- functions ---- */

enum { SCOPE_EVAL = 1, SCOPE_FUNCTION = 2, SCOPE_MODULE = 3, SCOPE_SCRIPT = 4 };

/* A function's name and start position from its ScopeInfo (V8 10-12's
 * layout: flags, parameter count, context local count, the locals' names
 * and infos, then the optional function variable (name, slot), inferred
 * name and position info the flags announce). Each slot must have the
 * kind the layout says, else the layout is not this one. */
static const char *scope_decode(struct kp_v8 *v, uint64_t si, char *name, size_t size, int64_t *pos)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t hdr[16], s[5], flags;
	int64_t ncl, idx, type, k = 0;
	uint64_t fname = 0, inferred = 0;

	*pos = -1;
	name[0] = '\0';
	if (!rd(v, si - 1 + 8, hdr, (size_t)m->scope_first_vars * 8))
		return "scope info not readable";
	if (!is_smi(v, hdr[0]) || !is_smi(v, hdr[m->scope_ncontextlocals]))
		return "scope info not as expected";
	flags = (uint64_t)smi(hdr[0]);
	ncl = smi(hdr[m->scope_ncontextlocals]);
	if (ncl < 0 || ncl > MAX_LOCALS)
		return "scope info not as expected";
	type = (int64_t)(flags & 0xf);
	if (type == SCOPE_MODULE)
		return NULL; /* a module's top level: no name, its variables first */
	idx = m->scope_first_vars + (ncl < INLINED_NAMES ? ncl : 1) + ncl;
	if (flags >> 10 & 1)
		idx++; /* the saved class variable */
	if (!rd(v, si - 1 + 8 + (uint64_t)idx * 8, s, sizeof(s)))
		return "scope info not readable";
	if (flags >> 12 & 3) {
		if (!is_smi(v, s[1]) || (!is_smi(v, s[0]) && !is_string(v, s[0])))
			return "scope info not as expected";
		fname = is_smi(v, s[0]) ? 0 : s[0];
		k = 2;
	}
	if (flags >> 14 & 1) {
		if (is_smi(v, s[k]))
			return "scope info not as expected";
		inferred = is_string(v, s[k]) ? s[k] : 0;
		k++;
	}
	if (type == SCOPE_FUNCTION || type == SCOPE_SCRIPT || type == SCOPE_EVAL) {
		if (!is_smi(v, s[k]) || !is_smi(v, s[k + 1]) || smi(s[k]) < 0 ||
		    smi(s[k]) > smi(s[k + 1]))
			return "scope info not as expected";
		*pos = smi(s[k]);
	}
	if (fname && string_read(v, fname, name, size, NAME_CHARS))
		return "name not readable";
	if (!name[0] && inferred && string_read(v, inferred, name, size, NAME_CHARS))
		return "name not readable";
	return NULL;
}

/* The line (from 1) of source position pos of script: from its line ends
 * when V8 computed them, else counted in its source; 0 when neither can
 * be read. */
static uint32_t script_line(struct kp_v8 *v, uint64_t script, int64_t pos)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t ends, len, src;
	unsigned type;

	if (pos < 0)
		return 0;
	if (field(v, script, m->script_line_ends, &ends) && type_of(v, ends, &type) &&
	    type == (unsigned)m->type_fixed_array && field(v, ends, m->array_length, &len) &&
	    is_smi(v, len) && smi(len) > 0 && smi(len) <= MAX_LENGTH) {
		/* the first line whose end is at or after pos */
		int64_t lo = 0, hi = smi(len);

		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;
			uint64_t w;

			if (!field(v, ends, m->array_data + mid * 8, &w) || !is_smi(v, w))
				return 0;
			if (smi(w) < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < smi(len) ? (uint32_t)lo + 1 : 0;
	}
	/* no line ends yet: count the source's newlines before pos */
	if (!m->script_source || !field(v, script, m->script_source, &src) ||
	    !type_of(v, src, &type) || (int64_t)type >= m->first_nonstring_type ||
	    (type & (unsigned)m->repr_mask) != (unsigned)m->seq_tag || pos > SOURCE_SCAN)
		return 0;
	{
		bool one = (type & (unsigned)m->encoding_mask) == (unsigned)m->one_byte_tag;
		uint64_t at = src - 1 + (uint64_t)(one ? m->seq_one_chars : m->seq_two_chars);
		size_t unit = one ? 1 : 2, done = 0, want = (size_t)pos * unit;
		int32_t slen;
		uint32_t line = 1;
		unsigned char *chunk = v->chunk;

		if (!rd(v, src - 1 + (uint64_t)m->string_length, &slen, 4) || slen < pos)
			return 0;
		while (done < want) {
			size_t n = want - done < CHUNK ? want - done : CHUNK;

			if (!rd(v, at + done, chunk, n))
				return 0;
			for (size_t i = 0; i + unit <= n; i += unit)
				line += chunk[i] == '\n' && (one || chunk[i + 1] == 0);
			done += n;
		}
		return line;
	}
}

/* The bytecode of shared info sfi (for telling interpreted and Sparkplug
 * frames from optimized ones), 0 when it has none. */
static uint64_t bytecode_of(struct kp_v8 *v, uint64_t sfi)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t data;
	unsigned type;

	if (!m->sfi_function_data || !field(v, sfi, m->sfi_function_data, &data) ||
	    !type_of(v, data, &type))
		return 0;
	if (type == (unsigned)m->type_bytecode_array)
		return data;
	if (m->type_code && type == (unsigned)m->type_code && m->code_bytecode &&
	    field(v, data, m->code_bytecode, &data) && type_of(v, data, &type) &&
	    type == (unsigned)m->type_bytecode_array)
		return data;
	return 0;
}

/* A frame's function slot that holds no function: the frame is not
 * JavaScript's after all (a builtin's frame kept in JIT memory, a
 * generator resumed), and keeps the name its code has. */
static const char not_readable[] = "function not readable", not_function[] = "not a function";

/* Reads function fn into e (fn, map, sfi, bytecode, base); NULL, or why
 * it could not be named. */
static const char *function_read(struct kp_v8 *v, uint64_t fn, struct entry *e)
{
	const struct kp_v8meta *m = &v->m;
	char name[4 * NAME_CHARS + 1], script[4 * SCRIPT_CHARS + 1] = "";
	uint64_t nos, scr, sname;
	unsigned type;
	int64_t pos = -1;
	uint32_t line = 0;
	const char *why;

	memset(e, 0, sizeof(*e));
	e->fn = fn;
	name[0] = '\0';
	if (!is_obj(v, fn) || !field(v, fn, m->obj_map, &e->map) || !type_of(v, fn, &type))
		return not_readable;
	/* JSFunction and its subtypes (class constructors and the like) */
	if ((int64_t)type < m->type_js_function || (int64_t)type >= m->type_js_function + 32)
		return not_function;
	if (!field(v, fn, m->fn_context, &e->context) || !is_obj(v, e->context))
		return "function not readable";
	if (!field(v, fn, m->fn_shared, &e->sfi) || !type_of(v, e->sfi, &type) ||
	    type != (unsigned)m->type_sfi)
		return "no shared function info";
	if (!field(v, e->sfi, m->sfi_name_or_scope, &nos))
		return "shared function info not readable";
	e->nos = nos;
	if (!is_smi(v, nos)) {
		if (!type_of(v, nos, &type))
			return "name not readable";
		if (type == (unsigned)m->type_scope_info)
			why = scope_decode(v, nos, name, sizeof(name), &pos);
		else if ((int64_t)type < m->first_nonstring_type)
			why = string_read(v, nos, name, sizeof(name), NAME_CHARS);
		else
			why = "name of an unexpected type";
		if (why)
			return why;
	}
	if (field(v, e->sfi, m->sfi_script, &scr) && type_of(v, scr, &type) &&
	    type == (unsigned)m->type_script) {
		e->has_script = true;
		if (field(v, scr, m->script_name, &sname) && is_string(v, sname) &&
		    string_read(v, sname, script, sizeof(script), SCRIPT_CHARS))
			return "script name not readable";
		line = script_line(v, scr, pos);
	}
	e->bytecode = bytecode_of(v, e->sfi);
	{
		size_t len = strlen(name) + strlen(script) + 16;

		e->base = kp_xmalloc(len);
		if (script[0] && line)
			snprintf(e->base, len, "%s %s:%u", name, script, line);
		else if (script[0])
			snprintf(e->base, len, "%s %s", name, script);
		else
			snprintf(e->base, len, "%s", name);
	}
	return NULL;
}

/* ---- frames ---- */

const char kp_v8_drop[] = "";

/* The word at addr of the sampled stack: from the copy when it holds it. */
static bool stack_word(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t addr, uint64_t *w)
{
	if (st->stack && addr >= st->sp && addr - st->sp <= st->stack_len &&
	    st->stack_len - (addr - st->sp) >= 8) {
		memcpy(w, st->stack + (addr - st->sp), 8);
		return true;
	}
	return rd(v, addr, w, 8);
}

/* The frame pointer of each frame of st (0: not found), by the chain of
 * saved frame pointers from the sampled one: a frame's fp is the one
 * whose saved return address is the next frame's ip. The chain goes up
 * the stack strictly; a link that matches no frame near the last one
 * ends it. */
static void frame_pointers(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t *fps, size_t n,
			   bool *suspect)
{
	uint64_t fp = st->fp;
	size_t k = 0;

	*suspect = false;
	memset(fps, 0, n * sizeof(*fps));
	for (int steps = 0; steps < MAX_FRAMES && k + 1 < n; steps++) {
		uint64_t next, ret;
		size_t j;

		if (fp < st->sp || fp % 8 || !stack_word(v, st, fp, &next) ||
		    !stack_word(v, st, fp + 8, &ret))
			return;
		/* the leaf may not have set its frame up yet: then fp is its
		 * caller's, and a frame or two may be skipped */
		for (j = k; j + 1 < n && j < k + 3; j++)
			if (st->ips[j + 1] == ret)
				break;
		if (j + 1 >= n || j >= k + 3 || st->ips[j + 1] != ret)
			return;
		/* a JIT leaf whose "caller" is other code, which the walk took
		 * from a stale word at sp: fp may be the leaf's own (told by
		 * its function slot, kp_v8_name_frames) */
		if (k == 0 && j == 1 && st->code[0] == KP_V8_JIT && st->code[1] == KP_V8_NOT_JS) {
			*suspect = true;
			j = 0;
		}
		fps[j] = fp;
		if (*suspect)
			j = 1;
		k = j + 1;
		if (next <= fp)
			return;
		fp = next;
	}
}

static const char *unknown_name(const char *why)
{
	static const char *const known[] = {
		"no shared function info",
		"shared function info not readable",
		"name not readable",
		"name of an unexpected type",
		"script name not readable",
		"scope info not readable",
		"scope info not as expected",
		"string nested too deep",
		"string not readable",
		"name is not a string",
		"string length out of range",
		"external string",
		"function moved",
	};
	static char names[sizeof(known) / sizeof(known[0])][64];

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(why, known[i]) == 0) {
			if (!names[i][0])
				snprintf(names[i], sizeof(names[i]), "[unknown: v8: %s]", why);
			return names[i];
		}
	return "[unknown: v8]";
}

/* The cached entry of function fn, checked against the words read of it
 * (its map and shared info): NULL when not cached or changed. */
static struct entry *cached(struct kp_v8 *v, uint64_t fn, const uint64_t *words)
{
	uint64_t i;
	struct entry *e;

	if (!kp_u64map_get(&v->index, fn, &i))
		return NULL;
	e = &v->e[i - 1];
	if (e->not_function ? words[0] != e->map
			    : words[0] != e->map || words[v->m.fn_shared / 8] != e->sfi ||
				      words[v->m.fn_context / 8] != e->context) {
		kp_u64map_del(&v->index, fn);
		return NULL;
	}
	return e;
}

/* Whether a frame's context ctx is function e's, or a block's inside it
 * (a few links of previous contexts up): else the function slot's
 * address holds another function than the frame's (V8 moved the frame's
 * since the sample, and put this one there). */
static bool context_of(struct kp_v8 *v, uint64_t ctx, const struct entry *e)
{
	for (int i = 0; i < 4 && is_obj(v, ctx); i++) {
		if (ctx == e->context)
			return true;
		if (!field(v, ctx, v->m.array_data + v->m.context_prev * 8, &ctx))
			return false;
	}
	return false;
}

/* A new function (words: its first words, read) of a shared info named
 * before: named as that one, once its map is a function's map seen
 * before and the shared info still has the name it had (one read, where
 * reading the function anew takes a dozen: a closure made at each call,
 * an async function's resolve closures). false when not so. */
static bool from_shared(struct kp_v8 *v, uint64_t fn, const uint64_t *words, struct entry *out)
{
	uint64_t i, nos, dummy;
	const struct entry *s;

	if (!kp_u64map_get(&v->fn_maps, words[0], &dummy) ||
	    !kp_u64map_get(&v->by_sfi, words[v->m.fn_shared / 8], &i))
		return false;
	s = &v->e[i - 1];
	if (s->not_function || !field(v, s->sfi, v->m.sfi_name_or_scope, &nos) || nos != s->nos)
		return false;
	*out = *s;
	out->fn = fn;
	out->map = words[0];
	out->context = words[v->m.fn_context / 8];
	out->base = kp_xstrdup(s->base);
	memset(out->named, 0, sizeof(out->named));
	return true;
}

static struct entry *cache_add(struct kp_v8 *v, const struct entry *in)
{
	uint64_t old;

	if (kp_u64map_get(&v->index, in->fn, &old)) {
		struct entry *e = &v->e[old - 1];

		free(e->base);
		for (int k = 0; k < 3; k++)
			free(e->named[k]);
		*e = *in;
		return e;
	}
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 256;
		v->e = kp_xrealloc(v->e, v->cap * sizeof(*v->e));
	}
	v->e[v->n] = *in;
	kp_u64map_put(&v->index, in->fn, ++v->n);
	if (!in->not_function) {
		kp_u64map_put(&v->by_sfi, in->sfi, v->n);
		kp_u64map_put(&v->fn_maps, in->map, 1);
	}
	return &v->e[v->n - 1];
}

/* The name of e for a frame with marker mk ('~', '^', '*'). */
static const char *marked(struct entry *e, char mk)
{
	int k = mk == '~' ? 0 : mk == '^' ? 1 : 2;

	if (!e->named[k]) {
		size_t len = strlen(e->base) + 5;

		e->named[k] = kp_xmalloc(len);
		snprintf(e->named[k], len, "JS:%c%s", mk, e->base);
	}
	return e->named[k];
}

/* The name of a JavaScript frame (frame pointer fp, running code) whose
 * slots hold function fn and context ctx, w the function's first words
 * as read this sample: NULL where the frame keeps its name. */
static const char *frame_name(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t fp,
			      uint8_t code, uint64_t fn, uint64_t ctx, const uint64_t *w)
{
	struct entry *e = cached(v, fn, w), tmp;
	uint64_t bc = 0;
	bool has_bc;

	v->st.frames++;
	if (e && e->not_function)
		return NULL;
	if (e) {
		v->st.hits++;
	} else if (from_shared(v, fn, w, &tmp)) {
		v->st.hits++;
		e = cache_add(v, &tmp);
	} else {
		const char *why = function_read(v, fn, &tmp);

		if (why == not_readable || why == not_function) {
			free(tmp.base);
			if (why == not_function) { /* a frame kept as it is, by its map */
				tmp.base = NULL;
				tmp.not_function = true;
				cache_add(v, &tmp);
			}
			return NULL;
		}
		if (why) {
			free(tmp.base);
			v->st.unknown++;
			return unknown_name(why);
		}
		e = cache_add(v, &tmp);
	}
	/* a builtin running a function of no script (forEach) keeps its
	 * own name */
	if (code == KP_V8_BUILTIN && !e->has_script)
		return NULL;
	has_bc = e->bytecode && stack_word(v, st, fp + (uint64_t)v->m.fp_bytecode_array, &bc) &&
		 bc == e->bytecode;
	if (!context_of(v, ctx, e) || (code == KP_V8_BUILTIN && !has_bc)) {
		/* not the frame's function, or a builtin's frame of another
		 * shape than the interpreter's: the builtin keeps its name */
		if (code != KP_V8_JIT)
			return NULL;
		v->st.unknown++;
		return unknown_name("function moved");
	}
	return marked(e, code == KP_V8_BUILTIN ? '~' : has_bc ? '^' : '*');
}

void kp_v8_name_frames(struct kp_v8 *v, const struct kp_v8_stack *st, const char **names)
{
	const struct kp_v8meta *m = &v->m;
	size_t n = st->n < MAX_FRAMES ? st->n : MAX_FRAMES;
	uint64_t fps[MAX_FRAMES], fns[MAX_FRAMES], ctxs[MAX_FRAMES], addrs[MAX_FRAMES];
	uint64_t words[MAX_FRAMES * 8];
	size_t idx[MAX_FRAMES], nfn = 0, got;
	size_t wlen = (size_t)(m->fn_shared > m->fn_context ? m->fn_shared : m->fn_context) + 8;
	bool any = false, suspect;

	for (size_t i = 0; i < st->n; i++)
		names[i] = NULL;
	for (size_t i = 0; i < n && !any; i++)
		any = st->code[i] != KP_V8_NOT_JS;
	if (!any)
		return;
	if (v->n >= MAX_CACHE)
		cache_clear(v);
	v->budget = MAX_READS;
	v->bytes_budget = MAX_BYTES;
	frame_pointers(v, st, fps, n, &suspect);
	/* each JavaScript frame's function: a tagged context where other
	 * frames keep their type's marker */
	for (size_t i = 0; i < n; i++) {
		uint64_t ctx, fn;

		if (!fps[i] || st->code[i] == KP_V8_NOT_JS ||
		    !stack_word(v, st, fps[i] + (uint64_t)m->fp_context, &ctx) || !is_obj(v, ctx) ||
		    !stack_word(v, st, fps[i] + (uint64_t)m->fp_function, &fn))
			continue;
		if (!is_obj(v, fn))
			continue;
		fns[nfn] = fn;
		ctxs[nfn] = ctx;
		addrs[nfn] = fn - 1;
		idx[nfn++] = i;
	}
	if (!nfn || wlen > 8 * sizeof(words[0]))
		return;
	/* the functions' first words, at once: the cache's check */
	got = 0;
	if (v->mem.readv && v->budget) {
		v->budget--;
		v->st.reads++;
		got = v->mem.readv(v->mem.arg, addrs, wlen, words, nfn);
	}
	for (size_t f = got; f < nfn; f++)
		if (!rd(v, addrs[f], (char *)words + f * wlen, wlen))
			memset((char *)words + f * wlen, 0, wlen);
	for (size_t f = 0; f < nfn; f++) {
		size_t i = idx[f];
		uint64_t w[8];

		memcpy(w, (char *)words + f * wlen, wlen);
		names[i] = frame_name(v, st, fps[i], st->code[i], fns[f], ctxs[f], w);
		if (i == 0 && suspect && names[0] && strncmp(names[0], "JS:", 3) == 0)
			names[1] = kp_v8_drop; /* the leaf's frame is set up: no caller between */
	}
}
