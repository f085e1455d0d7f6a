/* JavaScript frames named from a live V8 heap (see v8.h): the caches,
 * optimized code and the frames; the heap's objects are read in v8_heap.c
 * (what the files share: v8P.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/v8P.h"
#include "util/u64map.h"
#include "util/xalloc.h"

struct kp_v8 *kp_v8_new(const struct kp_v8meta *m, const struct kp_v8_mem *mem)
{
	struct kp_v8 *v = kp_xcalloc(1, sizeof(*v));

	v->m = *m;
	v->mem = *mem;
	kp_u64map_init(&v->index);
	kp_u64map_init(&v->by_sfi);
	kp_u64map_init(&v->fn_maps);
	kp_u64map_init(&v->block_index);
	kp_u64map_init(&v->code_index);
	kp_u64map_init(&v->line_index);
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
	v->nblocks = 0;
	kp_u64map_fini(&v->block_index);
	kp_u64map_init(&v->block_index);
}

static void codes_clear(struct kp_v8 *v)
{
	for (size_t i = 0; i < v->ncodes; i++) {
		struct code *cd = &v->codes[i];

		for (size_t k = 0; cd->names && k < (size_t)cd->n * (MAX_INLINE + 1); k++)
			free(cd->names[k]);
		free(cd->names);
		free(cd->nnames);
		free(cd->off);
		free(cd->pos);
	}
	v->ncodes = 0;
	v->code_bytes = 0;
	kp_u64map_fini(&v->code_index);
	kp_u64map_init(&v->code_index);
	for (size_t i = 0; i < v->nlines; i++)
		free(v->lines[i].end);
	v->nlines = 0;
	kp_u64map_fini(&v->line_index);
	kp_u64map_init(&v->line_index);
}

void kp_v8_free(struct kp_v8 *v)
{
	if (!v)
		return;
	codes_clear(v);
	kp_u64map_fini(&v->code_index);
	kp_u64map_fini(&v->line_index);
	free(v->codes);
	free(v->lines);
	cache_clear(v);
	kp_u64map_fini(&v->index);
	kp_u64map_fini(&v->by_sfi);
	kp_u64map_fini(&v->fn_maps);
	kp_u64map_fini(&v->block_index);
	free(v->blocks);
	free(v->e);
	free(v);
}

void kp_v8_stats(const struct kp_v8 *v, struct kp_v8_stats *st)
{
	*st = v->st;
	st->cached = v->n;
}

/* Whether what was found at time checked (a read made after it) holds
 * for sample st: the read was made after st was taken, as a read made
 * for st itself would be. */
static bool checked_for(const struct kp_v8_stack *st, uint64_t checked)
{
	return st->time && checked > CHECK_MARGIN_NS && st->time <= checked - CHECK_MARGIN_NS;
}

/* The word of a function's first words that holds its code; 0: none. */
static size_t code_word(const struct kp_v8 *v)
{
	return v->m.fn_proto > 8 && v->m.fn_proto <= 64 ? (size_t)(v->m.fn_proto - 8) / 8 : 0;
}

/* ---- optimized code: the functions it inlined, the sampled line ---- */

static uint32_t u32_at(const unsigned char *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A signed VLQ of V8's source position tables (zig-zag, 7 bits a byte)
 * at b[*i..n); false past the end or too long. */
static bool vlq(const unsigned char *b, size_t n, size_t *i, int64_t *out)
{
	uint64_t v = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (*i >= n)
			return false;
		v |= (uint64_t)(b[*i] & 0x7f) << shift;
		if (!(b[(*i)++] & 0x80)) {
			*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
			return true;
		}
	}
	return false;
}

