/* One sample to a location stack (see profilerP.h): the callchain split by
 * context, the user stack validated or unwound, each frame a location of
 * the profile, and the stack added under its root. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "profiler/hotspot_frames.h"
#include "profiler/node.h"
#include "profiler/profilerP.h"
#include "runtimes/v8.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"

/* Makes sure pid is described: a pid the table has never heard of (it
 * started between the events and the /proc scan, or its records were lost)
 * is read from /proc once. */
static void know_pid(struct kp_session *s, pid_t pid)
{
	uint64_t dummy;

	if (pid <= 0 || kp_proctab_has(s->procs, pid) ||
	    kp_u64map_get(&s->synth_failed, (uint64_t)pid, &dummy))
		return;
	if (kp_proctab_synthesize(s->procs, pid) < 0)
		kp_u64map_put(&s->synth_failed, (uint64_t)pid, 1);
}

/* The symbolizer object behind mapping m (a file or the vDSO), registered
 * the first time it is needed; 0 for anything else. A memfd is decided
 * then, while the process still lives to reach it: a program run from
 * memory when it holds ELF (m becomes KP_MAPPING_FILE), else JIT code
 * (KP_MAPPING_ANON). */
uint32_t kp_sample_map_object(struct kp_session *s, struct kp_mapping *m)
{
	if (m->obj || m->kind == KP_MAPPING_ANON || m->kind == KP_MAPPING_OTHER)
		return m->obj;
	if (m->kind == KP_MAPPING_MEMFD) {
		m->obj = kp_sym_memfd_get(s->opts.sym, m);
		m->kind = m->obj ? KP_MAPPING_FILE : KP_MAPPING_ANON;
	} else {
		m->obj = kp_sym_object_get(s->opts.sym, m);
	}
	return m->obj;
}

static struct kp_loc user_loc(struct kp_session *s, pid_t pid, uint64_t addr)
{
	struct kp_loc loc = {.addr = addr, .kind = KP_LOC_UNKNOWN};
	struct kp_mapping *m = kp_proctab_find_map(s->procs, pid, addr);

	/* No mapping: a stale or garbage frame pointer (the outermost frames
	 * of code built without them) more often than not. JIT code is always
	 * in a mapping: mmap and mprotect(PROT_EXEC) both report it. */
	if (!m || m->kind == KP_MAPPING_OTHER)
		return loc;
	loc.obj = kp_sample_map_object(s, m);
	if (m->kind == KP_MAPPING_ANON) {
		loc.kind = KP_LOC_JIT;
		loc.obj = kp_sym_jit_get(s->opts.sym, pid);
		return loc;
	}
	loc.kind = KP_LOC_USER;
	loc.addr = addr - m->start + m->pgoff;
	return loc;
}

/* The unwinder's view of the process table. */
struct map_arg {
	struct kp_session *s;
	pid_t pid;
};

static bool find_map(void *arg, uint64_t addr, struct kp_mapping *out)
{
	struct map_arg *a = arg;
	struct kp_mapping *m = kp_proctab_find_map(a->s->procs, a->pid, addr);

	if (!m || m->kind == KP_MAPPING_OTHER)
		return false;
	kp_sample_map_object(a->s, m); /* its obj: 0 for anonymous code */
	*out = *m;
	return true;
}

/* Is addr code of pid (a mapping that is not [vsyscall]-like)? */
static bool is_code(struct kp_session *s, pid_t pid, uint64_t addr)
{
	struct kp_mapping *m = kp_proctab_find_map(s->procs, pid, addr);

	return m && m->kind != KP_MAPPING_OTHER;
}

/* A frame-pointer chain from the kernel, leaf first, is cut at the first
 * return address that is not code: what follows is garbage (code built
 * without frame pointers leaves other values in rbp). Returns the frames
 * kept; *cut says it was cut. */
static size_t validate_fp(struct kp_session *s, pid_t pid, const uint64_t *ips, size_t n, bool *cut)
{
	*cut = false;
	for (size_t i = 1; i < n; i++) {
		if (!is_code(s, pid, ips[i])) {
			*cut = true;
			return i;
		}
	}
	return n;
}

