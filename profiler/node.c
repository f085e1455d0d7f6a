/* JavaScript frames of node processes named as they are sampled (see
 * node.h, docs/node.md). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "procfs/root.h"
#include "procfs/status.h"
#include "profiler/node.h"
#include "profiler/profilerP.h"
#include "runtimes/v8.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"
#include "util/xalloc.h"

#define MAX_TRIES  16 /* samples with JIT code searched for the metadata */
#define MAX_OBJS   8  /* objects of a stack looked at a sample */
#define NO_META	   UINT64_MAX
#define COST_SLOTS 2001 /* the cost a sample, in 50 ns slots (the last: more) */
/* Naming's share of kprof's time, at most: in each BUDGET_WINDOW_NS, the
 * reads stop after BUDGET_NS (a crafted heap makes every sample cost its
 * whole read bound, some milliseconds; a real node's few microseconds a
 * sample stay far below it). Frames past it are named so. */
#define BUDGET_WINDOW_NS 100000000ull
#define BUDGET_NS	 25000000ull
/* A sample is charged its time, but at most this much a read of the
 * process and one more: the clock's time also counts the time kprof was
 * not running while it named the sample, and on a loaded machine one
 * sample of a real node (a read or two) could otherwise spend the whole
 * budget; a crafted heap's samples, each its hundreds of reads, still
 * are charged all they cost (a read takes 0.5-3 us). */
#define READ_CHARGE_NS 50000ull

enum { UNDECIDED = 0, LIVE, NOT_LIVE };

struct proc {
	pid_t pid;
	uint8_t state, tries;
	uint32_t obj; /* the object with the metadata */
	const struct kp_v8meta *meta;
	struct kp_v8 *v8;
};

struct kp_node {
	struct kp_u64map procs; /* pid -> struct proc * */
	struct kp_u64map objs;	/* object id -> index + 1 in metas, or NO_META */
	struct kp_v8meta **metas;
	size_t nmetas;
	struct kp_u64map jitdumps; /* pids that mapped a jitdump */
	struct kp_node_stats st;
	struct kp_v8_stats gone; /* of the readers freed */
	struct kp_v8 *last;	 /* the reader of the last kp_node_names */
	uint32_t cost[COST_SLOTS];
	uint64_t window_start_ns, window_spent_ns; /* the budget's (BUDGET_NS) */
	bool said_missing;
};

struct kp_node *kp_node_new(void)
{
	struct kp_node *nd = kp_xcalloc(1, sizeof(*nd));

	kp_u64map_init(&nd->procs);
	kp_u64map_init(&nd->objs);
	kp_u64map_init(&nd->jitdumps);
	return nd;
}

static void proc_free(struct kp_node *nd, struct proc *p)
{
	if (p->v8) {
		struct kp_v8_stats vs;

		kp_v8_stats(p->v8, &vs);
		nd->gone.frames += vs.frames;
		nd->gone.hits += vs.hits;
		nd->gone.shared += vs.shared;
		nd->gone.unknown += vs.unknown;
		nd->gone.reads += vs.reads;
		kp_v8_free(p->v8);
	}
	free(p);
}

void kp_node_free(struct kp_node *nd)
{
	size_t pos = 0;
	uint64_t k, v;

	if (!nd)
		return;
	while (kp_u64map_next(&nd->procs, &pos, &k, &v))
		proc_free(nd, (struct proc *)(uintptr_t)v);
	kp_u64map_fini(&nd->procs);
	kp_u64map_fini(&nd->objs);
	kp_u64map_fini(&nd->jitdumps);
	for (size_t i = 0; i < nd->nmetas; i++)
		free(nd->metas[i]);
	free(nd->metas);
	free(nd);
}

