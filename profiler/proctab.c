#include "profiler/proctab.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procfs/maps.h"
#include "procfs/tasks.h"
#include "util/u64map.h"
#include "util/xalloc.h"
#include "util/search.h"

struct proc {
	pid_t pid;
	uint32_t comm;
	struct kp_mapping *maps; /* sorted by start, non-overlapping */
	size_t nmaps, cap;
	/* whether a map is anonymous or a memfd (JIT code may be there),
	 * worked out again after the maps change */
	bool anon_known, anon;
};

struct kp_proctab {
	struct kp_strtab *strings;
	struct kp_u64map procs;	  /* pid -> struct proc * */
	struct kp_u64map threads; /* tid -> comm id | (uint64_t)pid << 32 */
	uint32_t unknown_comm;
	size_t nseen;
	kp_proctab_map_fn on_map;
	void *on_map_arg;
};

struct kp_proctab *kp_proctab_new(struct kp_strtab *strings)
{
	struct kp_proctab *pt = kp_xcalloc(1, sizeof(*pt));

	pt->strings = strings;
	kp_u64map_init(&pt->procs);
	kp_u64map_init(&pt->threads);
	pt->unknown_comm = kp_strtab_intern(strings, "[unknown]", 9);
	return pt;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	free(p->maps);
	free(p);
}

void kp_proctab_free(struct kp_proctab *pt)
{
	if (!pt)
		return;
	{
		size_t pos = 0;
		uint64_t pid, v;

		while (kp_u64map_next(&pt->procs, &pos, &pid, &v))
			proc_free((struct proc *)(uintptr_t)v);
	}
	kp_u64map_fini(&pt->procs);
	kp_u64map_fini(&pt->threads);
	free(pt);
}

/* The map key of a pid or tid: as the kernel's u32, so that -1 (which
 * the kernel reports for a task that is no longer alive or lives in
 * another pid namespace) and -2 never become the map's reserved keys. */
static uint64_t key(pid_t id)
{
	return (uint32_t)id;
}

static struct proc *proc_get(const struct kp_proctab *pt, pid_t pid)
{
	uint64_t v;

	return kp_u64map_get(&pt->procs, key(pid), &v) ? (struct proc *)(uintptr_t)v : NULL;
}

/* A new process entry for pid, replacing any old one (pid reuse). */
static struct proc *proc_new(struct kp_proctab *pt, pid_t pid)
{
	struct proc *p = kp_xcalloc(1, sizeof(*p)), *old = proc_get(pt, pid);

	proc_free(old);
	p->pid = pid;
	p->comm = pt->unknown_comm;
	kp_u64map_put(&pt->procs, key(pid), (uint64_t)(uintptr_t)p);
	pt->nseen++;
	return p;
}

static void thread_set(struct kp_proctab *pt, pid_t pid, pid_t tid, uint32_t comm)
{
	kp_u64map_put(&pt->threads, key(tid), comm | (uint64_t)(uint32_t)pid << 32);
}

bool kp_proctab_has(const struct kp_proctab *pt, pid_t pid)
{
	return proc_get(pt, pid) != NULL;
}

void kp_proctab_comm(struct kp_proctab *pt, pid_t pid, pid_t tid, const char *comm, bool exec)
{
	uint32_t id = kp_strtab_intern(pt->strings, comm, strlen(comm));
	struct proc *p = proc_get(pt, pid);

	if (!p)
		p = proc_new(pt, pid);
	if (exec) {
		p->nmaps = 0; /* the old image is gone; MMAP2s of the new one follow */
		p->anon_known = false;
	}
	if (pid == tid || exec)
		p->comm = id;
	thread_set(pt, pid, tid, id);
}

