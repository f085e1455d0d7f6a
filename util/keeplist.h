/* kp_keeplist: the last K files a long run wrote (kprof --every --keep K),
 * so that older ones are removed, and only those.
 *
 * A window's name comes from a strftime pattern and may repeat, back to
 * back or not (w-%S.folded: every minute); the list holds the distinct
 * names this process wrote, most recent last, and a name written again
 * moves to the end. Beyond K names the oldest goes: its file is removed
 * relative to its folder's descriptor, kept open since it was written
 * (outfile.c's way: the folders above cannot be swapped meanwhile), and
 * only when what is under the name is still the file this process wrote
 * (same device and inode, a regular file): a file another user or program
 * put there since is left alone. docs/security.md, "The spool and window
 * files". */
#ifndef KP_UTIL_KEEPLIST_H
#define KP_UTIL_KEEPLIST_H

#include <stddef.h>

#include "util/diag.h"

struct kp_keeplist;

/* A list keeping the last keep names (0: every name, nothing removed). */
struct kp_keeplist *kp_keeplist_new(size_t keep);
/* Closes the folders' descriptors and frees; the files stay. NULL is fine. */
void kp_keeplist_free(struct kp_keeplist *k);

/* Notes that base, in the folder dirfd (not taken: the list keeps its own
 * descriptor of the folder), was just written; path is its name for
 * messages. The oldest names beyond the bound are then removed. Returns
 * the number of files removed, or a negative errno with the first failure
 * in d (the rest is done all the same: a file that cannot be removed is
 * let go, not retried). */
int kp_keeplist_add(struct kp_keeplist *k, int dirfd, const char *base, const char *path,
		    struct kp_diag *d);

/* The names held, oldest first (for tests): the i-th's message name, or
 * NULL past the end. Owned by k. */
const char *kp_keeplist_at(const struct kp_keeplist *k, size_t i);

#endif