void kp_node_forget(struct kp_node *nd, pid_t pid)
{
	uint64_t v;

	if (!nd)
		return;
	kp_u64map_del(&nd->jitdumps, (uint64_t)pid);
	if (!kp_u64map_get(&nd->procs, (uint64_t)pid, &v))
		return;
	if (nd->last == ((struct proc *)(uintptr_t)v)->v8)
		nd->last = NULL;
	kp_u64map_del(&nd->procs, (uint64_t)pid);
	proc_free(nd, (struct proc *)(uintptr_t)v);
}

void kp_node_jitdump(struct kp_node *nd, pid_t pid)
{
	if (nd)
		kp_u64map_put(&nd->jitdumps, (uint64_t)pid, 1);
}

const char *const *kp_node_inlined(const struct kp_node *nd, size_t i, size_t *n)
{
	*n = 0;
	return nd && nd->last ? kp_v8_inlined(nd->last, i, n) : NULL;
}

void kp_node_stats(const struct kp_node *nd, struct kp_node_stats *st)
{
	size_t pos = 0;
	uint64_t k, v;

	*st = nd->st;
	for (uint64_t i = 0, seen = 0; i < COST_SLOTS && st->samples; i++) {
		seen += nd->cost[i];
		if (!st->ns_p50 && seen * 2 >= st->samples)
			st->ns_p50 = i * 50 + 25;
		if (seen * 100 >= st->samples * 99) {
			st->ns_p99 = i * 50 + 25;
			break;
		}
	}
	st->frames += nd->gone.frames;
	st->hits += nd->gone.hits;
	st->shared += nd->gone.shared;
	st->unknown += nd->gone.unknown;
	st->reads += nd->gone.reads;
	while (kp_u64map_next(&nd->procs, &pos, &k, &v)) {
		const struct proc *p = (const struct proc *)(uintptr_t)v;
		struct kp_v8_stats vs;

		if (!p->v8)
			continue;
		kp_v8_stats(p->v8, &vs);
		st->frames += vs.frames;
		st->hits += vs.hits;
		st->shared += vs.shared;
		st->unknown += vs.unknown;
		st->reads += vs.reads;
	}
}

/* ---- the process's memory: process_vm_readv, which never stops it ---- */

static bool mem_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct proc *p = arg;
	struct iovec local = {buf, len}, remote = {(void *)(uintptr_t)addr, len};

	return process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

static size_t mem_readv(void *arg, const uint64_t *addrs, size_t len, void *bufs, size_t n)
{
	const struct proc *p = arg;
	struct iovec local[128], remote[128];
	ssize_t got;

	if (n > 128)
		n = 128;
	for (size_t i = 0; i < n; i++) {
		local[i] = (struct iovec){(char *)bufs + i * len, len};
		remote[i] = (struct iovec){(void *)(uintptr_t)addrs[i], len};
	}
	got = process_vm_readv(p->pid, local, n, remote, n, 0);
	return got < 0 ? 0 : (size_t)got / len;
}

/* ---- finding the metadata ---- */

/* The metadata of object obj, read once; NULL when it has none. */
static const struct kp_v8meta *object_meta(struct kp_session *s, struct kp_node *nd, uint32_t obj,
					   const char *path)
{
	struct kp_v8meta m;
	uint64_t v;
	char why[160];
	int fd;

	if (kp_u64map_get(&nd->objs, obj, &v))
		return v == NO_META ? NULL : nd->metas[v - 1];
	fd = kp_sym_object_fd(s->opts.sym, obj);
	if (fd < 0 || kp_v8meta_read(fd, &m, why, sizeof(why)) < 0) {
		const char *base = path ? strrchr(path, '/') : NULL;

		base = base ? base + 1 : path;
		/* node's own file without usable metadata: said once */
		if (fd >= 0 && base &&
		    (strncmp(base, "node", 4) == 0 || strncmp(base, "libnode", 7) == 0) &&
		    !nd->said_missing) {
			nd->said_missing = true;
			kp_notes_add(
				&s->ev.notes,
				"node: %s has no usable V8 metadata (%s): its JavaScript frames "
				"are named from perf maps and jitdumps only",
				path, why);
		}
		kp_u64map_put(&nd->objs, obj, NO_META);
		return NULL;
	}
	nd->metas = kp_xrealloc(nd->metas, (nd->nmetas + 1) * sizeof(*nd->metas));
	nd->metas[nd->nmetas] = kp_xmalloc(sizeof(m));
	*nd->metas[nd->nmetas] = m;
	kp_u64map_put(&nd->objs, obj, ++nd->nmetas);
	return nd->metas[nd->nmetas - 1];
}

