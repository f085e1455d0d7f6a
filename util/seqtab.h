/* kp_seqtab: interning of uint32 sequences. Each distinct sequence gets a
 * dense index (0, 1, ...) and its words live once in one arena. This is the
 * table behind every "stack -> count" map in kprof: location stacks while
 * recording (profile/profile.c) and frame-id stacks of the folded table
 * (profile/folded.c); callers keep their counts in arrays parallel to
 * the indexes. */
#ifndef KP_UTIL_SEQTAB_H
#define KP_UTIL_SEQTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_seqtab_entry {
	size_t off;    /* first word in words */
	uint32_t n;    /* number of words */
	uint32_t hash; /* of the words */
};

/* The hash beside the index, so a probe past another sequence does not
 * touch that sequence's entry (a cache miss per probe in a big table). */
struct kp_seqtab_slot {
	uint32_t id;   /* sequence index + 1, or 0 when free */
	uint32_t hash; /* its hash */
};

struct kp_seqtab {
	uint32_t *words;
	size_t nwords, words_cap;
	struct kp_seqtab_entry *seqs;
	size_t nseqs, seqs_cap;
	struct kp_seqtab_slot *slots;
	size_t nslots;
};

void kp_seqtab_init(struct kp_seqtab *t);
void kp_seqtab_fini(struct kp_seqtab *t);

/* The index of w[0..n), added if new (then *added is set, if given). */
size_t kp_seqtab_intern(struct kp_seqtab *t, const uint32_t *w, size_t n, bool *added);
/* Adds w[0..n) as a new index without looking for an equal sequence (for
 * time-ordered tables such as flame charts); such entries are never found
 * by kp_seqtab_intern. */
size_t kp_seqtab_append(struct kp_seqtab *t, const uint32_t *w, size_t n);
/* Is sequence i equal to w[0..n)? */
bool kp_seqtab_equal(const struct kp_seqtab *t, size_t i, const uint32_t *w, size_t n);

/* Sequence i's words (valid until the next add) and length. */
static inline const uint32_t *kp_seqtab_words(const struct kp_seqtab *t, size_t i, size_t *n)
{
	*n = t->seqs[i].n;
	return t->words + t->seqs[i].off;
}

static inline size_t kp_seqtab_count(const struct kp_seqtab *t)
{
	return t->nseqs;
}

#endif
