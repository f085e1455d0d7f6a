#include "profiler/perf_event.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "procfs/sysctl.h"
#include "procfs/tasks.h"
#include "unwind/regs.h"

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} events[] = {
	{"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
	{"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
	{"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
	{"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
	{"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
	{"cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
	{"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	{"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	{"migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	{"alignment-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_ALIGNMENT_FAULTS},
	{"emulation-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_EMULATION_FAULTS},
};

int kp_perf_event_lookup(const char *name, struct kp_event_spec *spec)
{
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (strcmp(name, events[i].name) == 0) {
			spec->type = events[i].type;
			spec->config = events[i].config;
			spec->name = events[i].name;
			return 0;
		}
	}
	return -ENOENT;
}

const char *kp_perf_event_names(void)
{
	static char buf[1024];

	if (!buf[0]) {
		size_t len = 0;

		for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
			len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : "",
						events[i].name);
	}
	return buf;
}

void kp_perf_attr_init(struct perf_event_attr *attr, struct kp_perf_record_layout *layout,
		       const struct kp_attr_opts *o)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = o->event.type;
	attr->config = o->event.config;
	if (o->period) {
		attr->sample_period = o->period;
	} else {
		attr->freq = 1;
		attr->sample_freq = o->freq;
	}
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			    PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	/* every mode reads the user registers and the top of the user stack:
	 * dwarf and auto unwind from them, fp repairs its leaf with them */
	attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	attr->sample_regs_user = KP_UNWIND_REGS_MASK;
	attr->sample_stack_user = o->stack_dump_size		    ? o->stack_dump_size
				  : o->callgraph == KP_CALLGRAPH_FP ? KP_STACK_DUMP_LEAF
								    : KP_STACK_DUMP_DEFAULT;
	attr->sample_stack_user &= ~7u;
	/* dwarf: the kernel's walk of the user stack would only be thrown away */
	attr->exclude_callchain_user = o->callgraph == KP_CALLGRAPH_DWARF;
	attr->sample_max_stack = o->max_stack;
	attr->exclude_kernel = o->exclude_kernel;
	attr->exclude_hv = 1;
	attr->exclude_callchain_kernel = o->exclude_kernel;
	attr->disabled = 1;
	attr->inherit = o->inherit;
	attr->enable_on_exec = o->enable_on_exec;
	/* side band: what the symbolizer needs to name addresses later */
	/* mmap must be set with mmap2: the kernel only counts events with
	 * attr.mmap when deciding whether anyone wants mmap records at all */
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->build_id = o->build_id;
	attr->sample_id_all = 1;
	/* one clock with clock_gettime(), so rounds can be ordered against now */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->watermark = 1;
	attr->wakeup_watermark = 64 * 1024;
	layout->sample_type = attr->sample_type;
	layout->sample_regs_user = attr->sample_regs_user;
}

void kp_perf_switch_attr_init(struct perf_event_attr *attr, const struct perf_event_attr *base,
			      uint64_t tracepoint_id, uint64_t freq, bool stack_given)
{
	*attr = *base;
	attr->type = tracepoint_id ? PERF_TYPE_TRACEPOINT : PERF_TYPE_SOFTWARE;
	attr->config = tracepoint_id ? tracepoint_id : PERF_COUNT_SW_CONTEXT_SWITCHES;
	attr->freq = freq != 0;
	if (freq)
		attr->sample_freq = freq;
	else
		attr->sample_period = 1;
	/* the switch happens in the kernel: its regs are kernel regs, and an
	 * event that excludes the kernel never fires */
	attr->exclude_kernel = 0;
	attr->exclude_callchain_kernel = 0;
	attr->mmap = attr->mmap2 = attr->comm = attr->comm_exec = attr->task = 0;
	attr->build_id = 0;
	attr->context_switch = 0;
	/* a storm's first instant fills its rings before the session turns it
	 * to the frequency mode, and a user's rings are small: the default
	 * copy of a switch stays perf's 8 KiB (another size -g names is kept) */
	if (!stack_given && attr->sample_stack_user == KP_STACK_DUMP_DEFAULT)
		attr->sample_stack_user = KP_STACK_DUMP_SWITCH;
}

void kp_perf_sideband_attr_init(struct perf_event_attr *attr, const struct perf_event_attr *base)
{
	*attr = *base;
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->freq = 0;
	attr->sample_period = 0;
	attr->context_switch = 1;
}

int kp_perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : (int)fd;
}

unsigned kp_perf_max_stack(void)
{
	long v;

	if (kp_sysctl_read("kernel/perf_event_max_stack", &v) < 0 || v <= 0 || v > UINT_MAX)
		return 127;
	return (unsigned)v;
}

int kp_perf_paranoid(void)
{
	long v;

	if (kp_sysctl_read("kernel/perf_event_paranoid", &v) < 0 || v < INT_MIN || v > INT_MAX)
		return 2;
	return (int)v;
}

/* Is process pid ours (the same real user)? True when unknown. */
static bool same_owner(pid_t pid)
{
	uid_t uid;

	return kp_tasks_owner(pid, &uid) < 0 || geteuid() == 0 || uid == getuid();
}

void kp_perf_explain(struct kp_diag *d, int err, const char *event, pid_t pid, int cpu)
{
	char where[64];

	if (pid > 0)
		snprintf(where, sizeof(where), "process %d", (int)pid);
	else
		snprintf(where, sizeof(where), "CPU %d", cpu);
	switch (-err) {
	case EACCES:
	case EPERM:
		if (pid > 0 && !same_owner(pid)) {
			kp_diag_set(
				d, err,
				"not allowed to sample %s: it is another user's, and the kernel "
				"lets a user sample only processes it may trace (its own); run "
				"as root or give kprof CAP_PERFMON",
				where);
			break;
		}
		kp_diag_set(
			d, err,
			"not allowed to sample %s with %s: /proc/sys/kernel/perf_event_paranoid "
			"is %d; run as root, give kprof CAP_PERFMON, or lower the paranoid level "
			"(-1 allows everything, 1 allows your own processes with kernel frames)",
			event, where, kp_perf_paranoid());
		break;
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		kp_diag_set(d, err,
			    "event %s is not supported on %s (no hardware PMU here?); "
			    "try -e cpu-clock",
			    event, where);
		break;
	case ESRCH:
		kp_diag_set(d, err, "%s does not exist", where);
		break;
	case EMFILE:
		kp_diag_set(d, err, "too many open files while opening %s on %s; raise ulimit -n",
			    event, where);
		break;
	case EINVAL:
		kp_diag_errno(d, err,
			      "the kernel refused event %s on %s (frequency above "
			      "/proc/sys/kernel/perf_event_max_sample_rate?)",
			      event, where);
		break;
	default:
		kp_diag_errno(d, err, "cannot open event %s on %s", event, where);
	}
}
