/* Java frames of the HotSpot JVMs sampled (docs/java.md): each process
 * that maps libjvm.so is read through runtimes/hotspot.h at its first
 * sample in anonymous code; the unwinder asks this module about every
 * frame in anonymous code (kp_hsframes_step: steps compiled frames by
 * their size, interpreted ones by their frame pointer, and names each
 * frame, its inlined methods as frames of their own), and sample.c puts
 * the names in the stack (kp_hsframes_names). */
#ifndef KP_PROFILER_HOTSPOT_FRAMES_H
#define KP_PROFILER_HOTSPOT_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profiler/runtime_stats.h"
#include "unwind/unwind.h"

struct kp_session;
struct kp_hsframes;
struct kp_mapping;

struct kp_hsframes *kp_hsframes_new(struct kp_session *s);
void kp_hsframes_free(struct kp_hsframes *hf);

/* A mapping of pid was seen (proctab's on_map): libjvm.so marks a JVM. */
void kp_hsframes_mapped(struct kp_hsframes *hf, const struct kp_mapping *m);
/* pid exited or exec'd: its reader goes. */
void kp_hsframes_forget(struct kp_hsframes *hf, pid_t pid);

/* The session's profile was replaced (a new window): the location ids
 * cached for the old one are let go before the next Java frame is named. */
void kp_hsframes_new_profile(struct kp_hsframes *hf);

/* The unwinder's kp_unwind_objects.runtime (arg: the kp_hsframes). */
enum kp_unwind_rtstep kp_hsframes_step(void *arg, const struct kp_unwind_input *in,
				       const struct kp_unwind_rtframe *f,
				       struct kp_unwind_rtframe *caller);

/* The profile locations the last walk named at frame depth (innermost
 * first), *n of them (0: none, the frame is named as any other). */
const uint32_t *kp_hsframes_names(struct kp_hsframes *hf, size_t depth, size_t *n);
/* Forgets the last walk's names and live stack (before the next walk,
 * of a thread of pid). */
void kp_hsframes_reset(struct kp_hsframes *hf, pid_t pid);

/* Was some process seen to map libjvm.so? */
bool kp_hsframes_any_jvm(const struct kp_hsframes *hf);
/* Is pid a JVM whose VM structs were read? */
bool kp_hsframes_is_jvm(struct kp_hsframes *hf, pid_t pid);
/* The unwinder's kp_unwind_input.more for a JVM (arg: the kp_hsframes):
 * its live stack above the copy, read a page at a time (at most
 * MORE_PAGES a walk), for stacks deeper than the copy (docs/java.md). */
ssize_t kp_hsframes_more(void *arg, uint64_t addr, void *buf, size_t len);

/* Its counts so far (the struct: profiler/runtime_stats.h). */
void kp_hsframes_stats(const struct kp_hsframes *hf, struct kp_hsframes_stats *st);

#endif