/* Whether process pid has a perf map (/tmp/perf-NSPID.map in its root):
 * then V8 names its code there, as the user asked. Only looked at. */
static bool has_perf_map(pid_t pid)
{
	struct kp_status st;
	struct stat sb;
	char path[64];
	int root;
	bool yes;

	if (kp_status_read(pid, &st) < 0 || (root = kp_root_of(pid)) < 0)
		return false;
	snprintf(path, sizeof(path), "tmp/perf-%d.map", (int)(st.nspid ? st.nspid : pid));
	yes = fstatat(root, path, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode);
	close(root);
	return yes;
}

/* Decides whether p is a node to name live, from a stack with JIT code:
 * an object on it (node's binary or libnode) with the metadata. */
static void decide(struct kp_session *s, struct kp_node *nd, struct proc *p, const uint64_t *user,
		   size_t n)
{
	uint32_t seen[MAX_OBJS];
	size_t nseen = 0;

	if (++p->tries > MAX_TRIES) {
		p->state = NOT_LIVE;
		return;
	}
	for (size_t i = 0; i < n && nseen < MAX_OBJS; i++) {
		struct kp_mapping *m = kp_proctab_find_map(s->procs, p->pid, user[i]);
		const struct kp_v8meta *meta;
		uint32_t obj;
		bool dup = false;

		if (!m || m->kind != KP_MAPPING_FILE || !(obj = kp_sample_map_object(s, m)))
			continue;
		for (size_t j = 0; j < nseen; j++)
			dup |= seen[j] == obj;
		if (dup)
			continue;
		seen[nseen++] = obj;
		meta = object_meta(s, nd, obj, m->path);
		if (!meta)
			continue;
		if (kp_u64map_get(&nd->jitdumps, (uint64_t)p->pid, &(uint64_t){0}) ||
		    has_perf_map(p->pid)) {
			p->state = NOT_LIVE; /* its perf map or jitdump names it */
			return;
		}
		p->obj = obj;
		p->meta = meta;
		p->v8 = kp_v8_new(meta, &(struct kp_v8_mem){mem_read, mem_readv, p});
		p->state = LIVE;
		nd->st.processes++;
		return;
	}
}

static struct proc *proc_of(struct kp_node *nd, pid_t pid)
{
	uint64_t v;
	struct proc *p;

	if (kp_u64map_get(&nd->procs, (uint64_t)pid, &v))
		return (struct proc *)(uintptr_t)v;
	p = kp_xcalloc(1, sizeof(*p));
	p->pid = pid;
	kp_u64map_put(&nd->procs, (uint64_t)pid, (uint64_t)(uintptr_t)p);
	return p;
}

/* The index of perf register reg among the sampled ones, or -1. */
static int reg_index(uint64_t mask, int reg)
{
	if (!(mask >> reg & 1))
		return -1;
	return __builtin_popcountll(mask & ((1ull << reg) - 1));
}

static const char budget_spent[] = "[unknown: v8: naming's time budget spent]";

/* Whether naming has spent its time budget in the window now (t) is in:
 * then the sample's JavaScript frames (code) are named so, counted
 * unknown. */
