/* kp_perfmap: what a JIT's perf map ("START SIZE name" per line, hex with
 * or without 0x) says about a set of addresses: for each, the name on the
 * last line that covers it (JITs append a line each time they compile, so
 * the later line is the live code). The map is streamed through one
 * buffer and only the names of the addresses asked for are kept: memory
 * grows with the addresses, never with the map, and every line is read.
 * Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_PERFMAP_H
#define KP_SYMBOLIZE_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct kp_strtab;

struct kp_perfmap {
	uint64_t *addrs;   /* sorted, distinct: the addresses the map was read for */
	uint32_t *name_of; /* per address: id in names, 0 when no line covers it */
	size_t n;
	struct kp_strtab *names; /* only the names some address got */
	uint64_t bad_lines;	 /* malformed lines skipped */
	uint64_t entries;	 /* well-formed lines with a non-zero size */
	uint64_t bytes;		 /* bytes read */
};

/* Longest name kept; longer names are cut and end in "...". */
#define KP_PERFMAP_NAME_MAX 4096
/* The read buffer: a line of this many bytes or more is malformed. */
#define KP_PERFMAP_READ_SIZE (1u << 20)

/* Replaces pm's contents with what the map open as fd says about
 * addrs[0..n) (any order, repeats allowed). Every byte from offset 0 to
 * the file's size now is read (pread; the holes of a sparse file are
 * found with lseek SEEK_DATA and not copied) through one buffer of
 * read_size bytes (0: KP_PERFMAP_READ_SIZE), from the end backwards, so
 * that the first line met covering an address is the one that names it.
 * Returns 0, or a negative errno when a read failed or the file shrank
 * meanwhile; pm then gives the names the lines after that point gave
 * (later lines: those names are right) and no name to the rest. */
int kp_perfmap_read(struct kp_perfmap *pm, int fd, const uint64_t *addrs, size_t n,
		    size_t read_size);
/* The same over buf[0..len) instead of a file. Never fails. */
void kp_perfmap_parse(struct kp_perfmap *pm, const char *buf, size_t len, const uint64_t *addrs,
		      size_t n, size_t read_size);
/* Frees what pm holds and zeroes it (a zeroed pm was read for nothing). */
void kp_perfmap_fini(struct kp_perfmap *pm);
/* Whether pm was read for addr; if so, *name is the name covering it, or
 * NULL when no line does (owned by pm until the next read/parse/fini). */
bool kp_perfmap_find(const struct kp_perfmap *pm, uint64_t addr, const char **name);

/* Copies name[0..len) into dst (dstsize > 3) made safe for folded output:
 * ';' becomes ':', control characters and DEL become '?', surrounding
 * blanks are dropped, and names longer than dstsize-1 are cut with "...".
 * Returns the length written. */
size_t kp_perfmap_sanitize_name(char *dst, size_t dstsize, const char *name, size_t len);

#endif