/* Reads optimized code cd->addr: NULL, or why it is not read. */
static const char *code_read(struct kp_v8 *v, struct code *cd)
{
	const struct kp_v8meta *m = &v->m;
	uint64_t w[8], spt, len;
	unsigned type;
	size_t i = 0;
	int64_t off = 0, pos = 0;
	unsigned char *b;

	if (!kp_v8_type_of(v, cd->addr, &type) || type != (unsigned)m->type_code ||
	    !kp_v8_rd(v, cd->addr - 1, w, sizeof(w)))
		return "not code";
	cd->deopt = w[m->code_deopt / 8];
	spt = w[m->code_positions / 8];
	cd->istart = w[5];		 /* instruction_start */
	cd->kind = (uint8_t)(w[6] & 15); /* flags: the kind first */
	cd->isize = (uint32_t)w[7];	 /* instruction_size */
	if ((cd->kind != KIND_TURBOFAN && cd->kind != KIND_MAGLEV) || !cd->isize ||
	    cd->isize > (64u << 20) || cd->istart < 4096 || !kp_v8_type_of(v, spt, &type) ||
	    type != (unsigned)m->type_byte_array || !kp_v8_field(v, spt, m->array_length, &len) ||
	    !kp_v8_is_smi(v, len) || kp_v8_smi(len) <= 0 || kp_v8_smi(len) > CHUNK)
		return "not optimized code";
	b = v->chunk;
	if (!kp_v8_rd(v, spt - 1 + (uint64_t)m->array_data, b, (size_t)kp_v8_smi(len)))
		return "no positions";
	cd->off = kp_xmalloc(MAX_POSITIONS * sizeof(*cd->off));
	cd->pos = kp_xmalloc(MAX_POSITIONS * sizeof(*cd->pos));
	while (i < (size_t)kp_v8_smi(len) && cd->n < MAX_POSITIONS) {
		int64_t d, p;

		if (!vlq(b, (size_t)kp_v8_smi(len), &i, &d) ||
		    !vlq(b, (size_t)kp_v8_smi(len), &i, &p))
			return "positions not as expected";
		off += d < 0 ? -d - 1 : d; /* the sign says whether a statement */
		pos += p;
		if (off < 0 || off > (int64_t)cd->isize || (cd->n && off < cd->off[cd->n - 1]))
			return "positions not as expected";
		cd->off[cd->n] = (uint32_t)off;
		cd->pos[cd->n++] = (uint64_t)pos;
	}
	if (!cd->n)
		return "no positions";
	cd->off = kp_xrealloc(cd->off, cd->n * sizeof(*cd->off));
	cd->pos = kp_xrealloc(cd->pos, cd->n * sizeof(*cd->pos));
	cd->names = kp_xcalloc((size_t)cd->n * (MAX_INLINE + 1), sizeof(*cd->names));
	cd->nnames = kp_xcalloc(cd->n, 1);
	v->code_bytes += (size_t)cd->n * (sizeof(*cd->off) + sizeof(*cd->pos) + 1 +
					  (MAX_INLINE + 1) * sizeof(*cd->names));
	return NULL;
}

static struct code *code_get(struct kp_v8 *v, uint64_t addr)
{
	uint64_t i;
	struct code cd = {.addr = addr};

	if (kp_u64map_get(&v->code_index, addr, &i))
		return i ? &v->codes[i - 1] : NULL;
	if (code_read(v, &cd)) {
		free(cd.off);
		free(cd.pos);
		kp_u64map_put(&v->code_index, addr, 0);
		return NULL;
	}
	if (v->ncodes == v->codes_cap) {
		v->codes_cap = v->codes_cap ? 2 * v->codes_cap : 16;
		v->codes = kp_xrealloc(v->codes, v->codes_cap * sizeof(*v->codes));
	}
	v->codes[v->ncodes] = cd;
	kp_u64map_put(&v->code_index, addr, ++v->ncodes);
	return &v->codes[v->ncodes - 1];
}

/* V8 11's SourcePosition: bit 0 external, then 30 bits of script offset
 * and 16 of inlining id, each stored plus one. */
static int64_t pos_offset(uint64_t p)
{
	return (int64_t)(p >> 1 & 0x3fffffff) - 1;
}

static int pos_inlining(uint64_t p)
{
	return (int)(p >> 31 & 0xffff) - 1;
}

