/* What a recording's counts say to the user (session_report.h): each
 * sentence built here from the session's options and counts, handed to
 * the caller one line at a time. */
#include "profiler/session_report.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/target.h"
#include "util/appendf.h"
#include "util/xalloc.h"

/* Formats the line and hands it to fn. */
static void say(kp_report_fn fn, void *arg, bool warning, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void say(kp_report_fn fn, void *arg, bool warning, const char *fmt, ...)
{
	char small[2048], *line = small;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (len >= (int)sizeof(small)) {
		line = kp_xmalloc((size_t)len + 1);
		va_start(ap, fmt);
		vsnprintf(line, (size_t)len + 1, fmt, ap);
		va_end(ap);
	}
	fn(arg, warning, len < 0 ? "" : line);
	if (line != small)
		free(line);
}

/* No wait kept: all left out (the off-CPU line says why: --min-wait,
 * unpaired records), which is not that none began. */
static void no_waits(const struct kp_session_stats *st, kp_report_fn fn, void *arg)
{
	uint64_t left = st->off.short_waits + st->off.unpaired;

	if (left)
		say(fn, arg, true,
		    "no off-CPU waits were kept: all %llu were left out (the off-CPU line "
		    "says why)",
		    (unsigned long long)left);
	else
		say(fn, arg, true,
		    "no off-CPU wait began in the %.1f s recorded: the threads sampled never "
		    "left the CPU, or were waiting since before the recording started (a wait "
		    "is seen from its start)",
		    st->seconds);
}

/* Why a recording can be empty depends on what was sampled. */
void kp_session_report_empty(const struct kp_session_opts *o, const struct kp_session_stats *st,
			     kp_report_fn fn, void *arg)
{
	const char *period = st->freq ? "1/F seconds" : "-c events";

	if (o->mode == KP_SESSION_OFFCPU && !st->lost)
		no_waits(st, fn, arg);
	/* then it was not too short: the rings could not hold a sample */
	else if (st->lost)
		say(fn, arg, true,
		    "no samples were recorded: all %llu were lost, the rings (%u page%s per "
		    "CPU) too small for a sample and its stack copy; give a larger -m",
		    (unsigned long long)st->lost, st->ring_pages, st->ring_pages == 1 ? "" : "s");
	else if (o->command_is_target)
		say(fn, arg, true,
		    "no samples were recorded: the command ran for less than one sampling "
		    "period (%s), or slept all the time",
		    period);
	else if (o->npids)
		say(fn, arg, true,
		    "no samples were recorded: the %s sampled used no CPU in the %.1f s "
		    "recorded (idle or sleeping)",
		    o->pids_are_tids ? (o->npids == 1 ? "thread" : "threads")
				     : (o->npids == 1 ? "process" : "processes"),
		    st->seconds);
	else
		say(fn, arg, true,
		    "no samples were recorded in %.1f s (shorter than one sampling period, "
		    "%s?)",
		    st->seconds, period);
}

static const char *const end_names[KP_UNWIND_NEND] = {
	[KP_UNWIND_OUTERMOST] = "whole",	   [KP_UNWIND_SNAPSHOT] = "snapshot too small",
	[KP_UNWIND_DEPTH] = "depth limit",	   [KP_UNWIND_BAD_FRAME] = "bad frame",
	[KP_UNWIND_NO_REGS] = "no user registers",
};

/* What would keep the truncated stacks whole, when the causes a user can
 * act on cut at least 1% of the stacks: a larger stack copy. */
static void truncation_hint(const struct kp_session_opts *o, const struct kp_session_stats *st,
			    kp_report_fn fn, void *arg)
{
	uint64_t stacks = st->samples + st->off.stacks;
	uint64_t copy = st->cut_by[KP_UNWIND_SNAPSHOT] + st->fp_cut;
	bool dwarf = o->attr.callgraph == KP_CALLGRAPH_DWARF;

	if (!copy || copy * 100 < stacks)
		return;
	if (o->attr.callgraph == KP_CALLGRAPH_FP)
		say(fn, arg, false,
		    "%llu stacks were cut where the frame-pointer chain broke (code built "
		    "without frame pointers): -g auto unwinds them from their CFI",
		    (unsigned long long)copy);
	else
		say(fn, arg, false,
		    "%llu stacks went past the user-stack copy%s: a larger copy keeps more of "
		    "them whole, -g %s,65528 (up to 64 KiB a sample, at the cost of larger "
		    "records)",
		    (unsigned long long)copy,
		    dwarf ? "" : " (and past where the frame-pointer chain reached)",
		    dwarf ? "dwarf" : "auto");
}

/* The off-CPU line: the waits timed, the stacks sampled, what was left out
 * and why (docs/offcpu.md). */
static void print_offcpu(const struct kp_session_stats *st, kp_report_fn fn, void *arg)
{
	char out[2048] = "";
	size_t len = 0;

	/* the profile is an estimate when not every wait had its stack */
	if (st->off.charged < st->off.waits)
		kp_appendf(out, sizeof(out), &len,
			   "; %llu waits had no stack: the profile's %.3f s estimate each stack's "
			   "share from the %llu that had (%s)",
			   (unsigned long long)(st->off.waits - st->off.charged),
			   (double)st->off.charged_ns / 1e9, (unsigned long long)st->off.charged,
			   st->switch_event && !strncmp(st->switch_event, "bpf:", 4)
				   ? "each one's time over its chance of a stack"
				   : "each one's time times the switches its sample stands for");
	if (st->off.nostack)
		kp_appendf(out, sizeof(out), &len,
			   "; %llu waits (%.3f s) had no stack to go on: under [no "
			   "stack sampled]",
			   (unsigned long long)st->off.nostack, (double)st->off.nostack_ns / 1e9);
	if (st->off.short_waits)
		kp_appendf(out, sizeof(out), &len, "; left out: %llu under --min-wait",
			   (unsigned long long)st->off.short_waits);
	if (st->off.unpaired)
		kp_appendf(out, sizeof(out), &len,
			   "%s %llu unpaired (the wait's end unseen: switch records lost, or "
			   "the tracepoint's switch in)",
			   st->off.short_waits ? "," : "; left out:",
			   (unsigned long long)st->off.unpaired);
	if (st->off.clock_skew)
		kp_appendf(out, sizeof(out), &len, "; %llu ended before they began (counted 0)",
			   (unsigned long long)st->off.clock_skew);
	/* below a storm every switch out has its stack, unless the kernel
	 * dropped it: a ring full while kprof could not run, whose LOST
	 * record the end of the recording can keep from being written */
	if (st->off.dropped)
		kp_appendf(out, sizeof(out), &len,
			   "; %llu switches out came without their stack (the kernel "
			   "dropped it: a full ring, kprof kept off the CPU): those waits "
			   "went on the last stack of their kind on their thread",
			   (unsigned long long)st->off.dropped);
	if (st->storm_windows)
		kp_appendf(out, sizeof(out), &len,
			   "; a switch storm: stacks at --switch-freq in %llu windows "
			   "of 0.1 s, every switch elsewhere",
			   (unsigned long long)st->storm_windows);
	if (st->lost_chosen)
		kp_appendf(out, sizeof(out), &len,
			   "; %llu chosen waits' times lost (the ring was full)",
			   (unsigned long long)st->lost_chosen);
	if (st->lost_waits)
		kp_appendf(out, sizeof(out), &len,
			   "; %llu waits (%.3f s) of exiting threads lost (the ring "
			   "was full)",
			   (unsigned long long)st->lost_waits, (double)st->lost_waits_ns / 1e9);
	if (st->lost_stacks)
		kp_appendf(out, sizeof(out), &len,
			   "; %llu switch stacks lost (their rings filled, as at a storm's "
			   "first instant)",
			   (unsigned long long)st->lost_stacks);
	say(fn, arg, false,
	    "off CPU: %llu waits, %.3f s (%llu still waiting at the end); stacks of "
	    "%llu switches sampled (%s)%s",
	    (unsigned long long)st->off.waits, (double)st->off.ns / 1e9,
	    (unsigned long long)st->off.open_at_end, (unsigned long long)st->off.stacks,
	    st->switch_event ? st->switch_event : "?", out);
}

void kp_session_report_run(const struct kp_session_opts *o, const struct kp_session_stats *st,
			   const struct kp_profile *p, const char *where, kp_report_fn fn,
			   void *arg)
{
	/* the stack entries of the profile, weighted by samples, and those
	 * left unresolved, by location kind */
	kp_count frames, unresolved[KP_LOC_NKINDS], unres = 0;
	double share;
	char trunc[256] = "";
	size_t len = 0;

	int v = kp_profile_find_value(p, "samples");

	kp_profile_frame_counts(p, v < 0 ? 0 : (size_t)v, &frames, unresolved);
	for (size_t k = 0; k < KP_LOC_NKINDS; k++)
		unres += unresolved[k];
	share = frames ? 100.0 * (double)unres / (double)frames : 0.0;

	/* why the truncated stacks were cut, each once (an unwinder's stop
	 * that the kernel's chain carried on from is not a cut) */
	for (int e = KP_UNWIND_SNAPSHOT; e < KP_UNWIND_NEND; e++)
		if (st->cut_by[e])
			kp_appendf(trunc, sizeof(trunc), &len, "%s %s %llu", len ? "," : ":",
				   end_names[e], (unsigned long long)st->cut_by[e]);
	if (st->fp_cut)
		kp_appendf(trunc, sizeof(trunc), &len, "%s frame-pointer chain cut %llu",
			   len ? "," : ":", (unsigned long long)st->fp_cut);
	/* the profile's path escaped with the rest by the caller */
	say(fn, arg, false,
	    "%llu samples, %llu lost, %zu process%s, %.1f s; %.1f%% of frames "
	    "unresolved (kernel %llu, user %llu, JIT %llu, other %llu); %llu stacks "
	    "truncated%s; profile in %s",
	    (unsigned long long)(st->samples + st->off.stacks), (unsigned long long)st->lost,
	    st->nprocs, st->nprocs == 1 ? "" : "es", st->seconds, share,
	    (unsigned long long)unresolved[KP_LOC_KERNEL],
	    (unsigned long long)unresolved[KP_LOC_USER], (unsigned long long)unresolved[KP_LOC_JIT],
	    (unsigned long long)unresolved[KP_LOC_UNKNOWN], (unsigned long long)st->truncated,
	    trunc, where);
	truncation_hint(o, st, fn, arg);
}

void kp_session_report_details(const struct kp_session_opts *o, const struct kp_session_stats *st,
			       bool stats, kp_report_fn fn, void *arg)
{
	if (o->mode != KP_SESSION_CPU)
		print_offcpu(st, fn, arg);
	kp_session_report_losses(st, fn, arg);
	if (stats)
		say(fn, arg, false,
		    "unwinding: %llu stacks from snapshots (median %.1f us, p99 %.1f "
		    "us, %.3f s in all), %llu continued with the kernel's chain, %llu leaves "
		    "repaired; unwind tables of %llu objects (%llu without), %.1f MB read; "
		    "rings %u pages per CPU",
		    (unsigned long long)st->unwound, (double)st->unwind_ns_p50 / 1000.0,
		    (double)st->unwind_ns_p99 / 1000.0, (double)st->unwind_ns_total / 1e9,
		    (unsigned long long)st->spliced, (unsigned long long)st->leaf_repaired,
		    (unsigned long long)st->tables.objects,
		    (unsigned long long)st->tables.objects_no_table,
		    (double)st->tables.table_bytes / 1e6, st->ring_pages);
	if (stats && (st->java.jvms || st->java.jvms_failed))
		say(fn, arg, false,
		    "java: %llu JVMs read by their VM structs (%llu could not be), "
		    "%llu Java frames named, %llu that did not check out; %llu reads of "
		    "their memory",
		    (unsigned long long)st->java.jvms, (unsigned long long)st->java.jvms_failed,
		    (unsigned long long)st->java.frames, (unsigned long long)st->java.bad,
		    (unsigned long long)st->java.reads);
	if (stats && st->node.processes)
		say(fn, arg, false,
		    "node: %llu processes named live from V8's heap: %llu samples "
		    "(median %.2f us, p99 %.2f us, %.3f s in all), %llu JavaScript frames "
		    "(%llu from the cache, %llu of those checked by an earlier sample's "
		    "read, %llu unknown), %llu reads",
		    (unsigned long long)st->node.processes, (unsigned long long)st->node.samples,
		    (double)st->node.ns_p50 / 1000.0, (double)st->node.ns_p99 / 1000.0,
		    (double)st->node.ns_total / 1e9, (unsigned long long)st->node.frames,
		    (unsigned long long)st->node.hits, (unsigned long long)st->node.shared,
		    (unsigned long long)st->node.unknown, (unsigned long long)st->node.reads);
	if (stats && st->exit_held)
		say(fn, arg, false,
		    "command: held at its exit for %.1f ms while the samples up to then were named",
		    (double)st->exit_hold_ns / 1e6);
	else if (stats && st->exit_let_go)
		say(fn, arg, false,
		    "command: let go untraced, not held at its exit: more than %d signals a "
		    "second came to it (each stopped it for kprof); JIT frames (node, java) of "
		    "its last round of samples may stay unknown",
		    KP_TARGET_MAX_SIGNALS);
	else if (stats && st->exit_hold_err == -EACCES)
		say(fn, arg, false,
		    "command: not held at its exit (kprof is not privileged to trace: a "
		    "set-user-ID "
		    "program it runs would lose its privilege): JIT frames (node, java) of its "
		    "last "
		    "round of samples may stay unknown");
	else if (stats && st->exit_hold_err)
		say(fn, arg, false,
		    "command: not held at its exit (ptrace: %s): JIT frames (node, java) of its "
		    "last round of samples may stay unknown",
		    strerror(-st->exit_hold_err));
	if (stats && (st->sym.jitdump_loads || st->sym.jitdump_ignored))
		say(fn, arg, false,
		    "jitdumps: %llu code loads read (%llu outside JIT code, ignored) "
		    "from %llu files, %.1f MiB held, unwinding info of %llu codes used",
		    (unsigned long long)st->sym.jitdump_loads,
		    (unsigned long long)st->sym.jitdump_ignored,
		    (unsigned long long)st->sym.jitdump_opens,
		    (double)st->sym.jitdump_bytes / 1048576.0,
		    (unsigned long long)st->tables.jit_codes);
}

void kp_session_report_losses(const struct kp_session_stats *st, kp_report_fn fn, void *arg)
{
	if (st->lost)
		say(fn, arg, false,
		    "%llu records were lost: the rings (%u pages per CPU) filled "
		    "faster than kprof read them; -m %u would avoid it",
		    (unsigned long long)st->lost, st->ring_pages,
		    st->ring_pages < (1u << 18) ? st->ring_pages * 4 : st->ring_pages);
	/* the kernel's perf_event_max_sample_rate and its CPU-time limit cut
	 * the rate: samples not taken, which no -m brings back */
	if (st->throttled)
		say(fn, arg, false,
		    "sampling was throttled %llu times by the kernel (samples not "
		    "taken: kernel.perf_cpu_time_max_percent); a lower -F would avoid it",
		    (unsigned long long)st->throttled);
}

void kp_session_report_jitdumps(const struct kp_session_stats *st, kp_report_fn fn, void *arg)
{
	if (st->sym.jitdump_cut)
		say(fn, arg, true,
		    "%llu jitdump%s read only in part (named in the notes above): the "
		    "JIT code past that point is unnamed",
		    (unsigned long long)st->sym.jitdump_cut,
		    st->sym.jitdump_cut == 1 ? " was" : "s were");
}
