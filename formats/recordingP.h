/* What the .kprof writer (recording_write.c) and reader (recording_read.c)
 * share beside recording.h: the limits of a chunk, which the writer keeps
 * and the reader holds it to, and how columns are delta-coded. Private to
 * formats/. */
#ifndef KP_FORMATS_RECORDINGP_H
#define KP_FORMATS_RECORDINGP_H

#include <stdint.h>

/* items per chunk: big enough that the columns compress, small enough
 * that a chunk is a bounded amount of memory. A chunk takes entries while
 * it holds fewer than BATCH of them and fewer than BATCH_BYTES string
 * bytes, BATCH_FRAMES frames (locations) or BATCH_LOCS own stack
 * locations (samples); the reader holds the writer to it. */
#define BATCH	     4096
#define BATCH_BYTES  (1u << 20)
#define BATCH_FRAMES (4 * BATCH)
#define BATCH_LOCS   (16 * BATCH)
/* events per timeline chunk: at most some 30 bytes each, 2 MB */
#define BATCH_EVENTS (16 * BATCH)
/* What the samples may unfold to, so that reading a recording (and drawing
 * it: every frame of every stack) takes memory linear in its size: after
 * each sample, the frames of all stacks so far (those of each location, one
 * for a location not named) are at most UNFOLD_PER_ITEM for each location,
 * frame, sample and own stack location sent so far, plus UNFOLD_FREE.
 * Shared prefixes cost nothing to send, so the writer sends more of a
 * stack's locations itself where sharing would break this. UNFOLD_FREE is
 * 16M frames (64 MB of location ids): deep recursion written by the kprof
 * of before this limit (1000 samples of 2000 frames unfold to 2M) reads. */
#define UNFOLD_PER_ITEM 32
#define UNFOLD_FREE	(1u << 24)
/* the longest chunk read (a damaged length must not allocate gigabytes);
 * the writer checks every chunk against it */
#define MAX_CHUNK (16u << 20)
/* the tag of Recording.chunk: field 1, length-delimited */
#define CHUNK_TAG 0x0a

enum loc_state { LOC_UNNAMED = 0, LOC_NAMED = 1, LOC_PLACEHOLDER = 2 };

/* The key of a location's object in the delta-coding maps: kind and object. */
static inline uint64_t kp_recording_object_key(uint32_t kind, uint32_t obj)
{
	return (uint64_t)kind << 32 | obj;
}

#endif
