/* kp_recording: the .kprof recording, a whole profile (profile/profile.h)
 * in one small self-contained file that `kprof report` reads on any
 * machine: docs/recording-format.md.
 *
 *   header   8 bytes, not compressed: "KPROF", major, minor, 0
 *   body     one zstd frame (with its checksum) of protobuf-c messages
 *            (formats/kprof.proto): chunks of the profile's tables in
 *            order (strings, value types, functions, locations with their
 *            frames, mappings, samples, the time axis when the profile
 *            keeps one, metadata), each preceded by its
 *            length, and an end chunk with every table's count
 *
 * Both directions stream: the writer encodes a bounded batch of a table at
 * a time straight from the profile, the reader decodes one chunk at a time
 * into the new profile, so memory is the profile plus a chunk. */
#ifndef KP_FORMATS_RECORDING_H
#define KP_FORMATS_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "profile/profile.h"
#include "util/diag.h"

/* The format this kprof writes (1.1: the time axis; 1.2: waits on it, their
 * length; a profile without time is written as 1.0). A reader takes every minor version of
 * its major (what a newer minor adds, it skips) and refuses other majors. */
#define KP_RECORDING_MAJOR 1
#define KP_RECORDING_MINOR 2

#define KP_RECORDING_HEADER_SIZE 8

/* True when the first bytes of buf (len of them) are a recording's magic
 * ("KPROF"), whatever its version. */
bool kp_recording_magic(const void *buf, size_t len);

/* Writes p to out (not owned, left open, not flushed past what zstd
 * writes) as a .kprof recording. Returns 0, or a negative errno with the
 * reason in d (out's write error; a string too long for a chunk). */
int kp_recording_write(const struct kp_profile *p, FILE *out, struct kp_diag *d);
/* The same, compressed at zstd's level 9 whatever its size: for many
 * small recordings (kprof --every's windows), where level 19's few
 * percent cost more CPU than the recording did. */
int kp_recording_write_fast(const struct kp_profile *p, FILE *out, struct kp_diag *d);

/* Reads a recording from in (not owned; read to its end) into a new profile
 * (*out, the caller frees it). name is the file for messages. Returns 0, or
 * a negative errno with one line naming the file in d: not a recording, a
 * major version this kprof does not read, damaged or truncated data (every
 * id is checked against the table it refers to before use). *out is NULL
 * on failure. */
int kp_recording_read(FILE *in, const char *name, struct kp_profile **out, struct kp_diag *d);

#endif
