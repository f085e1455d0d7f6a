/* pprof output: a profile as the gzip-compressed profile.proto that `go
 * tool pprof`, Pyroscope, Parca and Grafana read (google/pprof's
 * proto/profile.proto, compiled by protoc-c at build time).
 *
 * How the model maps onto it (docs/formats.md says the same, for users):
 *   value types   sample_type, in order; default_sample_type is the one
 *                 kprof draws (o->default_value); values are int64: a
 *                 value type with decimals, or whose total passes
 *                 INT64_MAX, is refused (-ERANGE) rather than rounded
 *   samples       Sample {location ids leaf first, values, labels: "comm"
 *                 (string), "pid", "tid" (numbers, when recorded)}: pprof
 *                 has no root frame (`go tool pprof -tagroot comm` draws
 *                 one)
 *   locations     Location id = location + 1, with its mapping and address
 *                 (a file offset for user code, a virtual address for
 *                 kernel and JIT code), its frames as Lines innermost
 *                 first; a placeholder in a file pprof can read is left
 *                 without lines, for the reader to symbolize
 *   functions     Function id = function + 1: name and file (no
 *                 system_name: kprof keeps no linkage name)
 *   mappings      one per module (path, build-id as hex), addresses equal
 *                 to file offsets over the sampled range, has_* from what
 *                 the locations know; "[kernel.kallsyms]" for kernel code
 *   metadata      comments "key=value"; time_nanos, duration_nanos,
 *                 period_type and period from the start, duration,
 *                 frequency or period and the event's value type
 * Strings are valid UTF-8 (invalid bytes and NULs become U+FFFD). */
#ifndef KP_FORMATS_PPROF_H
#define KP_FORMATS_PPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile/profile.h"
#include "util/diag.h"

struct kp_pprof_opts {
	size_t default_value; /* value type readers show first (index) */
	int level;	      /* gzip level 1-12 (libdeflate); 0: KP_PPROF_LEVEL */
};

/* The gzip level when none is given: libdeflate's 6 (measured in
 * docs/performance.md: smaller than gzip -6 and faster than zlib's 1). */
#define KP_PPROF_LEVEL 6

/* Serializes p as an uncompressed Profile message: *buf (the caller frees
 * it) of *len bytes. o may be NULL. Returns 0, or -ERANGE (d says which
 * value type and why) when a value cannot be an int64. */
int kp_pprof_encode(const struct kp_profile *p, const struct kp_pprof_opts *o, uint8_t **buf,
		    size_t *len, struct kp_diag *d);

/* kp_pprof_encode, gzip-compressed (libdeflate), written to out. Returns 0
 * or a negative errno (d set). */
int kp_pprof_write(const struct kp_profile *p, const struct kp_pprof_opts *o, FILE *out,
		   struct kp_diag *d);

#endif
