/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_node: JavaScript frames of node processes named as they are sampled,
 * from the process's heap through the V8 metadata of its own node binary
 * or libnode (runtimes/v8.h). A process is looked at when a sample of it
 * first has JIT code on its stack: the objects on that stack are searched
 * for the metadata (each object once); a node whose perf map or jitdump
 * exists keeps being named from those, and one without the metadata is
 * said once in a note and named as before. docs/node.md. */
#ifndef KP_PROFILER_NODE_H
#define KP_PROFILER_NODE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "profiler/runtime_stats.h"

struct kp_session;
struct kp_sample;
struct kp_node;

struct kp_node *kp_node_new(void);
void kp_node_free(struct kp_node *nd);

/* Names the JavaScript frames of sample smp, whose user stack is
 * user[0..n) (leaf first): names[i] is the name of frame i, or NULL
 * where its location stays as it is. The names live until the next
 * call. */
void kp_node_names(struct kp_session *s, const struct kp_sample *smp, const uint64_t *user,
		   size_t n, const char **names);
/* The functions inlined into frame i of the last kp_node_names (outermost
 * first, *n of them; NULL for none): shown as inline frames under it. */
const char *const *kp_node_inlined(const struct kp_node *nd, size_t i, size_t *n);
/* Process pid mapped a jitdump: its JIT code is named from it. */
void kp_node_jitdump(struct kp_node *nd, pid_t pid);
/* Process pid exited or exec'd: its reader and names go. */
void kp_node_forget(struct kp_node *nd, pid_t pid);

/* Its counts so far (the struct: profiler/runtime_stats.h). */
void kp_node_stats(const struct kp_node *nd, struct kp_node_stats *st);

#endif
