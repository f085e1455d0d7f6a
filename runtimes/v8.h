/* kp_v8: JavaScript frames named from a live V8 heap, through the
 * postmortem metadata of the process's own node (v8meta.h).
 *
 * A JavaScript frame of V8 (interpreted, Sparkplug, Maglev, TurboFan)
 * keeps its function at fp + v8dbg_off_fp_function, and a tagged context
 * at fp + v8dbg_off_fp_context where V8's other frames keep a frame-type
 * marker (an untagged even number). The function's SharedFunctionInfo
 * gives the name (a String, or its ScopeInfo's function name) and the
 * Script, whose name and line ends give the file and the line of the
 * function's start; in optimized code, the code's source positions give
 * the line of the sampled instruction and its deoptimization data the
 * functions inlined there (kp_v8_inlined). Every object read is checked: its map's instance
 * type, each string's length and representation, every index against
 * the array it indexes; what does not check out names the frame
 * "[unknown: v8: REASON]", never another function. The heap moves while
 * V8 collects garbage, so a cached name is kept by the function's
 * address and taken again only while that function still has the same
 * map, SharedFunctionInfo and context, as read after the sample was taken
 * (one read of a few words for all frames of a sample, or none when an
 * earlier sample's read was made after this one was taken), and only for
 * a frame whose context is the function's (or a block's inside it).
 *
 * Reads go through the caller's callbacks (process_vm_readv on a live
 * process, bytes captured from one in the tests), each bounded in length
 * and their number bounded a sample, so a crafted process costs kprof a
 * bounded time and memory. */
#ifndef KP_RUNTIMES_V8_H
#define KP_RUNTIMES_V8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "runtimes/v8meta.h"

/* Where the process's memory comes from: read(arg, addr, buf, len) reads
 * len bytes at addr, true when all were read. readv, which may be NULL,
 * reads n ranges of len bytes each (addrs[i] into bufs + i * len) at
 * once; it returns how many ranges, from the first, were read whole. */
struct kp_v8_mem {
	bool (*read)(void *arg, uint64_t addr, void *buf, size_t len);
	size_t (*readv)(void *arg, const uint64_t *addrs, size_t len, void *bufs, size_t n);
	void *arg;
};

/* What code a sampled frame runs, as the caller knows from the
 * process's mappings. */
enum kp_v8_code {
	KP_V8_NOT_JS = 0, /* other code: never holds a JavaScript frame */
	KP_V8_BUILTIN,	  /* V8's embedded builtins (in node's file): the
			   * interpreter, and builtins with frames of their own */
	KP_V8_JIT,	  /* anonymous executable memory: compiled JavaScript */
};

/* One sample's user stack: the sampled frame pointer and stack pointer,
 * the copy of the stack from sp (may be NULL), and the frames, leaf
 * first (ips[0] the sampled ip, the others return addresses) with what
 * code each runs. time is when the sample was taken and now when naming
 * it starts (every read of it is made after now), in ns of one clock
 * (CLOCK_MONOTONIC); 0 when not known: then every check is read anew. */
struct kp_v8_stack {
	uint64_t sp, fp;
	const unsigned char *stack;
	size_t stack_len;
	const uint64_t *ips;
	const uint8_t *code; /* enum kp_v8_code, one a frame */
	size_t n;
	uint64_t time, now;
};

struct kp_v8;

/* A reader of one process's heap (m and mem copied; mem->arg borrowed). */
struct kp_v8 *kp_v8_new(const struct kp_v8meta *m, const struct kp_v8_mem *mem);
void kp_v8_free(struct kp_v8 *v);

/* Names the JavaScript frames of st: names[i] is the name of frame i
 * ("JS:*name script:line" as V8's jitdumps name code, '~' interpreted,
 * '^' Sparkplug, '*' optimized; or "[unknown: v8: REASON]"), or NULL
 * where the frame is not JavaScript or keeps the name its code has (a
 * builtin running a function without a script: Array.prototype.forEach
 * stays Builtins_ArrayForEach). The strings are the reader's, valid until
 * the next call. */
void kp_v8_name_frames(struct kp_v8 *v, const struct kp_v8_stack *st, const char **names);
/* The functions TurboFan (or Maglev) inlined into frame i of the last
 * kp_v8_name_frames, read from the code's deoptimization data and source
 * positions: *n of them, the outermost first (frame i's own function is
 * names[i], named there with the line of the sampled instruction); NULL
 * with *n 0 for none. Owned by the reader, valid until the next call. */
const char *const *kp_v8_inlined(const struct kp_v8 *v, size_t i, size_t *n);
/* names[i] == kp_v8_drop: frame i is no frame (a stale return address the
 * walk took for the caller of a JIT leaf whose frame was set up, as the
 * leaf's function slot shows): leave it out. */
extern const char kp_v8_drop[];

struct kp_v8_stats {
	uint64_t frames;     /* JavaScript frames named (or told unknown) */
	uint64_t hits;	     /* of those, named from the cache */
	uint64_t shared;     /* of those, checked by a read made for an earlier
			      * sample but after this one was taken: no read */
	uint64_t unknown;    /* told unknown */
	uint64_t reads;	     /* reads of the process's memory */
	uint64_t read_fails; /* reads that failed */
	uint64_t cached;     /* functions cached now */
};
void kp_v8_stats(const struct kp_v8 *v, struct kp_v8_stats *st);

#endif
