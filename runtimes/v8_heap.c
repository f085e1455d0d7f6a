/* V8's heap objects read from outside, each read bounded and its values
 * checked: tagged words, instance types, strings of every representation,
 * a function's name from its shared info or scope info, the line of a
 * source position (kp_v8's readers, see v8P.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/v8P.h"
#include "util/xalloc.h"

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
	if (!kp_v8_rd(v, addr + from * unit, raw, want * unit))
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
	if (!kp_v8_type_of(v, obj, &type) ||
	    !kp_v8_rd(v, obj - 1 + (uint64_t)m->string_length, &len, 4))
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

		if (!kp_v8_field(v, obj, m->thin_actual, &actual))
			return "string not readable";
		return string_part(v, actual, from, count, b, depth + 1);
	}
	if (repr == (unsigned)m->sliced_tag) {
		uint64_t parent, off;

		if (!kp_v8_field(v, obj, m->sliced_parent, &parent) ||
		    !kp_v8_field(v, obj, m->sliced_offset, &off) || !kp_v8_is_smi(v, off) ||
		    kp_v8_smi(off) < 0)
			return "string not readable";
		return string_part(v, parent, (uint64_t)kp_v8_smi(off) + from, count, b, depth + 1);
	}
	if (repr == (unsigned)m->cons_tag) {
		uint64_t first, second;
		int32_t flen;
		const char *why;

		if (!kp_v8_field(v, obj, m->cons_first, &first) ||
		    !kp_v8_field(v, obj, m->cons_second, &second) ||
		    !kp_v8_rd(v, first - 1 + (uint64_t)m->string_length, &flen, 4) || flen < 0 ||
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

	return kp_v8_type_of(v, obj, &t) && (int64_t)t < v->m.first_nonstring_type &&
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
	if (!kp_v8_rd(v, si - 1 + 8, hdr, (size_t)m->scope_first_vars * 8))
		return "scope info not readable";
	if (!kp_v8_is_smi(v, hdr[0]) || !kp_v8_is_smi(v, hdr[m->scope_ncontextlocals]))
		return "scope info not as expected";
	flags = (uint64_t)kp_v8_smi(hdr[0]);
	ncl = kp_v8_smi(hdr[m->scope_ncontextlocals]);
	if (ncl < 0 || ncl > MAX_LOCALS)
		return "scope info not as expected";
	type = (int64_t)(flags & 0xf);
	if (type == SCOPE_MODULE)
		return NULL; /* a module's top level: no name, its variables first */
	idx = m->scope_first_vars + (ncl < INLINED_NAMES ? ncl : 1) + ncl;
	if (flags >> 10 & 1)
		idx++; /* the saved class variable */
	if (!kp_v8_rd(v, si - 1 + 8 + (uint64_t)idx * 8, s, sizeof(s)))
		return "scope info not readable";
	if (flags >> 12 & 3) {
		if (!kp_v8_is_smi(v, s[1]) || (!kp_v8_is_smi(v, s[0]) && !is_string(v, s[0])))
			return "scope info not as expected";
		fname = kp_v8_is_smi(v, s[0]) ? 0 : s[0];
		k = 2;
	}
	if (flags >> 14 & 1) {
		if (kp_v8_is_smi(v, s[k]))
			return "scope info not as expected";
		inferred = is_string(v, s[k]) ? s[k] : 0;
		k++;
	}
	if (type == SCOPE_FUNCTION || type == SCOPE_SCRIPT || type == SCOPE_EVAL) {
		if (!kp_v8_is_smi(v, s[k]) || !kp_v8_is_smi(v, s[k + 1]) || kp_v8_smi(s[k]) < 0 ||
		    kp_v8_smi(s[k]) > kp_v8_smi(s[k + 1]))
			return "scope info not as expected";
		*pos = kp_v8_smi(s[k]);
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
/* The line ends of script, whose line ends array is ends of len lines,
 * read whole once (up to 64 Ki lines) and kept while the script keeps
 * that array; NULL when not kept. */
static const struct lines *lines_of(struct kp_v8 *v, uint64_t script, uint64_t ends, int64_t len)
{
	uint64_t i;
	struct lines l = {script, ends, (uint32_t)len, NULL};
	uint64_t *w;

	if (kp_u64map_get(&v->line_index, script, &i) && v->lines[i - 1].ends == ends)
		return &v->lines[i - 1];
	if (len > 65536 || v->nlines >= 32)
		return NULL;
	v->code_bytes += (size_t)len * sizeof(*l.end);
	w = kp_xmalloc((size_t)len * 8);
	if (!kp_v8_rd(v, ends - 1 + (uint64_t)v->m.array_data, w, (size_t)len * 8)) {
		free(w);
		return NULL;
	}
	l.end = kp_xmalloc((size_t)len * sizeof(*l.end));
	for (int64_t k = 0; k < len; k++) {
		if (!kp_v8_is_smi(v, w[k]) || (k && kp_v8_smi(w[k]) < l.end[k - 1])) {
			free(w);
			free(l.end);
			return NULL;
		}
		l.end[k] = (int32_t)kp_v8_smi(w[k]);
	}
	free(w);
	if (kp_u64map_get(&v->line_index, script, &i)) {
		free(v->lines[i - 1].end);
		v->lines[i - 1] = l;
		return &v->lines[i - 1];
	}
	if (v->nlines == v->lines_cap) {
		v->lines_cap = v->lines_cap ? 2 * v->lines_cap : 8;
		v->lines = kp_xrealloc(v->lines, v->lines_cap * sizeof(*v->lines));
	}
	v->lines[v->nlines] = l;
	kp_u64map_put(&v->line_index, script, ++v->nlines);
	return &v->lines[v->nlines - 1];
}

uint32_t kp_v8_heap_script_line(struct kp_v8 *v, uint64_t script, int64_t pos)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t ends, len, src;
	unsigned type;
	const struct lines *l;

	if (pos < 0)
		return 0;
	if (kp_v8_field(v, script, m->script_line_ends, &ends) && kp_v8_is_obj(v, ends) &&
	    (l = kp_u64map_get(&v->line_index, script, &len) && v->lines[len - 1].ends == ends
			 ? &v->lines[len - 1]
			 : NULL)) {
		uint32_t lo = 0, hi = l->n;

		while (lo < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (l->end[mid] < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < l->n ? lo + 1 : 0;
	}
	if (kp_v8_field(v, script, m->script_line_ends, &ends) && kp_v8_type_of(v, ends, &type) &&
	    type == (unsigned)m->type_fixed_array && kp_v8_field(v, ends, m->array_length, &len) &&
	    kp_v8_is_smi(v, len) && kp_v8_smi(len) > 0 && kp_v8_smi(len) <= MAX_LENGTH) {
		/* the first line whose end is at or after pos */
		int64_t lo = 0, hi = kp_v8_smi(len);

		if (lines_of(v, script, ends, kp_v8_smi(len)))
			return kp_v8_heap_script_line(v, script, pos);

		while (lo < hi) {
			int64_t mid = lo + (hi - lo) / 2;
			uint64_t w;

			if (!kp_v8_field(v, ends, m->array_data + mid * 8, &w) ||
			    !kp_v8_is_smi(v, w))
				return 0;
			if (kp_v8_smi(w) < pos)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo < kp_v8_smi(len) ? (uint32_t)lo + 1 : 0;
	}
	/* no line ends yet: count the source's newlines before pos */
	if (!m->script_source || !kp_v8_field(v, script, m->script_source, &src) ||
	    !kp_v8_type_of(v, src, &type) || (int64_t)type >= m->first_nonstring_type ||
	    (type & (unsigned)m->repr_mask) != (unsigned)m->seq_tag || pos > SOURCE_SCAN)
		return 0;
	{
		bool one = (type & (unsigned)m->encoding_mask) == (unsigned)m->one_byte_tag;
		uint64_t at = src - 1 + (uint64_t)(one ? m->seq_one_chars : m->seq_two_chars);
		size_t unit = one ? 1 : 2, done = 0, want = (size_t)pos * unit;
		int32_t slen;
		uint32_t line = 1;
		unsigned char *chunk = v->chunk;

		if (!kp_v8_rd(v, src - 1 + (uint64_t)m->string_length, &slen, 4) || slen < pos)
			return 0;
		while (done < want) {
			size_t n = want - done < CHUNK ? want - done : CHUNK;

			if (!kp_v8_rd(v, at + done, chunk, n))
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

	if (!m->sfi_function_data || !kp_v8_field(v, sfi, m->sfi_function_data, &data) ||
	    !kp_v8_type_of(v, data, &type))
		return 0;
	if (type == (unsigned)m->type_bytecode_array)
		return data;
	if (m->type_code && type == (unsigned)m->type_code && m->code_bytecode &&
	    kp_v8_field(v, data, m->code_bytecode, &data) && kp_v8_type_of(v, data, &type) &&
	    type == (unsigned)m->type_bytecode_array)
		return data;
	return 0;
}

/* Shared info sfi (whose name word nos was read): its name into
 * name[4 * NAME_CHARS + 1], its script's name into script[4 *
 * SCRIPT_CHARS + 1] ("" without a script), *scr the script (0: none),
 * *line the line of the function's start (0: unknown). NULL, or why not. */
const char *kp_v8_heap_sfi_describe(struct kp_v8 *v, uint64_t sfi, uint64_t nos, char *name,
				    char *script, uint64_t *scr, uint32_t *line)
{
	const struct kp_v8meta *m = &v->m;
	size_t nsize = 4 * NAME_CHARS + 1, ssize = 4 * SCRIPT_CHARS + 1;
	uint64_t sname;
	unsigned type;
	int64_t pos = -1;
	const char *why = NULL;

	name[0] = script[0] = '\0';
	*scr = 0;
	*line = 0;
	if (!kp_v8_is_smi(v, nos)) {
		if (!kp_v8_type_of(v, nos, &type))
			return "name not readable";
		if (type == (unsigned)m->type_scope_info)
			why = scope_decode(v, nos, name, nsize, &pos);
		else if ((int64_t)type < m->first_nonstring_type)
			why = string_read(v, nos, name, nsize, NAME_CHARS);
		else
			why = "name of an unexpected type";
		if (why)
			return why;
	}
	if (kp_v8_field(v, sfi, m->sfi_script, scr) && kp_v8_type_of(v, *scr, &type) &&
	    type == (unsigned)m->type_script) {
		if (kp_v8_field(v, *scr, m->script_name, &sname) && is_string(v, sname) &&
		    string_read(v, sname, script, ssize, SCRIPT_CHARS))
			return "script name not readable";
		*line = kp_v8_heap_script_line(v, *scr, pos);
	} else {
		*scr = 0;
	}
	return NULL;
}

/* A frame's function slot that holds no function: the frame is not
 * JavaScript's after all (a builtin's frame kept in JIT memory, a
 * generator resumed), and keeps the name its code has. */
const char kp_v8_heap_not_readable[] = "function not readable",
	   kp_v8_heap_not_function[] = "not a function";

/* Reads function fn into e (fn, map, sfi, bytecode, base); NULL, or why
 * it could not be named. */
const char *kp_v8_heap_function_read(struct kp_v8 *v, uint64_t fn, struct entry *e)
{
	const struct kp_v8meta *m = &v->m;
	char name[4 * NAME_CHARS + 1], script[4 * SCRIPT_CHARS + 1] = "";
	uint64_t nos, scr;
	unsigned type;
	uint32_t line = 0;
	const char *why;

	memset(e, 0, sizeof(*e));
	e->fn = fn;
	name[0] = '\0';
	if (!kp_v8_is_obj(v, fn) || !kp_v8_field(v, fn, m->obj_map, &e->map) ||
	    !kp_v8_type_of(v, fn, &type))
		return kp_v8_heap_not_readable;
	/* JSFunction and its subtypes (class constructors and the like) */
	if ((int64_t)type < m->type_js_function || (int64_t)type >= m->type_js_function + 32)
		return kp_v8_heap_not_function;
	if (!kp_v8_field(v, fn, m->fn_context, &e->context) || !kp_v8_is_obj(v, e->context))
		return "function not readable";
	if (!kp_v8_field(v, fn, m->fn_shared, &e->sfi) || !kp_v8_type_of(v, e->sfi, &type) ||
	    type != (unsigned)m->type_sfi)
		return "no shared function info";
	if (!kp_v8_field(v, e->sfi, m->sfi_name_or_scope, &nos))
		return "shared function info not readable";
	e->nos = nos;
	if ((why = kp_v8_heap_sfi_describe(v, e->sfi, nos, name, script, &scr, &line)))
		return why;
	e->has_script = scr != 0;
	e->script = scr;
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