/* "JS:<mk>name script:line" of shared info sfi at script offset off. */
static char *describe_at(struct kp_v8 *v, uint64_t sfi, int64_t off, char mk)
{
	char name[4 * NAME_CHARS + 1], script[4 * SCRIPT_CHARS + 1];
	uint64_t nos, scr;
	uint32_t line;
	unsigned type;
	size_t len;
	char *s;

	if (!kp_v8_type_of(v, sfi, &type) || type != (unsigned)v->m.type_sfi ||
	    !kp_v8_field(v, sfi, v->m.sfi_name_or_scope, &nos) ||
	    kp_v8_heap_sfi_describe(v, sfi, nos, name, script, &scr, &line))
		return NULL;
	line = scr ? kp_v8_heap_script_line(v, scr, off) : 0;
	len = strlen(name) + strlen(script) + 20;
	s = kp_xmalloc(len);
	if (script[0] && line)
		snprintf(s, len, "JS:%c%s %s:%u", mk, name, script, line);
	else if (script[0])
		snprintf(s, len, "JS:%c%s %s", mk, name, script);
	else
		snprintf(s, len, "JS:%c%s", mk, name);
	return s;
}

/* The names of position k of cd, function sfi's code: made from the
 * deoptimization data's inlining positions and literals (each checked);
 * false when they do not check out. */
static bool code_names(struct kp_v8 *v, struct code *cd, uint32_t k, uint64_t sfi)
{
	const struct kp_v8meta *m = &v->m;
	char **out = cd->names + (size_t)k * (MAX_INLINE + 1);
	uint64_t p = cd->pos[k], sfis[MAX_INLINE + 1], ipa = 0, lits = 0, len;
	int64_t offs[MAX_INLINE + 1];
	unsigned type;
	size_t n = 0;
	int inl = pos_inlining(p);

	if (inl >= 0 &&
	    (!kp_v8_type_of(v, cd->deopt, &type) || type != (unsigned)m->type_fixed_array ||
	     !kp_v8_field(v, cd->deopt, m->array_data + 7 * 8, &ipa) ||
	     !kp_v8_field(v, cd->deopt, m->array_data + 2 * 8, &lits) ||
	     !kp_v8_type_of(v, ipa, &type) || type != (unsigned)m->type_byte_array ||
	     !kp_v8_type_of(v, lits, &type) ||
	     (type != (unsigned)m->type_weak_fixed_array && type != (unsigned)m->type_fixed_array)))
		return false;
	/* innermost first: each inlined function at its position, then its
	 * caller at the call's */
	while (inl >= 0) {
		unsigned char ip[16];
		uint64_t ilen, llen, f;
		int32_t id;

		if (n == MAX_INLINE || !kp_v8_field(v, ipa, m->array_length, &ilen) ||
		    !kp_v8_is_smi(v, ilen) ||
		    (uint64_t)(inl + 1) * 16 > (uint64_t)kp_v8_smi(ilen) ||
		    !kp_v8_rd(v, ipa - 1 + (uint64_t)m->array_data + (uint64_t)inl * 16, ip,
			      sizeof(ip)))
			return false;
		id = (int32_t)u32_at(ip + 8);
		if (!kp_v8_field(v, lits, m->array_length, &llen) || !kp_v8_is_smi(v, llen) ||
		    id < 0 || id >= kp_v8_smi(llen) ||
		    !kp_v8_field(v, lits, m->array_data + (int64_t)id * 8, &f))
			return false;
		sfis[n] = f & ~(uint64_t)2; /* a weak reference's tag */
		offs[n++] = pos_offset(p);
		memcpy(&p, ip, 8);
		inl = pos_inlining(p);
	}
	sfis[n] = sfi;
	offs[n++] = pos_offset(p);
	(void)len;
	for (size_t j = 0; j < n; j++) {
		char *s = describe_at(v, sfis[n - 1 - j], offs[n - 1 - j],
				      cd->kind == KIND_MAGLEV ? '+' : '*');

		if (!s) {
			for (size_t q = 0; q < j; q++) {
				free(out[q]);
				out[q] = NULL;
			}
			return false;
		}
		out[j] = s;
		v->code_bytes += strlen(s) + 1;
	}
	cd->nnames[k] = (uint8_t)n;
	return true;
}

/* The names of the optimized frame at pc (a return address when ret) of
 * function e whose code field is code_addr: outermost first, *n of them;
 * NULL where its code is not that (older code) or does not check out. */
