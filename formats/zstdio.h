/* kp_zstd_reader / kp_zstd_writer: stdio streams over zstd (libzstd's
 * streaming API behind fopencookie), so that readers and writers of text
 * and records work unchanged on compressed files: `.zst` folded stacks,
 * `.kprof` recordings. Memory is zstd's window and two buffers, whatever
 * the size of the data. */
#ifndef KP_FORMATS_ZSTDIO_H
#define KP_FORMATS_ZSTDIO_H

#include <stdbool.h>
#include <stdio.h>

#include "util/diag.h"

struct kp_zstd_reader;
struct kp_zstd_writer;

/* True when the first bytes of buf (len of them) start a zstd frame. */
bool kp_zstd_magic(const void *buf, size_t len);

/* Decompresses everything read from in (not owned, left open) as one or
 * more concatenated frames. Never NULL: out of memory, here or for a
 * frame's window while reading (at most 128 MiB, zstd's default limit),
 * ends the process as util/xalloc.h does. */
struct kp_zstd_reader *kp_zstd_reader_new(FILE *in);
/* The decompressed stream; owned by r (do not fclose it). */
FILE *kp_zstd_reader_file(struct kp_zstd_reader *r);
/* After a read error on the stream: why ("truncated", zstd's own error
 * name, or the input's read error), else NULL. Owned by r. */
const char *kp_zstd_reader_error(const struct kp_zstd_reader *r);
void kp_zstd_reader_free(struct kp_zstd_reader *r);

/* Compresses what is written to the stream into out (not owned), at level
 * (0: zstd's default), with zstd's frame checksum so that damage is found
 * on reading. */
struct kp_zstd_writer *kp_zstd_writer_new(FILE *out, int level);
FILE *kp_zstd_writer_file(struct kp_zstd_writer *w);
/* About how many bytes will be written (before the first): zstd's window
 * and match tables are sized for that much, not for any size: a small
 * output at a high level needs a few MB, not a hundred. */
void kp_zstd_writer_expect(struct kp_zstd_writer *w, size_t bytes);
/* Ends the frame and flushes it into out. Returns 0 or a negative errno
 * (diag set). Frees w whatever happens. */
int kp_zstd_writer_finish(struct kp_zstd_writer *w, struct kp_diag *d);
/* Frees w without finishing the frame (after an error). */
void kp_zstd_writer_free(struct kp_zstd_writer *w);

#endif