static uint64_t ns_between(const struct timespec *a, const struct timespec *b)
{
	return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec));
}

/* The sample's user stack, leaf first, into user[0..max) from the kernel's
 * chain kc[0..nkc) (chain_full: it stopped at the kernel's depth limit)
 * and/or the snapshot, as the mode says. Returns the number of frames;
 * *cut says the stack is not whole. */
static size_t user_stack(struct kp_session *s, const struct kp_sample *smp, const uint64_t *kc,
			 size_t nkc, bool chain_full, uint64_t *user, size_t max, bool *cut)
{
	enum kp_callgraph mode = s->opts.attr.callgraph;
	struct map_arg ma = {s, (pid_t)smp->pid};
	struct kp_unwind_input in = {
		.pid = (pid_t)smp->pid,
		.regs = smp->regs,
		.regs_mask = smp->regs ? s->layout.sample_regs_user : 0,
		.stack = smp->stack,
		.stack_len = smp->stack ? (size_t)smp->stack_dyn_size : 0,
		.find_map = find_map,
		.map_arg = &ma,
	};
	bool regs = smp->regs_abi == PERF_SAMPLE_REGS_ABI_64 && smp->regs && smp->pid > 0;
	struct kp_unwind_result res;
	struct timespec t0, t1;
	uint64_t ns;
	size_t n;

	*cut = false;
	if (mode == KP_CALLGRAPH_FP || !regs) {
		/* the kernel's chain, validated; its leaf repaired */
		n = nkc < max ? nkc : max;
		memcpy(user, kc, n * sizeof(*user));
		n = validate_fp(s, (pid_t)smp->pid, user, n, cut);
		if (n && regs && n < max) {
			uint64_t ret = kp_unwind_leaf(s->unw, &in, n > 1 ? user[1] : 0);

			if (ret) {
				memmove(user + 2, user + 1, (n - 1) * sizeof(*user));
				user[1] = ret;
				n++;
				s->st.leaf_repaired++;
			}
		}
		if (chain_full)
			*cut = true; /* the kernel stopped at its depth limit */
		if (*cut)
			s->st.fp_cut++;
		return n;
	}
	kp_hsframes_reset(s->hs, in.pid);
	if (kp_hsframes_is_jvm(s->hs, in.pid)) {
		in.more = kp_hsframes_more;
		in.more_arg = s->hs;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	kp_unwind_stack(s->unw, &in, user, max, &res);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ns_between(&t0, &t1) / 100;
	s->cost[ns < COST_BUCKETS - 1 ? ns : COST_BUCKETS - 1]++;
	s->ncost++;
	s->st.unwind_ns_total += ns_between(&t0, &t1);
	s->st.unwound++;
	s->st.ends[res.end]++;
	n = res.n;
	if (res.end == KP_UNWIND_OUTERMOST)
		return n;
	*cut = true;
	/* auto: past the end of the snapshot, the kernel's frame-pointer chain
	 * goes on from the last frame found, where the two agree */
	if (mode == KP_CALLGRAPH_AUTO && res.end == KP_UNWIND_SNAPSHOT && n > 1) {
		for (size_t j = nkc; j-- > 1;) {
			bool kcut;
			size_t more;

			if (kc[j] != user[n - 1])
				continue;
			more = nkc - j - 1 < max - n ? nkc - j - 1 : max - n;
			memcpy(user + n, kc + j + 1, more * sizeof(*user));
			/* validate from the spliced frame on */
			more = validate_fp(s, (pid_t)smp->pid, user + n - 1, more + 1, &kcut) - 1;
			n += more;
			*cut = kcut || chain_full;
			s->st.spliced++;
			if (*cut)
				s->st.fp_cut++;
			return n;
		}
	}
	s->st.cut_by[res.end]++; /* not carried on: the unwinder's stop cut it */
	return n;
}

/* The sample's comm as a string of the profile (the process table's
 * strings are the recorder's own). */
static uint32_t comm_of(struct kp_session *s, const struct kp_sample *smp)
{
	const char *comm;

	if (smp->pid == 0)
		comm = "swapper";
	else
		comm = kp_strtab_str(
			s->strings, kp_proctab_comm_of(s->procs, (pid_t)smp->pid, (pid_t)smp->tid));
	return kp_profile_intern(s->prof, comm, strlen(comm));
}

/* Is kernel address addr in the tracepoint's dispatch rather than the
 * scheduler? Named once an address (the kernel's symbols are loaded then). */
static bool dispatch_frame(struct kp_session *s, uint64_t addr)
{
	static const char *const prefixes[] = {"__traceiter_", "bpf_trace_run", "__bpf_trace_",
					       "perf_trace_",  "bpf_prog_",	"perf_tp_"};
	char name[256];
	uint64_t v;
	bool yes = false;

	if (kp_u64map_get(&s->dispatch_frames, addr, &v))
		return v == 2;
	if (kp_sym_kernel_name(s->opts.sym, addr - 1, name, sizeof(name)))
		for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
			yes |= strncmp(name, prefixes[i], strlen(prefixes[i])) == 0;
	kp_u64map_put(&s->dispatch_frames, addr, yes ? 2 : 1);
	return yes;
}

static size_t sample_stack(struct kp_session *s, const struct kp_sample *smp, uint32_t *locs,
			   struct kp_profile_root *root, bool at_switch);

size_t kp_sample_stack(struct kp_session *s, const struct kp_sample *smp, uint32_t *locs,
		       struct kp_profile_root *root)
{
	return sample_stack(s, smp, locs, root, false);
}

size_t kp_sample_switch_stack(struct kp_session *s, const struct kp_sample *smp, uint32_t *locs,
			      struct kp_profile_root *root)
{
	return sample_stack(s, smp, locs, root, true);
}

/* The user frames, leaf first, as locations after the n in locs: a
 * JVM's Java frames (with the methods inlined into them) and node's
 * JavaScript frames by their runtime's names (js, from kp_node_names),
 * every other frame by its address. Returns the new count. */
static size_t user_locations(struct kp_session *s, const struct kp_sample *smp,
			     const uint64_t *user, size_t nu, const char *const *js, uint32_t *locs,
			     size_t n)
{
	for (size_t i = 0; i < nu; i++) {
		struct kp_loc loc;
		size_t nj;
		const uint32_t *java = kp_hsframes_names(s->hs, i, &nj);

		/* a Java frame: its names, the inlined methods' too while
		 * there is room for the frames left */
		if (nj) {
			size_t room = KP_SESSION_MAX_FRAMES - n - (nu - i - 1);

			for (size_t k = nj > room ? nj - room : 0; k < nj; k++)
				locs[n++] = java[k];
			continue;
		}
		if (js[i] == kp_v8_drop)
			continue;
		if (js[i]) { /* a JavaScript frame named from node's heap */
			size_t ninl;
			const char *const *inl = kp_node_inlined(s->node, i, &ninl);

			/* what TurboFan inlined, innermost first (the stack is
			 * leaf first), while the frames that follow fit */
			if (n + ninl + (nu - i) + 1 > KP_SESSION_MAX_FRAMES)
				ninl = 0;
			for (size_t k = ninl; k-- > 0;)
				locs[n++] = kp_profile_named_location(
					s->prof, inl[k], strlen(inl[k]), KP_FRAME_INLINE);
			locs[n++] = kp_profile_named_location(s->prof, js[i], strlen(js[i]),
							      KP_FRAME_JIT);
			continue;
		}
		loc = user_loc(s, (pid_t)smp->pid, user[i] - (i && user[i]));
		locs[n++] = kp_profile_location(s->prof, &loc);
	}
	return n;
}

static size_t sample_stack(struct kp_session *s, const struct kp_sample *smp, uint32_t *locs,
			   struct kp_profile_root *root, bool at_switch)
{
	uint64_t kern[KP_SESSION_MAX_FRAMES], kc[KP_SESSION_MAX_FRAMES],
		user[KP_SESSION_MAX_FRAMES];
	const char *js[KP_SESSION_MAX_FRAMES];
	size_t nk = 0, nkc = 0, nu = 0, n = 0;
	enum { CTX_KERNEL, CTX_USER, CTX_OTHER } ctx = smp->user_mode ? CTX_USER : CTX_KERNEL;
	const uint64_t *ips = smp->ips;
	uint64_t nr = smp->nr;
	bool cut = false;

	if (!nr) {
		ips = &smp->ip;
		nr = 1;
	}
	know_pid(s, (pid_t)smp->pid);
	/* the callchain, leaf first, split by context */
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];

		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			ctx = ip == (uint64_t)PERF_CONTEXT_KERNEL ? CTX_KERNEL
			      : ip == (uint64_t)PERF_CONTEXT_USER ? CTX_USER
								  : CTX_OTHER;
			continue;
		}
		if (ctx == CTX_KERNEL && nk < KP_SESSION_MAX_FRAMES)
			kern[nk++] = ip;
		else if (ctx == CTX_USER && ip && nkc < KP_SESSION_MAX_FRAMES)
			kc[nkc++] = ip;
	}
	if (!nkc && smp->user_mode)
		kc[nkc++] = smp->ip; /* -g dwarf asks for no user chain */
	/* a switch stack from the scheduler on (a few frames at most) */
	if (at_switch) {
		size_t skip = 0;

		while (skip < nk && skip < 4 && dispatch_frame(s, kern[skip]))
			skip++;
		if (skip) {
			memmove(kern, kern + skip, (nk - skip) * sizeof(*kern));
			nk -= skip;
		}
	}
	/* the kernel's limit counts kernel and user entries together */
	if (smp->pid > 0)
		nu = user_stack(s, smp, kc, nkc, nk + nkc >= s->ev.attr.sample_max_stack, user,
				KP_SESSION_MAX_FRAMES - nk, &cut);
	/* return addresses point after the call: look up the call */
	for (size_t i = 0; i < nk; i++) {
		struct kp_loc loc = {.addr = kern[i] - (i && kern[i]), .kind = KP_LOC_KERNEL};

		locs[n++] = kp_profile_location(s->prof, &loc);
	}
	kp_node_names(s, smp, user, nu, js);
	n = user_locations(s, smp, user, nu, js, locs, n);
	kp_hsframes_reset(s->hs, 0);
	if (cut) {
		struct kp_loc loc = {.kind = KP_LOC_TRUNCATED};

		locs[n++] = kp_profile_location(s->prof, &loc);
		s->st.truncated++;
	}
	/* the callchain is leaf first; stacks are stored root first */
	for (size_t i = 0; i < n / 2; i++) {
		uint32_t t = locs[i];

		locs[i] = locs[n - 1 - i];
		locs[n - 1 - i] = t;
	}
	root->comm = comm_of(s, smp);
	root->pid = s->opts.root_pid || s->opts.root_tid ? smp->pid : 0;
	root->tid = s->opts.root_tid ? smp->tid : 0;
	return n;
}

