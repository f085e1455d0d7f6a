/* What the files of kp_v8 share: the namer (struct kp_v8: its caches of
 * functions, optimized codes and line ends, its read budget) and the
 * readers of V8's heap objects. v8.c makes and clears the caches, reads
 * optimized code and names a sample's frames; v8_heap.c reads the heap
 * (bounded reads, strings, a function's name and script line). Private
 * to those files. */
#ifndef KP_RUNTIMES_V8P_H
#define KP_RUNTIMES_V8P_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/v8.h"
#include "util/u64map.h"

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

#define MAX_INLINE    8		 /* functions inlined into one another a frame */
#define MAX_CODES     512	 /* optimized codes cached; then they start over */
#define MAX_POSITIONS 8192	 /* source positions of one code */
#define CODE_BYTES    (16 << 20) /* held for codes and line ends; then they start over */
#define KIND_MAGLEV   12	 /* V8 11's CodeKind */
#define KIND_TURBOFAN 13

/* A read made for one sample checks another only when it was made this
 * long after the other was taken: the sample's time and the reader's
 * are two readings of CLOCK_MONOTONIC (the kernel's NMI-safe one and
 * clock_gettime), which may differ by far less. */
#define CHECK_MARGIN_NS 1000000

/* Optimized code (V8 11's Code: the layout past the metadata's fields is
 * V8 11's; every value is checked): its instructions, its source position
 * table decoded, and what each of its positions names, made when first
 * asked (outermost first: the function, then what it inlined). */
struct code {
	uint64_t addr, istart, deopt;
	uint32_t isize, n;
	uint8_t kind;
	uint32_t *off;	 /* code offset of each position, ascending */
	uint64_t *pos;	 /* V8's SourcePosition: script offset, inlining id */
	char **names;	 /* n * (MAX_INLINE + 1), made when first asked */
	uint8_t *nnames; /* how many of each; 0: not made yet */
};

/* A function named: by its address while its map and shared info stay. */
struct entry {
	uint64_t fn, map, sfi, context, bytecode, script;
	uint64_t checked;     /* when last found unchanged: a read made after it */
	uint64_t code;	      /* the function's code, as then read */
	uint64_t sfi_checked; /* when its shared info was last found with its name */
	uint64_t nos;	      /* the shared info's name or scope info, as read */
	char *base;	      /* "name script:line" */
	char *named[3];	      /* "JS:~base", "JS:^base", "JS:*base", made when asked */
	bool has_script;
	bool not_function; /* the slot's object is none: kept by its map */
};

struct kp_v8 {
	struct kp_v8meta m;
	struct kp_v8_mem mem;
	struct kp_u64map index;	      /* function address -> entry index + 1 */
	struct kp_u64map by_sfi;      /* shared info address -> entry index + 1 */
	struct kp_u64map fn_maps;     /* maps of functions named so far */
	struct kp_u64map block_index; /* block context -> blocks index + 1 */
	struct block {
		uint64_t outer;	  /* the function's context it was found inside */
		uint64_t checked; /* when: a read made after it */
	} * blocks;
	size_t nblocks, blocks_cap;
	struct entry *e;
	size_t n, cap;
	unsigned budget;     /* reads left this sample */
	size_t bytes_budget; /* bytes left this sample */
	struct kp_v8_stats st;
	unsigned char chunk[CHUNK];  /* source read to count lines */
	struct kp_u64map code_index; /* optimized code address -> codes index + 1 */
	struct code *codes;
	size_t ncodes, codes_cap;
	size_t code_bytes;	     /* what the codes, their names and line ends hold */
	struct kp_u64map line_index; /* script address -> lines index + 1 */
	struct lines {
		uint64_t script, ends; /* the script and its line ends array */
		uint32_t n;
		int32_t *end; /* each line's end */
	} * lines;
	size_t nlines, lines_cap;
	/* the last call's inlined functions of each frame, outermost first */
	const char *const *inl[MAX_FRAMES];
	uint8_t ninl[MAX_FRAMES];
};

/* ---- bounded reads (inline: every read of both files takes them) ---- */

static inline bool kp_v8_rd(struct kp_v8 *v, uint64_t addr, void *buf, size_t len)
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

static inline bool kp_v8_is_obj(const struct kp_v8 *v, uint64_t w)
{
	return (w & (uint64_t)v->m.heap_tag_mask) == (uint64_t)v->m.heap_tag && w > 4096;
}

static inline bool kp_v8_is_smi(const struct kp_v8 *v, uint64_t w)
{
	return (w & (uint64_t)v->m.smi_tag_mask) == 0;
}

static inline int64_t kp_v8_smi(uint64_t w)
{
	return (int64_t)w >> 32; /* 31-bit shift over a 1-bit tag */
}

/* The tagged word at field off of object obj. */
static inline bool kp_v8_field(struct kp_v8 *v, uint64_t obj, int64_t off, uint64_t *out)
{
	return kp_v8_rd(v, obj - 1 + (uint64_t)off, out, 8);
}

/* The instance type of heap object obj, through its map. */
static inline bool kp_v8_type_of(struct kp_v8 *v, uint64_t obj, unsigned *type)
{
	uint64_t map;
	uint16_t t;

	if (!kp_v8_is_obj(v, obj) || !kp_v8_field(v, obj, v->m.obj_map, &map) ||
	    !kp_v8_is_obj(v, map) ||
	    !kp_v8_rd(v, map - 1 + (uint64_t)v->m.map_instance_type, &t, sizeof(t)))
		return false;
	*type = t;
	return true;
}

/* ---- v8_heap.c (see there for each) ---- */

extern const char kp_v8_heap_not_readable[], kp_v8_heap_not_function[];
uint32_t kp_v8_heap_script_line(struct kp_v8 *v, uint64_t script, int64_t pos);
const char *kp_v8_heap_sfi_describe(struct kp_v8 *v, uint64_t sfi, uint64_t nos, char *name,
				    char *script, uint64_t *scr, uint32_t *line);
const char *kp_v8_heap_function_read(struct kp_v8 *v, uint64_t fn, struct entry *e);

#endif