void kp_proctab_fork(struct kp_proctab *pt, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid)
{
	uint64_t v;
	uint32_t comm = pt->unknown_comm;
	struct proc *parent = proc_get(pt, ppid), *p;

	if (kp_u64map_get(&pt->threads, key(ptid), &v))
		comm = (uint32_t)v;
	else if (parent)
		comm = parent->comm;
	if (pid == ppid && parent) { /* a new thread */
		thread_set(pt, pid, tid, comm);
		return;
	}
	p = proc_new(pt, pid);
	p->comm = comm;
	if (parent && parent != p && parent->nmaps) {
		p->maps = kp_xmalloc(parent->nmaps * sizeof(*p->maps));
		memcpy(p->maps, parent->maps, parent->nmaps * sizeof(*p->maps));
		p->nmaps = p->cap = parent->nmaps;
		for (size_t i = 0; i < p->nmaps; i++)
			p->maps[i].pid = pid;
	}
	thread_set(pt, pid, tid, comm);
}

bool kp_proctab_exit(struct kp_proctab *pt, pid_t pid, pid_t tid)
{
	kp_u64map_del(&pt->threads, key(tid));
	if (pid != tid)
		return false;
	proc_free(proc_get(pt, pid));
	kp_u64map_del(&pt->procs, key(pid));
	return true;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void kp_proctab_forget_objects(struct kp_proctab *pt, const uint32_t *objs, size_t n)
{
	size_t pos = 0;
	uint64_t pid, v;

	if (!n)
		return;
	while (kp_u64map_next(&pt->procs, &pos, &pid, &v)) {
		struct proc *p = (struct proc *)(uintptr_t)v;

		for (size_t i = 0; i < p->nmaps; i++)
			if (p->maps[i].obj &&
			    bsearch(&p->maps[i].obj, objs, n, sizeof(*objs), cmp_u32))
				p->maps[i].obj = 0;
	}
}

/* Index of the first mapping that ends after addr. */
static size_t first_ending_after(const struct proc *p, uint64_t addr)
{
	return KP_FIRST_ABOVE(p->maps, p->nmaps, end, addr);
}

static void insert_at(struct proc *p, size_t i, const struct kp_mapping *m)
{
	kp_xgrow(&p->maps, &p->cap, p->nmaps + 1, sizeof(*p->maps));
	memmove(p->maps + i + 1, p->maps + i, (p->nmaps - i) * sizeof(*p->maps));
	p->maps[i] = *m;
	p->nmaps++;
}

void kp_proctab_mmap(struct kp_proctab *pt, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint32_t maj, uint32_t min, uint64_t ino, const char *path,
		     const uint8_t *build_id, size_t build_id_size)
{
	struct proc *p = proc_get(pt, pid);
	struct kp_mapping m = {.start = start,
			       .end = start + len,
			       .pgoff = pgoff,
			       .ino = ino,
			       .maj = maj,
			       .min = min,
			       .pid = pid,
			       .exec = true};
	size_t i;

	if (!len || m.end < start)
		return;
	if (!p)
		p = proc_new(pt, pid);
	p->anon_known = false;
	m.path = kp_strtab_str(pt->strings, kp_strtab_intern(pt->strings, path, strlen(path)));
	m.kind = (uint8_t)kp_mapping_kind_of(path);
	if (build_id && build_id_size && build_id_size <= sizeof(m.build_id)) {
		memcpy(m.build_id, build_id, build_id_size);
		m.build_id_size = (uint8_t)build_id_size;
	}
	/* Like mmap(MAP_FIXED): the new range replaces what it overlaps; the
	 * parts of old mappings outside it stay. */
	i = first_ending_after(p, m.start);
	while (i < p->nmaps && p->maps[i].start < m.end) {
		struct kp_mapping old = p->maps[i];

		memmove(p->maps + i, p->maps + i + 1, (p->nmaps - i - 1) * sizeof(*p->maps));
		p->nmaps--;
		if (old.start < m.start) {
			struct kp_mapping left = old;

			left.end = m.start;
			insert_at(p, i++, &left);
		}
		if (old.end > m.end) {
			struct kp_mapping right = old;

			right.pgoff += m.end - old.start;
			right.start = m.end;
			insert_at(p, i, &right);
			break;
		}
	}
	insert_at(p, first_ending_after(p, m.start), &m);
	if (pt->on_map)
		pt->on_map(pt->on_map_arg, &m);
}

void kp_proctab_on_map(struct kp_proctab *pt, kp_proctab_map_fn fn, void *arg)
{
	pt->on_map = fn;
	pt->on_map_arg = arg;
}

uint32_t kp_proctab_comm_of(struct kp_proctab *pt, pid_t pid, pid_t tid)
{
	uint64_t v;
	struct proc *p;

	if (kp_u64map_get(&pt->threads, key(tid), &v) && (pid_t)(v >> 32) == pid)
		return (uint32_t)v;
	p = proc_get(pt, pid);
	return p ? p->comm : pt->unknown_comm;
}

bool kp_proctab_has_anon(struct kp_proctab *pt, pid_t pid)
{
	struct proc *p = proc_get(pt, pid);

	if (!p)
		return false;
	if (!p->anon_known) {
		p->anon = false;
		for (size_t i = 0; i < p->nmaps && !p->anon; i++)
			p->anon = p->maps[i].kind == KP_MAPPING_ANON ||
				  p->maps[i].kind == KP_MAPPING_MEMFD;
		p->anon_known = true;
	}
	return p->anon;
}

struct kp_mapping *kp_proctab_find_map(struct kp_proctab *pt, pid_t pid, uint64_t addr)
{
	struct proc *p = proc_get(pt, pid);
	size_t i;

	if (!p)
		return NULL;
	i = first_ending_after(p, addr);
	if (i < p->nmaps && p->maps[i].start <= addr)
		return &p->maps[i];
	return NULL;
}

bool kp_proctab_overlaps_file(struct kp_proctab *pt, pid_t pid, uint64_t start, uint64_t end)
{
	struct proc *p = proc_get(pt, pid);

	for (size_t i = p ? first_ending_after(p, start) : 0;
	     p && i < p->nmaps && p->maps[i].start < end; i++)
		if (p->maps[i].kind == KP_MAPPING_FILE || p->maps[i].kind == KP_MAPPING_VDSO)
			return true;
	return false;
}

size_t kp_proctab_nprocs_seen(const struct kp_proctab *pt)
{
	return pt->nseen;
}

struct synth_ctx {
	struct kp_proctab *pt;
	pid_t pid;
};

static void synth_map(void *arg, const struct kp_mapping *e)
{
	struct synth_ctx *c = arg;

	kp_proctab_mmap(c->pt, c->pid, e->start, e->end - e->start, e->pgoff, e->maj, e->min,
			e->ino, e->path, NULL, 0);
}

int kp_proctab_synthesize(struct kp_proctab *pt, pid_t pid)
{
	char comm[64];
	struct synth_ctx ctx = {pt, pid};
	struct proc *p;
	pid_t *tids;
	size_t ntids;
	int err;

	err = kp_tasks_comm(pid, 0, comm, sizeof(comm));
	if (err < 0)
		return err;
	p = proc_new(pt, pid);
	p->comm = kp_strtab_intern(pt->strings, comm, strlen(comm));
	kp_maps_read_pid(pid, synth_map, &ctx);
	if (kp_tasks_threads(pid, &tids, &ntids) < 0) {
		thread_set(pt, pid, pid, p->comm);
		return 0;
	}
	for (size_t i = 0; i < ntids; i++)
		if (kp_tasks_comm(pid, tids[i], comm, sizeof(comm)) == 0)
			thread_set(pt, pid, tids[i],
				   kp_strtab_intern(pt->strings, comm, strlen(comm)));
	free(tids);
	return 0;
}

size_t kp_proctab_synthesize_all(struct kp_proctab *pt)
{
	pid_t *pids;
	size_t npids = kp_tasks_processes(&pids), n = 0;

	for (size_t i = 0; i < npids; i++)
		if (kp_proctab_synthesize(pt, pids[i]) == 0)
			n++;
	free(pids);
	return n;
}
