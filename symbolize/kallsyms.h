/* kp_kallsyms: the kernel's symbol table from /proc/kallsyms (modules
 * included), sorted once for binary search. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_KALLSYMS_H
#define KP_SYMBOLIZE_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/diag.h"

struct kp_kallsyms;

/* Reads and sorts path (e.g. /proc/kallsyms), streamed through one reused
 * buffer. Malformed lines (also lines of KP_KALLSYMS_READ_SIZE bytes or
 * more) are skipped and counted. Returns 0 and a new table in *out (caller
 * frees with kp_kallsyms_free), or a negative errno with d set. */
int kp_kallsyms_load(const char *path, struct kp_kallsyms **out, struct kp_diag *d);
/* The same for lookups of addrs[0..n) only: one pass over the file keeps
 * just the symbols those lookups read (no full index, no big sort, no copy
 * of every name), which is most of the cost of a full load. Lookups of other addresses are
 * meaningless: check kp_kallsyms_covers first. */
int kp_kallsyms_load_for(const char *path, const uint64_t *addrs, size_t n,
			 struct kp_kallsyms **out, struct kp_diag *d);
/* Knobs; a zero field takes the default. */
struct kp_kallsyms_opts {
	size_t read_size; /* bytes per read(2); longer lines are malformed */
	bool from_fd;	  /* read fd (not closed) instead of opening path */
	int fd;
	/* may be NULL: given every byte read, in order (to write a copy of
	 * the file, or to checksum the copy being read) */
	void (*tap)(void *arg, const char *buf, size_t n);
	void *tap_arg;
};
/* kp_kallsyms_load (addrs NULL) or kp_kallsyms_load_for (addrs given) with
 * opts (may be NULL). */
int kp_kallsyms_load_opts(const char *path, const uint64_t *addrs, size_t n,
			  const struct kp_kallsyms_opts *opts, struct kp_kallsyms **out,
			  struct kp_diag *d);
/* Can ks answer a lookup of addr? (Always, for a full table.) */
bool kp_kallsyms_covers(const struct kp_kallsyms *ks, uint64_t addr);
void kp_kallsyms_free(struct kp_kallsyms *ks);

/* True when every address read was zero (kptr_restrict hides them). */
bool kp_kallsyms_restricted(const struct kp_kallsyms *ks);
/* Is addr in the core kernel's text, [_stext, _etext), or its init text,
 * [_sinittext, _einittext) (freed after boot, but start_kernel stays on
 * the idle task's stack)? Known whether or not those symbols were kept;
 * false when the file did not name them. */
bool kp_kallsyms_in_core_text(const struct kp_kallsyms *ks, uint64_t addr);
/* Number of symbols kept, and lines skipped as malformed. */
size_t kp_kallsyms_count(const struct kp_kallsyms *ks);
uint64_t kp_kallsyms_bad_lines(const struct kp_kallsyms *ks);

/* Name of the text symbol containing addr, or NULL when addr falls in a
 * gap, in a data symbol, below the first or beyond the last symbol.
 * *module (may be NULL) receives the module name or NULL for the core
 * kernel. Strings are owned by the table. */
const char *kp_kallsyms_lookup(const struct kp_kallsyms *ks, uint64_t addr, const char **module);

/* How far a symbol may reach when the next symbol belongs to another module
 * or there is no next symbol: kallsyms gives no sizes. */
#define KP_KALLSYMS_MAX_REACH (256 * 1024)

/* The default read buffer: the file is streamed, never held whole. procfs
 * returns at most a page per read(2) anyway; 64 KiB serves regular files
 * in few reads and stays below malloc's mmap threshold, so it reuses heap
 * pages instead of faulting in fresh ones (measured best of 8 KiB-1 MiB). */
#define KP_KALLSYMS_READ_SIZE (64 * 1024)

#endif