/* (profilerP.h) */
uint32_t kp_sample_ms(const struct kp_session *s, uint64_t time)
{
	uint64_t origin = kp_profile_time_origin(s->prof), at, ms;

	if (time < s->mono0_ns)
		return 0;
	at = s->unix0_ns + (time - s->mono0_ns);
	if (at < origin)
		return 0;
	ms = (at - origin) / 1000000u;
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

void kp_sample_add(struct kp_session *s, const struct kp_sample *smp)
{
	uint32_t locs[KP_SESSION_MAX_FRAMES + 1];
	struct kp_profile_root root;
	kp_count values[KP_PROFILE_MAX_VALUES] = {0};
	size_t n;
	uint32_t id;

	s->st.samples++;
	n = kp_sample_stack(s, smp, locs, &root);
	/* the value types of the mode (profile/wait.h) */
	if (s->opts.mode == KP_SESSION_WALL) {
		values[0] = values[2] = smp->period; /* wall, cpu */
		values[1] = 1;
	} else {
		values[0] = 1;
		values[1] = smp->period;
	}
	/* a sum past 2^128 would need more samples than time allows */
	if (kp_profile_add_id(s->prof, &root, locs, n, values, &id) && kp_profile_timed(s->prof))
		kp_profile_add_event(s->prof, id, kp_sample_ms(s, smp->time), smp->tid);
}
