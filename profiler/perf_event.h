/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_perf: building perf_event_attr, naming events, opening them, and
 * explaining why the kernel said no. */
#ifndef KP_PROFILER_PERF_EVENT_H
#define KP_PROFILER_PERF_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profiler/perf_record.h"
#include "util/diag.h"

enum kp_callgraph {
	KP_CALLGRAPH_AUTO = 0, /* CFI over a snapshot, the kernel's chain past its end */
	KP_CALLGRAPH_FP,       /* the kernel's frame-pointer chain, validated, leaf repaired */
	KP_CALLGRAPH_DWARF,    /* user stacks only from the snapshot, unwound with CFI */
};

/* Stack snapshot per sample: -g dwarf and auto (docs/unwinding.md, "The
 * copy's size": perf's 8 KiB cut a Python-heavy load's stacks about four
 * times as often), the switch event's of --off-cpu and --wall (perf's,
 * for the storms' rings), and the small one leaf repair reads in fp mode. */
#define KP_STACK_DUMP_DEFAULT 16384
#define KP_STACK_DUMP_SWITCH  8192
#define KP_STACK_DUMP_LEAF    512
/* The kernel's limit (u16 size in the record, 8-byte multiple). */
#define KP_STACK_DUMP_MAX 65528

struct kp_event_spec {
	uint32_t type; /* PERF_TYPE_HARDWARE / PERF_TYPE_SOFTWARE */
	uint64_t config;
	const char *name; /* canonical name, e.g. "cpu-clock" */
};

/* Looks up an event name as `perf list` spells it (cycles, cpu-cycles,
 * instructions, cpu-clock, task-clock, page-faults, ...). Returns 0 or
 * -ENOENT. */
int kp_perf_event_lookup(const char *name, struct kp_event_spec *spec);
/* Writes the known names, comma-separated, for error messages. */
const char *kp_perf_event_names(void);

struct kp_attr_opts {
	struct kp_event_spec event;
	uint64_t freq;	 /* samples per second; used when period == 0 */
	uint64_t period; /* -c */
	bool exclude_kernel;
	bool inherit;	     /* follow children/threads of the target */
	bool enable_on_exec; /* the target command: start counting at exec */
	bool build_id;	     /* ask for build-ids in MMAP2 (kernel >= 5.12) */
	enum kp_callgraph callgraph;
	uint32_t stack_dump_size; /* bytes of user stack per sample; 0: the mode's default */
	uint16_t max_stack;
};

/* Fills attr (and the record layout it implies). */
void kp_perf_attr_init(struct perf_event_attr *attr, struct kp_perf_record_layout *layout,
		       const struct kp_attr_opts *o);

/* The event sampled where a thread goes off CPU (kprof --off-cpu and
 * --wall; docs/offcpu.md), made from base (kp_perf_attr_init's, whose
 * stack options and layout it keeps): sched:sched_switch when
 * tracepoint_id is not 0 (its raw record says the thread's state), else the
 * software context-switch event; a sample at every switch, or freq a
 * second in the kernel's frequency mode (what a storm needs). Its stack
 * copy is base's when -g named a size (stack_given), else 8 KiB. */
void kp_perf_switch_attr_init(struct perf_event_attr *attr, const struct perf_event_attr *base,
			      uint64_t tracepoint_id, uint64_t freq, bool stack_given);
/* The event that only writes side-band records (base's layout): MMAP2,
 * COMM and task records, and a SWITCH record at every switch in and out
 * of a target thread, which times the waits whatever is sampled. */
void kp_perf_sideband_attr_init(struct perf_event_attr *attr, const struct perf_event_attr *base);

/* perf_event_open(2), with CLOEXEC. Returns the fd or a negative errno. */
int kp_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd);

/* One sentence for an open failure: EACCES/EPERM name perf_event_paranoid
 * and CAP_PERFMON; ENOENT/EOPNOTSUPP/ENODEV name the missing PMU, etc. */
void kp_perf_explain(struct kp_diag *d, int err, const char *event, pid_t pid, int cpu);

/* /proc/sys/kernel/perf_event_max_stack, or 127 when unreadable. */
unsigned kp_perf_max_stack(void);

/* /proc/sys/kernel/perf_event_paranoid, or 2 when unreadable. */
int kp_perf_paranoid(void);

#endif