static bool over_budget(struct kp_node *nd, const struct timespec *t, const uint8_t *code, size_t n,
			const char **names)
{
	uint64_t now = (uint64_t)t->tv_sec * 1000000000ull + (uint64_t)t->tv_nsec;

	if (now - nd->window_start_ns >= BUDGET_WINDOW_NS) {
		nd->window_start_ns = now;
		nd->window_spent_ns = 0;
	}
	if (nd->window_spent_ns < BUDGET_NS)
		return false;
	for (size_t i = 0; i < n; i++)
		if (code[i] == KP_V8_JIT) {
			names[i] = budget_spent;
			nd->st.unknown++;
		}
	return true;
}

void kp_node_names(struct kp_session *s, const struct kp_sample *smp, const uint64_t *user,
		   size_t n, const char **names)
{
	struct kp_node *nd = s->node;
	uint8_t code[KP_SESSION_MAX_FRAMES];
	bool jit = false;
	struct proc *p;
	int ibp, isp;
	struct timespec t0, t1;
	struct kp_v8_stats before, after;
	uint64_t ns, reads;

	for (size_t i = 0; i < n; i++)
		names[i] = NULL;
	if (nd)
		nd->last = NULL;
	if (!nd || smp->pid <= 0 || !smp->regs || !n || n > KP_SESSION_MAX_FRAMES)
		return;
	/* most processes have no JIT code: no map lookup a frame for them */
	if (!kp_proctab_has_anon(s->procs, (pid_t)smp->pid))
		return;
	for (size_t i = 0; i < n; i++) {
		struct kp_mapping *m = kp_proctab_find_map(s->procs, (pid_t)smp->pid, user[i]);

		code[i] = KP_V8_NOT_JS;
		if (m && m->kind == KP_MAPPING_ANON) {
			code[i] = KP_V8_JIT;
			jit = true;
		}
	}
	if (!jit)
		return;
	p = proc_of(nd, (pid_t)smp->pid);
	if (p->state == UNDECIDED)
		decide(s, nd, p, user, n);
	if (p->state != LIVE)
		return;
	ibp = reg_index(s->layout.sample_regs_user, KP_PERF_REG_BP);
	isp = reg_index(s->layout.sample_regs_user, KP_PERF_REG_SP);
	if (ibp < 0 || isp < 0)
		return;
	/* the embedded builtins: the interpreter's frames among them */
	for (size_t i = 0; i < n; i++) {
		struct kp_mapping *m;
		uint64_t off;

		if (code[i] != KP_V8_NOT_JS)
			continue;
		m = kp_proctab_find_map(s->procs, p->pid, user[i]);
		if (!m || m->kind != KP_MAPPING_FILE || m->obj != p->obj)
			continue;
		off = user[i] - m->start + m->pgoff;
		if (!p->meta->builtins_hi ||
		    (off >= p->meta->builtins_lo && off < p->meta->builtins_hi))
			code[i] = KP_V8_BUILTIN;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (over_budget(nd, &t0, code, n, names))
		return;
	nd->last = p->v8;
	kp_v8_stats(p->v8, &before);
	kp_v8_name_frames(
		p->v8,
		&(struct kp_v8_stack){.sp = smp->regs[isp],
				      .fp = smp->regs[ibp],
				      .stack = smp->stack,
				      .stack_len = smp->stack ? (size_t)smp->stack_dyn_size : 0,
				      .ips = user,
				      .code = code,
				      .n = n,
				      /* both CLOCK_MONOTONIC (perf_event.c's clockid) */
				      .time = smp->time,
				      .now = (uint64_t)t0.tv_sec * 1000000000ull +
					     (uint64_t)t0.tv_nsec},
		names);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = (uint64_t)((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec));
	nd->cost[ns / 50 < COST_SLOTS - 1 ? ns / 50 : COST_SLOTS - 1]++;
	nd->st.samples++;
	nd->st.ns_total += ns;
	kp_v8_stats(p->v8, &after);
	reads = after.reads - before.reads;
	nd->window_spent_ns +=
		ns < (reads + 1) * READ_CHARGE_NS ? ns : (reads + 1) * READ_CHARGE_NS;
}
