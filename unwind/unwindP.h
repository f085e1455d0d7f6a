/* What the files of unwind/ share, and no one else (libdwfl's libdwflP.h):
 *
 *   struct kp_tables   the unwind tables of the objects seen, read from the
 *                      caller's object files page by page (tables.c)
 *   struct aspace      one process's libunwind address spaces (remote.c)
 *   struct kp_cfi      the CFI rows kprof steps by itself, computed by
 *                      libdw from the same tables and cached by object
 *                      and address (cfi.c)
 *   struct uctx        one unwind's state, which libunwind hands to the
 *                      accessors over the stack copy (remote.c) and the
 *                      walkers read (walk.c)
 *   struct kp_unwinder the four together (unwind.c: the entry points). */
#ifndef KP_UNWIND_UNWINDP_H
#define KP_UNWIND_UNWINDP_H

#include <elfutils/libdw.h>
#include <libelf.h>
#include <libunwind.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/unwind.h"
#include "util/u64map.h"

/* Load segments kept of an object. */
#define MAX_LOADS 16
/* Objects an address space's unwinds have used (each with its load bias). */
#define MAX_TOUCHED 64
/* A frame pointer or CFA this far above the stack pointer is not "the
 * snapshot was too small" but garbage. */
#define MAX_STACK_SPAN ((uint64_t)64 << 20)
/* No stack lies below this (Linux keeps the first 64 KiB unmapped,
 * vm.mmap_min_addr): a CFA there is garbage. libunwind would read a
 * register saved at address 0 as undefined (its null location) and end
 * the walk as complete; both walkers call it a bad frame instead. */
#define MIN_STACK_ADDR ((uint64_t)64 << 10)

/* ---- unwind tables (tables.c) ---- */

struct load_seg {
	uint64_t off, filesz, vaddr, memsz;
};

/* Table bytes [lo, hi) of an object, read a page (tables.c's TPAGE) at a
 * time on first use. */
struct trange {
	uint64_t lo, hi; /* vaddr extent */
	uint64_t off;	 /* file offset of lo */
	unsigned char **pages;
};

/* What is kept of one object: its load segments (to turn a mapping into a
 * load bias) and the pages of its unwind tables read so far. */
struct utab {
	uint32_t obj; /* the caller's object id: whose file the pages come from */
	bool ok;      /* has a usable .eh_frame_hdr search table */
	struct load_seg segs[MAX_LOADS];
	size_t nsegs;
	uint64_t hdr_vaddr, table_vaddr, fde_count;
	uint64_t img_lo, img_hi; /* the image's vaddr extent */
	/* by vaddr: .eh_frame_hdr, and .eh_frame to the end of its segment's
	 * file bytes (one range when they are adjacent) */
	struct trange r[2];
	size_t nr;
	uint64_t bytes; /* of the table bytes held (kp_unwind_stats' table_bytes) */
	/* libdw's view of its CFI for kprof's rows (cfi.c), opened on the
	 * first row asked of it; ended with the tables */
	bool cfi_tried;
	Elf *elf;
	Dwarf_CFI *cfi;
	/* JIT code (jitcfi.c): obj is a number of the unwinder's own, its
	 * CFI made from the bytes image holds (an ELF file in memory) */
	bool jit;
	unsigned char *image;
};

/* Ends t's libdw CFI and its Elf (the part of freeing every table shares). */
static inline void kp_utab_end_cfi(struct utab *t)
{
	if (t->cfi)
		dwarf_cfi_end(t->cfi);
	if (t->elf)
		elf_end(t->elf);
	t->cfi = NULL;
	t->elf = NULL;
}

/* The tables of every object seen, by the caller's object id. */
struct kp_tables {
	struct kp_unwind_objects objs; /* the caller's object files */
	struct kp_u64map tabs;	       /* object id -> struct utab * */
	struct kp_unwind_stats st;
	struct kp_u64map jits; /* the caller's JIT code key -> struct utab * */
	uint32_t jit_seq;      /* JIT tables made: their obj is KP_JITCFI_OBJ + it */
};

void kp_tables_init(struct kp_tables *tb, const struct kp_unwind_objects *objs);
void kp_tables_fini(struct kp_tables *tb);
/* The tables of object obj, read on first use (owned by tb). NULL for
 * obj 0; !ok when the object has no usable search table. */
struct utab *kp_tables_get(struct kp_tables *tb, uint32_t obj);
/* Frees object obj's tables (kp_unwind_drop_objects). */
void kp_tables_drop(struct kp_tables *tb, uint32_t obj);
/* The load bias of the object mapped as m (address = vaddr + bias). */
bool kp_tables_bias(const struct utab *t, const struct kp_mapping *m, uint64_t *bias);
/* Reads up to 8 bytes at vaddr va of range r of t into *valp (zeros past
 * its end): 1 done, 0 not in r, -1 unreadable. */
int kp_tables_word(struct kp_tables *tb, struct utab *t, struct trange *r, uint64_t va,
		   uint64_t *valp);

/* ---- JIT code's unwinding info (jitcfi.c) ---- */

