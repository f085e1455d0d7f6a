/* kp_unwind: the user stack of one sample, from its registers and a copy
 * of the top of its stack, with libunwind over a remote address space
 * (after perf's tools/perf/util/unwind-libunwind-local.c):
 *
 *   registers   the sampled user registers (perf_regs.h order, x86-64)
 *   memory      the stack snapshot for [sp, sp + len), the unwind tables
 *               (.eh_frame_hdr, .eh_frame) of the objects behind the
 *               process's mappings, read page by page from the file
 *               the caller's object source (kp_unwind_objects) holds open
 *   tables      found for an address through the caller's mapping lookup
 *               (kp_unwind_map_fn), which names the mapping's object
 *
 * Where no unwind table covers a frame (JIT code, hand-written assembly),
 * the walk goes on along the frame-pointer chain inside the snapshot,
 * validated (it must stay in the snapshot, move up the stack and return
 * into code), and back to the tables as soon as a return address lands in
 * code that has them. Nothing of the snapshot is kept after the call.
 *
 * Every walk is bounded (max frames, each frame strictly above the last),
 * so bad input (garbage registers, a snapshot that ends mid-frame, tables
 * that loop or point outside the snapshot, a process that is gone) ends
 * it early, with the frames found so far and the reason.
 *
 * unwind/ knows nothing of the symbolizer and reads nothing of /proc:
 * objects are the caller's ids, their bytes come through
 * kp_unwind_objects and their mappings (procfs/mapping.h's, as the
 * process table keeps them) through kp_unwind_map_fn (profiler/ answers
 * both). Its files:
 * unwind.c these entry points, tables.c the unwind tables, cfi.c kprof's
 * own rows of them (the rules of a step, cached by object and address),
 * jitcfi.c JIT code's unwinding info as libdw's CFI,
 * remote.c libunwind's accessors, walk.c the CFI and frame-pointer
 * walkers, regs.h the perf register set (which the profiler asks the
 * kernel for). */
#ifndef KP_UNWIND_UNWIND_H
#define KP_UNWIND_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs/mapping.h"
#include "unwind/regs.h"

struct kp_unwinder;

/* Finds the executable mapping holding addr in the sampled process and
 * copies it to *out (procfs/mapping.h; the unwinder reads its start, end,
 * pgoff and obj: the caller's object id of kp_unwind_objects, 0 for no
 * file, JIT or anonymous code); false when none does (then addr is not
 * code). */
typedef bool (*kp_unwind_map_fn)(void *arg, uint64_t addr, struct kp_mapping *out);

struct kp_unwind_input {
	pid_t pid;	      /* whose address space (libunwind's caches are per process) */
	const uint64_t *regs; /* one per bit of regs_mask, in bit order */
	uint64_t regs_mask;
	const unsigned char *stack; /* the snapshot: stack[0] is at address sp */
	size_t stack_len;	    /* valid bytes */
	kp_unwind_map_fn find_map;
	void *map_arg;
	/* more(more_arg, addr, buf, len), which may be NULL, reads the live
	 * stack above the snapshot (bytes read, or -errno): a walk that
	 * reaches the snapshot's end goes on with it, every frame checked as
	 * before (the thread ran on since the sample: the caller allows it
	 * where the outer frames stay put, a JVM's deep stacks) */
	ssize_t (*more)(void *more_arg, uint64_t addr, void *buf, size_t len);
	void *more_arg;
};

/* Why a walk stopped. */
enum kp_unwind_end {
	KP_UNWIND_OUTERMOST = 0, /* the outermost frame (_start, clone): complete */
	KP_UNWIND_SNAPSHOT,	 /* the next frame lies beyond the stack snapshot */
	KP_UNWIND_DEPTH,	 /* max frames reached */
	KP_UNWIND_BAD_FRAME,	 /* garbage: a frame outside the stack, below the last one,
				  * or returning into memory that is not code */
	KP_UNWIND_NO_REGS,	 /* no usable registers (kernel thread, 32-bit process) */
	KP_UNWIND_NEND,
};

struct kp_unwind_result {
	size_t n;		/* frames written: ips[0] is the sampled ip */
	enum kp_unwind_end end; /* why it stopped */
	size_t fp_frames;	/* of the n, how many came from the frame-pointer chain */
	uint64_t last_sp;	/* the outermost frame's stack pointer */
	bool leaf_repaired;	/* kp_unwind_leaf: a return address was recovered */
};

/* JIT code whose unwinding info the caller holds (a jitdump's
 * JIT_CODE_UNWINDING_INFO): the code's range, a key no other code of the
 * run shares (its rows are kept by it), and the info as it lies in memory
 * behind the code: its .eh_frame, then its .eh_frame_hdr (may be empty).
 * The bytes need only live until the next call of the callback. */
struct kp_unwind_jit {
	uint64_t start, end;
	uint64_t key;
	const unsigned char *eh_frame, *hdr;
	size_t eh_frame_len, hdr_len;
};

/* A frame in anonymous code a language runtime may describe (HotSpot's
 * code cache: docs/java.md), as the walk holds it: its ip (exact: the
 * sampled one, else a return address), sp and bp (0: unknown), its
 * index in the walk's ips, and the address of the snapshot's first byte
 * (in->stack[0]). */
