/* kp_strtab: string interning. Each distinct string is stored once in an
 * arena and named by a dense uint32 id (0 is never used, so it can mean
 * "none"). Strings live until kp_strtab_free. */
#ifndef KP_UTIL_STRTAB_H
#define KP_UTIL_STRTAB_H

#include <stddef.h>
#include <stdint.h>

struct kp_strtab;

struct kp_strtab *kp_strtab_new(void);
void kp_strtab_free(struct kp_strtab *st);

/* Returns the id of s[0..len) (need not be NUL-terminated), adding it if new. */
uint32_t kp_strtab_intern(struct kp_strtab *st, const char *s, size_t len);
/* Returns the id of s, or 0 if s was never interned. */
uint32_t kp_strtab_find(const struct kp_strtab *st, const char *s, size_t len);
/* The string for id; owned by the table, valid until kp_strtab_free. */
const char *kp_strtab_str(const struct kp_strtab *st, uint32_t id);
size_t kp_strtab_len(const struct kp_strtab *st, uint32_t id);
/* Number of distinct strings (ids run 1..count). */
uint32_t kp_strtab_count(const struct kp_strtab *st);

#endif
