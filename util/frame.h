/* What kind of code a frame is. Shared by the symbolizer (which knows it) and
 * the flame-graph writers (which annotate and colour by it). In folded text
 * the kinds are the suffixes _[k], _[j], _[i] of stackcollapse-perf.pl. */
#ifndef KP_UTIL_FRAME_H
#define KP_UTIL_FRAME_H

#include <stdint.h>

enum kp_frame_kind {
	KP_FRAME_USER = 0, /* ordinary (user-space native) code, or unknown kind */
	KP_FRAME_KERNEL,   /* _[k] */
	KP_FRAME_JIT,	   /* _[j] */
	KP_FRAME_INLINE,   /* _[i] */
	KP_FRAME_ROOT,	   /* the comm / comm-PID root frame */
};

/* One named frame. name is not owned: see the producer's lifetime rules. */
struct kp_frame {
	const char *name;
	uint8_t kind; /* enum kp_frame_kind */
};

/* What follows a function's name in text tables (kprof report -f top,
 * kprof diff): "", " [kernel]", " [jit]", " [inlined]". */
static inline const char *kp_frame_kind_note(enum kp_frame_kind kind)
{
	switch (kind) {
	case KP_FRAME_KERNEL:
		return " [kernel]";
	case KP_FRAME_JIT:
		return " [jit]";
	case KP_FRAME_INLINE:
		return " [inlined]";
	default:
		return "";
	}
}

#endif