/* JIT tables' object numbers start here: the caller's ids lie below. */
#define KP_JITCFI_OBJ (1u << 23)

/* The table of the JIT code ji describes, made on first use (owned by
 * tb): its CFI is libdw's over an ELF image in memory holding ji's
 * .eh_frame at the address it has behind the code, the code at 0 (so an
 * address's va is its offset in the code). NULL when libdw reads
 * nothing of it. */
struct utab *kp_jitcfi_get(struct kp_tables *tb, const struct kp_unwind_jit *ji);
/* Frees a JIT table (tables.c frees them all with its own). */
void kp_jitcfi_free(struct utab *t);

/* ---- kprof's own CFI rows (cfi.c) ---- */

/* Registers of a row: DWARF's x86-64 numbers, which are libunwind's
 * (UNW_X86_64_RAX .. R15, and the return address column, RIP). */
#define CFI_NREGS 17

enum kp_cfi_kind {
	KP_CFI_NOINFO,	  /* no FDE covers the address: the frame-pointer chain */
	KP_CFI_STEP,	  /* kprof steps by the row */
	KP_CFI_LIBUNWIND, /* rules a row does not hold (expressions, a register
			   * in another, val_offset, a signal frame) or that
			   * libdw cannot give (a damaged table): libunwind
			   * steps */
};

enum kp_cfi_rule {
	KP_CFI_SAME,  /* the callee's value */
	KP_CFI_UNDEF, /* lost (the return address: the outermost frame) */
	KP_CFI_SAVED, /* at CFA + off */
};

/* The rules in force at one address of an object, for one step. */
struct kp_cfi_row {
	uint8_t kind;		 /* enum kp_cfi_kind */
	bool signal;		 /* its CIE's 'S': a signal frame, whose caller's ip is
				  * exact (not a return address) */
	uint8_t cfa_reg;	 /* CFA = cfa_reg + cfa_off */
	uint8_t rule[CFI_NREGS]; /* enum kp_cfi_rule */
	uint16_t changed;	 /* bit per register but sp whose rule is
				  * not KP_CFI_SAME (rax .. r15) */
	int32_t cfa_off;
	int16_t off[CFI_NREGS];
};

/* The rows found so far, by (object, address in the object): a row
 * depends only on the object's bytes, so every process that maps the
 * object shares it, and new code mapped where other code was is another
 * object, with rows of its own (libunwind's cache, by address, is what
 * kp_unwind_flush empties). */
struct kp_cfi {
	struct kp_u64map idx; /* object << 40 | address -> index in rows */
	struct kp_cfi_row *rows;
	size_t n, cap;
	uint64_t hits, misses;
};

void kp_cfi_init(struct kp_cfi *cf);
void kp_cfi_fini(struct kp_cfi *cf);
/* The row in force at vaddr va of object t (whose tables are ok), as
 * libdw reads it from the object's .eh_frame_hdr and .eh_frame on first
 * use (owned by cf, valid until the next call). */
const struct kp_cfi_row *kp_cfi_row(struct kp_cfi *cf, struct kp_tables *tb, struct utab *t,
				    uint64_t va);

/* ---- libunwind over the stack copy (remote.c) ---- */

struct touched {
	struct utab *t;
	uint64_t bias;
};

/* One process's libunwind address spaces, for the steps kprof's rows
 * leave to libunwind, and the objects whose tables its unwinds have read:
 * libunwind's cache keeps rules by ip, and a cached rule may still read
 * its CFA expression from the object's .eh_frame in a later unwind that
 * never asked for the object's table.
 *
 * The cache's key is the ip alone, but a return address is looked up at
 * its byte - 1 (the call) and an exact ip (the sampled one, or one after a
 * signal frame) at itself: where a call's return address starts a new CFI
 * row (after a noreturn call, before a .cfi_restore_state block), one key
 * stands for two sets of rules, and a walk would take whichever an earlier
 * sample cached. So the steps from an exact ip cache in an address space
 * of their own (leaf); those from a return address in as, given to
 * libunwind as the exact ip - 1. */
struct aspace {
	unw_addr_space_t as;
	unw_addr_space_t leaf;
	struct touched t[MAX_TOUCHED];
	size_t nt;
};

/* One unwind's state: libunwind hands it to every accessor as arg. */
struct uctx {
	struct kp_unwinder *u;
	const struct kp_unwind_input *in;
	/* registers by libunwind's numbering (UNW_X86_64_RAX .. RIP) */
	uint64_t regs[17];
	uint32_t have;	      /* bit per register known */
	uint32_t lost;	      /* of those unknown, bit per register whose
			       * saved value lies above the snapshot */
	uint64_t sp0;	      /* address of stack[0] */
	struct aspace *space; /* the process's address space */
	bool noinfo;	      /* the step's find_proc_info found no table */
	bool in_search;	      /* inside find_proc_info's table search */
	bool beyond;	      /* a read fell above the snapshot (it was too small) */
	/* the mapping the last lookup found, its object's tables (NULL: none)
	 * and load bias (biased: known): a walk stays in a few mappings */
	struct kp_mapping map;
	struct utab *map_t;
	uint64_t map_bias;
	bool mapped, biased;
	/* the table range the last read outside the copy found (libunwind's
	 * table search and FDE parsing read word after word from one range) */
	struct utab *hit_t;
	struct trange *hit_r;
	uint64_t hit_bias;
};