static char *const *optimized_names(struct kp_v8 *v, const struct entry *e, uint64_t code_addr,
				    uint64_t pc, bool ret, size_t *n)
{
	struct code *cd;
	uint64_t off;
	uint32_t lo = 0, hi;

	if (!v->m.fn_proto || !v->m.code_positions || !v->m.type_byte_array ||
	    !kp_v8_is_obj(v, code_addr) || !(cd = code_get(v, code_addr)))
		return NULL;
	if (ret)
		pc--;
	if (pc < cd->istart || pc - cd->istart >= cd->isize)
		return NULL;
	off = pc - cd->istart;
	/* the last position at or before the instruction */
	hi = cd->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (cd->off[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	lo--;
	if (!cd->nnames[lo] && !code_names(v, cd, lo, e->sfi))
		return NULL;
	*n = cd->nnames[lo];
	return cd->names + (size_t)lo * (MAX_INLINE + 1);
}

const char *const *kp_v8_inlined(const struct kp_v8 *v, size_t i, size_t *n)
{
	*n = i < MAX_FRAMES ? v->ninl[i] : 0;
	return *n ? v->inl[i] : NULL;
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
	return kp_v8_rd(v, addr, w, 8);
}

/* Whether the function in the frame at fp has the optimized code the
 * sampled ip is in: then fp is the leaf's own frame, not its caller's
 * (which a leaf in its prologue would leave). */
static bool leaf_owns(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t fp)
{
	uint64_t fn, w[8], i, dummy;
	size_t at = code_word(v);
	struct code *cd;

	if (!at || !stack_word(v, st, fp + (uint64_t)v->m.fp_function, &fn) || !kp_v8_is_obj(v, fn))
		return false;
	/* a function cached and checked after this sample: its code as then
	 * read; else one read: a map known as a function's, and its code */
	if (kp_u64map_get(&v->index, fn, &i) && !v->e[i - 1].not_function &&
	    checked_for(st, v->e[i - 1].checked)) {
		w[0] = v->e[i - 1].map;
		w[at] = v->e[i - 1].code;
	} else if (!kp_v8_rd(v, fn - 1, w, (at + 1) * 8)) {
		return false;
	}
	if (!kp_u64map_get(&v->fn_maps, w[0], &dummy) || !kp_v8_is_obj(v, w[at]) ||
	    !(cd = code_get(v, w[at])))
		return false;
	return st->ips[0] >= cd->istart && st->ips[0] - cd->istart < cd->isize;
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
		} else if (k == 0 && j == 1 && st->code[0] == KP_V8_JIT &&
			   st->code[1] == KP_V8_BUILTIN && leaf_owns(v, st, fp)) {
			*suspect = true; /* a builtin (CEntry) the walk took: told by the code */
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

/* The cached entry of function fn, checked against the words of it
 * (its map, shared info and context): read after now, or, when !read,
 * the entry's own (checked by an earlier read). NULL when not cached or
 * changed. */
static struct entry *cached(struct kp_v8 *v, uint64_t fn, const uint64_t *words, bool read,
			    uint64_t now)
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
	if (read) {
		/* the latest check serves the most samples (0: a read at a
		 * time not known, which leaves the last known one) */
		if (now > e->checked)
			e->checked = now;
		e->code = code_word(v) ? words[code_word(v)] : 0;
	}
	return e;
}

/* Whether a frame's context ctx is function e's, or a block's inside it
 * (a few links of previous contexts up): else the function slot's
 * address holds another function than the frame's (V8 moved the frame's
 * since the sample, and put this one there). */
static bool context_of(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t ctx,
		       const struct entry *e)
{
	uint64_t block = ctx, k;

	if (ctx == e->context)
		return true;
	/* a block found inside it by a read made after this sample */
	if (kp_u64map_get(&v->block_index, block, &k) && v->blocks[k - 1].outer == e->context &&
	    checked_for(st, v->blocks[k - 1].checked))
		return true;
	for (int i = 0; i < 4 && kp_v8_is_obj(v, ctx); i++) {
		if (ctx == e->context) {
			if (!st->now || v->nblocks >= MAX_CACHE)
				return true;
			if (!kp_u64map_get(&v->block_index, block, &k)) {
				if (v->nblocks == v->blocks_cap) {
					v->blocks_cap = v->blocks_cap ? 2 * v->blocks_cap : 64;
					v->blocks = kp_xrealloc(v->blocks,
								v->blocks_cap * sizeof(*v->blocks));
				}
				kp_u64map_put(&v->block_index, block, k = ++v->nblocks);
			}
			v->blocks[k - 1] = (struct block){e->context, st->now};
			return true;
		}
		if (!kp_v8_field(v, ctx, v->m.array_data + v->m.context_prev * 8, &ctx))
			return false;
	}
	return false;
}

/* A new function (words: its first words, read) of a shared info named
 * before: named as that one, once its map is a function's map seen
 * before and the shared info still has the name it had (one read, where
 * reading the function anew takes a dozen: a closure made at each call,
 * an async function's resolve closures). false when not so. */
static bool from_shared(struct kp_v8 *v, const struct kp_v8_stack *st, uint64_t fn,
			const uint64_t *words, struct entry *out)
{
	uint64_t i, nos, dummy;
	struct entry *s;

	if (!kp_u64map_get(&v->fn_maps, words[0], &dummy) ||
	    !kp_u64map_get(&v->by_sfi, words[v->m.fn_shared / 8], &i))
		return false;
	s = &v->e[i - 1];
	if (s->not_function)
		return false;
	/* the name word read after the sample: now, or for an earlier one */
	if (!checked_for(st, s->sfi_checked)) {
		if (!kp_v8_field(v, s->sfi, v->m.sfi_name_or_scope, &nos) || nos != s->nos)
			return false;
		if (st->now > s->sfi_checked)
			s->sfi_checked = st->now;
	}
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
static const char *frame_name(struct kp_v8 *v, const struct kp_v8_stack *st, size_t i, uint64_t fp,
			      uint8_t code, uint64_t fn, uint64_t ctx, const uint64_t *w, bool read)
{
	struct entry *e = cached(v, fn, w, read, st->now), tmp;
	uint64_t bc = 0;
	bool has_bc;

	v->st.frames++;
	if (e && e->not_function)
		return NULL;
	if (e) {
		v->st.hits++;
	} else if (from_shared(v, st, fn, w, &tmp)) {
		v->st.hits++;
		tmp.checked = read ? st->now : 0;
		tmp.code = read && code_word(v) ? w[code_word(v)] : 0;
		e = cache_add(v, &tmp);
	} else {
		const char *why = kp_v8_heap_function_read(v, fn, &tmp);

		tmp.checked = tmp.sfi_checked = st->now; /* function_read's reads are after it */
		tmp.code = read && code_word(v) ? w[code_word(v)] : 0;

		if (why == kp_v8_heap_not_readable || why == kp_v8_heap_not_function) {
			/* a frame kept as it is, by its map (0: not readable, a
			 * slot that held a young object's address, freed since) */
			free(tmp.base);
			tmp.base = NULL;
			tmp.not_function = true;
			cache_add(v, &tmp);
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
	if (!context_of(v, st, ctx, e) || (code == KP_V8_BUILTIN && !has_bc)) {
		/* not the frame's function, or a builtin's frame of another
		 * shape than the interpreter's: the builtin keeps its name */
		if (code != KP_V8_JIT)
			return NULL;
		v->st.unknown++;
		return unknown_name("function moved");
	}
	if (code == KP_V8_JIT && !has_bc && v->m.fn_proto) {
		/* optimized code: the sampled line, and what it inlined */
		size_t n;
		char *const *on = optimized_names(v, e, e->code, st->ips[i], i > 0, &n);

		if (on) {
			v->inl[i] = (const char *const *)on + 1;
			v->ninl[i] = (uint8_t)(n - 1);
			return on[0];
		}
	}
	return marked(e, code == KP_V8_BUILTIN ? '~' : has_bc ? '^' : '*');
}

void kp_v8_name_frames(struct kp_v8 *v, const struct kp_v8_stack *st, const char **names)
{
	const struct kp_v8meta *m = &v->m;
	size_t n = st->n < MAX_FRAMES ? st->n : MAX_FRAMES;
	uint64_t fps[MAX_FRAMES], fns[MAX_FRAMES], ctxs[MAX_FRAMES], addrs[MAX_FRAMES];
	uint64_t words[MAX_FRAMES * 8], got_words[MAX_FRAMES * 8];
	size_t idx[MAX_FRAMES], toread[MAX_FRAMES], nfn = 0, nread = 0, got;
	bool read[MAX_FRAMES];
	int64_t last = m->fn_shared > m->fn_context ? m->fn_shared : m->fn_context;
	size_t wlen;
	bool any = false, suspect;

	if (m->fn_proto && m->fn_proto - 8 > last)
		last = m->fn_proto - 8; /* the function's code, for optimized frames */
	wlen = (size_t)last + 8;
	memset(v->ninl, 0, sizeof(v->ninl));
	for (size_t i = 0; i < st->n; i++)
		names[i] = NULL;
	for (size_t i = 0; i < n && !any; i++)
		any = st->code[i] != KP_V8_NOT_JS;
	if (!any)
		return;
	if (v->n >= MAX_CACHE)
		cache_clear(v);
	if (v->ncodes >= MAX_CODES || v->code_bytes > CODE_BYTES)
		codes_clear(v);
	v->budget = MAX_READS;
	v->bytes_budget = MAX_BYTES;
	frame_pointers(v, st, fps, n, &suspect);
	/* each JavaScript frame's function: a tagged context where other
	 * frames keep their type's marker */
	for (size_t i = 0; i < n; i++) {
		uint64_t ctx, fn;

		if (!fps[i] || st->code[i] == KP_V8_NOT_JS ||
		    !stack_word(v, st, fps[i] + (uint64_t)m->fp_context, &ctx) ||
		    !kp_v8_is_obj(v, ctx) ||
		    !stack_word(v, st, fps[i] + (uint64_t)m->fp_function, &fn))
			continue;
		if (!kp_v8_is_obj(v, fn))
			continue;
		fns[nfn] = fn;
		ctxs[nfn] = ctx;
		idx[nfn++] = i;
	}
	if (!nfn || wlen > 8 * sizeof(words[0]))
		return;
	/* the cache's check: each function's first words as read after the
	 * sample was taken, all at once; or, for a function found unchanged
	 * by a read made for an earlier sample but after this one was taken
	 * (a round's samples are named after the round), as then found */
	memset(words, 0, nfn * 8 * sizeof(words[0]));
	for (size_t f = 0; f < nfn; f++) {
		uint64_t k;
		const struct entry *e;

		read[f] = true;
		if (kp_u64map_get(&v->index, fns[f], &k) &&
		    checked_for(st, (e = &v->e[k - 1])->checked)) {
			uint64_t *w = words + f * 8;

			read[f] = false;
			v->st.shared++;
			w[0] = e->map;
			if (!e->not_function) {
				w[m->fn_shared / 8] = e->sfi;
				w[m->fn_context / 8] = e->context;
				if (code_word(v))
					w[code_word(v)] = e->code;
			}
			continue;
		}
		addrs[nread] = fns[f] - 1;
		toread[nread++] = f;
	}
	got = 0;
	if (nread && v->mem.readv && v->budget) {
		v->budget--;
		v->st.reads++;
		got = v->mem.readv(v->mem.arg, addrs, wlen, got_words, nread);
	}
	for (size_t r = 0; r < nread; r++)
		if (r < got || kp_v8_rd(v, addrs[r], (char *)got_words + r * wlen, wlen))
			memcpy(words + toread[r] * 8, (char *)got_words + r * wlen, wlen);
	for (size_t f = 0; f < nfn; f++) {
		size_t i = idx[f];

		names[i] = frame_name(v, st, i, fps[i], st->code[i], fns[f], ctxs[f], words + f * 8,
				      read[f]);
		if (i == 0 && suspect && names[0] && strncmp(names[0], "JS:", 3) == 0)
			names[1] = kp_v8_drop; /* the leaf's frame is set up: no caller between */
	}
}