struct kp_unwind_rtframe {
	uint64_t ip, sp, bp;
	bool exact;
	size_t depth;
	uint64_t stack_start;
};

/* What a runtime's step found (kp_unwind_objects.runtime). */
enum kp_unwind_rtstep {
	KP_UNWIND_RT_NONE = 0, /* not the runtime's code, or a frame the frame
				* pointer steps: the walk goes on by it */
	KP_UNWIND_RT_STEP,     /* the caller's frame is in *caller */
	KP_UNWIND_RT_BAD,      /* the runtime's code, but what it holds does not
				* check out: the walk ends (KP_UNWIND_BAD_FRAME) */
	KP_UNWIND_RT_BEYOND,   /* the frame's words lie past the snapshot */
};

/* Where the bytes of an object come from: fd(arg, obj) returns a file
 * descriptor open on object obj (the id find_map gave), or -1 when it has
 * none (any more). The unwinder reads its unwind tables from it with
 * pread, page by page as walks need them, and never closes it.
 * jit(arg, pid, addr, out), which may be NULL, is asked about an address
 * in anonymous code (a mapping of object 0): true and *out when the
 * caller has unwinding info for the JIT code there, which the walk then
 * steps by as by an object's tables. */
struct kp_unwind_objects {
	int (*fd)(void *arg, uint32_t obj);
	void *arg;
	bool (*jit)(void *arg, pid_t pid, uint64_t addr, struct kp_unwind_jit *out);
	/* code(arg, pid, addr, buf, len), which may be NULL, reads up to len
	 * bytes of the process's memory at addr (bytes read, or -errno): the
	 * unwinder reads a few bytes of anonymous code with it, to know
	 * CPython's perf trampolines (docs/unwinding.md) */
	ssize_t (*code)(void *arg, pid_t pid, uint64_t addr, void *buf, size_t len);
	/* runtime(rt_arg, in, f, caller), which may be NULL, is asked about
	 * every frame in anonymous code that no unwinding info covers, before
	 * the frame-pointer chain steps it: a runtime that knows the code
	 * (HotSpot's compiled frames keep no frame pointer) steps it from the
	 * snapshot in in (in->stack), and may note what the frame is (its
	 * name) by f->depth for the caller to read after the walk */
	enum kp_unwind_rtstep (*runtime)(void *rt_arg, const struct kp_unwind_input *in,
					 const struct kp_unwind_rtframe *f,
					 struct kp_unwind_rtframe *caller);
	void *rt_arg;
};

/* A new unwinder that reads objects through objs (copied; arg is borrowed
 * and must outlive the unwinder). */
struct kp_unwinder *kp_unwind_new(const struct kp_unwind_objects *objs);
void kp_unwind_free(struct kp_unwinder *u);

/* Unwinds the sample's user stack into ips[0..max) (leaf first: ips[0] is
 * the sampled ip, the others return addresses). Returns 0, or -EINVAL when
 * the input has no ip/sp (res->end then says why). */
int kp_unwind_stack(struct kp_unwinder *u, const struct kp_unwind_input *in, uint64_t *ips,
		    size_t max, struct kp_unwind_result *res);

/* Leaf repair for a frame-pointer chain: when the sampled ip's CFI says its
 * function has not set up a frame (a frameless leaf, a prologue, an
 * epilogue), the frame-pointer chain [ip, fp_ret, ...] skips the caller.
 * Returns the caller's return address to insert before fp_ret, or 0 when
 * nothing is missing or nothing can be said. */
uint64_t kp_unwind_leaf(struct kp_unwinder *u, const struct kp_unwind_input *in, uint64_t fp_ret);

/* Every CFI step by libunwind, none by kprof's rows (which still say
 * which frames are signal frames): the reference the tests hold kprof's
 * own steps to, and the cost they had (KP_UNWIND_BENCH). */
void kp_unwind_set_libunwind_only(struct kp_unwinder *u, bool on);

/* The process's code changed (a new mapping, exec) or it exited: forget
 * what libunwind cached for its addresses (kprof's rows are kept by
 * object, not address, and stay right). */
void kp_unwind_flush(struct kp_unwinder *u, pid_t pid);
void kp_unwind_forget(struct kp_unwinder *u, pid_t pid);

/* Objects objs[0..n) are no longer the caller's (a continuous recording
 * released them between windows): their tables and whatever was cached
 * from them go; a later unwind through one reads them again. */
void kp_unwind_drop_objects(struct kp_unwinder *u, const uint32_t *objs, size_t n);

struct kp_unwind_stats {
	uint64_t objects;	   /* objects whose tables were read */
	uint64_t objects_no_table; /* of those, without .eh_frame_hdr */
	uint64_t table_bytes;	   /* bytes of tables held */
	uint64_t steps_kprof;	   /* CFI steps taken by kprof's rows */
	uint64_t steps_libunwind;  /* CFI steps left to libunwind */
	uint64_t rows;		   /* rows kprof read (cache misses) */
	uint64_t jit_codes;	   /* JIT codes whose unwinding info was read */
};
void kp_unwind_stats(const struct kp_unwinder *u, struct kp_unwind_stats *st);

#endif
