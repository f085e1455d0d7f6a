/* kp_perfmap: a JIT's perf map ("START SIZE name" per line, hex with or
 * without 0x) turned into sorted, non-overlapping ranges where a later line
 * wins over an earlier one covering the same address. Internal to
 * symbolize/. */
#ifndef KP_SYMBOLIZE_PERFMAP_H
#define KP_SYMBOLIZE_PERFMAP_H

#include <stddef.h>
#include <stdint.h>

struct kp_strtab;

struct kp_perfmap_range {
	uint64_t start, end; /* [start, end) */
	uint32_t name;	     /* id in the map's strtab */
};

struct kp_perfmap {
	struct kp_perfmap_range *ranges; /* sorted by start, disjoint */
	size_t n;
	struct kp_strtab *names;
	uint64_t bad_lines; /* malformed lines skipped */
	uint64_t entries;   /* well-formed lines with a non-zero size */
};

/* Longest name kept; longer names are cut and end in "...". */
#define KP_PERFMAP_NAME_MAX 4096

/* Replaces pm's contents with the map parsed from buf[0..len). Never fails:
 * bad lines are skipped and counted in pm->bad_lines. */
void kp_perfmap_parse(struct kp_perfmap *pm, const char *buf, size_t len);
/* Frees what pm holds and zeroes it (a zeroed pm is an empty map). */
void kp_perfmap_fini(struct kp_perfmap *pm);
/* The name covering addr, or NULL. Owned by pm until the next parse/fini. */
const char *kp_perfmap_lookup(const struct kp_perfmap *pm, uint64_t addr);

/* Copies name[0..len) into dst (dstsize > 3) made safe for folded output:
 * ';' becomes ':', control characters and DEL become '?', surrounding
 * blanks are dropped, and names longer than dstsize-1 are cut with "...".
 * Returns the length written. */
size_t kp_sym_sanitize_name(char *dst, size_t dstsize, const char *name, size_t len);

#endif