/* The unwinder (unwind.h): the objects' tables, kprof's rows,
 * libunwind's accessors and each process's address spaces. */
struct kp_unwinder {
	struct kp_tables tables;
	struct kp_cfi cfi;
	bool libunwind_only; /* kp_unwind_set_libunwind_only */
	unw_accessors_t acc;
	struct kp_u64map spaces;       /* pid -> struct aspace * */
	struct kp_u64map pytramp;      /* address -> what pytramp.c read there */
	struct kp_u64map pytramp_pids; /* pid -> 1: processes read into pytramp */
};

/* libunwind's accessors: memory from the stack copy and the objects'
 * tables, registers from the sample. */
void kp_remote_accessors(unw_accessors_t *acc);
/* The process's address spaces, made on first use; NULL when libunwind
 * cannot make one. */
struct aspace *kp_remote_space_get(struct kp_unwinder *u, pid_t pid);
/* Forgets the rules cached in a's address spaces and the objects they read. */
void kp_remote_space_flush(struct aspace *a);
void kp_remote_space_free(struct aspace *a);
/* Sets up c with the sample's registers; false without ip and sp. */
bool kp_remote_ctx_init(struct uctx *c, struct kp_unwinder *u, const struct kp_unwind_input *in);

/* ---- the walkers (walk.c) ---- */

/* Where a frame-pointer segment stopped. */
enum fp_stop {
	FP_END,	    /* the walk is over: end says why */
	FP_REENTER, /* a return address with tables: continue with CFI from regs */
	FP_RUNTIME, /* a return address into anonymous code a runtime may know:
		     * continue with kp_walk_runtime from (ip, sp, bp) */
};

struct walk {
	uint64_t *ips;
	size_t n, max;
	enum kp_unwind_end end;
	size_t fp_frames;
	uint64_t sp;
};

enum dw_stop {
	DW_END, /* the walk is over: end says why */
	DW_FP,	/* no table: go on with the frame-pointer chain */
};

/* CPython's perf trampolines (pytramp.c): the CFA offset from sp at addr
 * when the code there is one (0: none), and whether addr is its call's
 * return address; the row a step from ip takes there (false: none); the
 * cache of what was read, emptied when pid's code was read into it. */
int kp_pytramp_at(struct kp_unwinder *u, pid_t pid, uint64_t addr, bool *after_call);
bool kp_pytramp_row(struct kp_unwinder *u, pid_t pid, uint64_t ip, bool exact,
		    struct kp_cfi_row *row);
void kp_pytramp_clear(struct kp_unwinder *u, pid_t pid); /* 0: whatever was read */

/* The runtime's segment (kp_unwind_objects.runtime) from the frame
 * (ip, sp, bp) on, each frame checked as the other walkers check theirs:
 * FP_REENTER at a return address with tables, FP_RUNTIME when the runtime
 * does not know a frame (the frame-pointer chain steps it), FP_END when
 * the walk is over. */
enum fp_stop kp_walk_runtime(struct uctx *c, struct walk *w, uint64_t *ip, uint64_t *sp,
			     uint64_t *bp);

/* What one CFI step found. */
enum step {
	STEP_NEXT,	/* c holds the caller's registers */
	STEP_OUTERMOST, /* the CFI marks the end of the stack */
	STEP_FAIL,	/* a bad frame (c->beyond: a read fell above the snapshot) */
	STEP_NOINFO,	/* no FDE covers the frame */
};

/* A word of the stack: the snapshot's, or above it the live stack's
 * (kp_unwind_input.more, within MAX_STACK_SPAN of sp). */
bool kp_walk_stack_word(const struct uctx *c, uint64_t addr, uint64_t *v);

/* Is addr code, and does an unwind table cover its object? */
bool kp_walk_is_code(struct uctx *c, uint64_t addr, bool *has_table);
enum fp_stop kp_walk_fp(struct uctx *c, struct walk *w, bool leaf, uint64_t *ip, uint64_t *sp,
			uint64_t *bp);
/* One CFI step from the frame in c (c->regs, c->have): by its row, or
 * by libunwind where the row says so (or always, libunwind_only). *exact:
 * the frame's ip is exact (the sampled one), not a return address; on
 * return, whether the caller's is (it is after a signal frame). */
enum step kp_walk_step(struct uctx *c, bool *exact);
/* The CFI segment from the frame in c on (its ip exact or not, as for
 * kp_walk_step), each frame checked. On DW_FP the frame-pointer chain goes
 * on from (*ip, *sp, *bp). */
enum dw_stop kp_walk_cfi(struct uctx *c, struct walk *w, uint64_t *ip, uint64_t *sp, uint64_t *bp,
			 bool exact);

#endif
