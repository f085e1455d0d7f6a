/* kp_stacktab: the record-time aggregator. Each distinct location gets a
 * dense id (so it is symbolized once at the end) and each distinct location
 * stack, with its root (comm, and pid/tid when asked), a count. Memory grows
 * with distinct stacks and locations, never with samples. */
#ifndef KP_PROFILER_STACKTAB_H
#define KP_PROFILER_STACKTAB_H

#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"

struct kp_stacktab;

/* The root of a stack: interned comm (the caller's string table) and the
 * pid/tid shown with --pid/--tid (0 when not shown). */
struct kp_stack_root {
	uint32_t comm;
	uint32_t pid, tid;
};

struct kp_stacktab *kp_stacktab_new(void);
void kp_stacktab_free(struct kp_stacktab *t);

/* Returns the dense id (0..) of a location, adding it if new. */
uint32_t kp_stacktab_loc(struct kp_stacktab *t, const struct kp_loc *loc);
/* Adds count to the stack locs[0..n) (location ids, root first). */
void kp_stacktab_add(struct kp_stacktab *t, const struct kp_stack_root *root, const uint32_t *locs,
		     size_t n, uint64_t count);

size_t kp_stacktab_nlocs(const struct kp_stacktab *t);
const struct kp_loc *kp_stacktab_loc_at(const struct kp_stacktab *t, uint32_t id);
size_t kp_stacktab_nstacks(const struct kp_stacktab *t);
/* Stack i: its root, location ids (root first; valid until the next add)
 * and count. */
const uint32_t *kp_stacktab_stack(const struct kp_stacktab *t, size_t i, struct kp_stack_root *root,
				  size_t *n, uint64_t *count);
/* Total count over all stacks. */
uint64_t kp_stacktab_total(const struct kp_stacktab *t);

#endif
