/* Waits timed in the kernel: the loader and reader (see offcpu_bpf.h). */
#include "profiler/offcpu_bpf.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/xalloc.h"

#ifdef KP_HAVE_BPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/types.h>

#include "profiler/offcpu_bpf_abi.h"

/* profiler/bpf/offcpu.bpf.c, compiled (the build embeds it) */
extern const unsigned char kp_offcpu_bpf_object[];
extern const size_t kp_offcpu_bpf_object_size;

#define RING_PER_CPU	   (4u << 20)
#define RING_PER_CPU_EVERY (16u << 20) /* --switch-freq 0: a stack at every switch */
#define RING_MAX	   (64u << 20)

struct kp_offcpu_bpf {
	struct bpf_object *obj;
	struct bpf_link *links[4];
	size_t nlinks;
	struct ring_buffer *ring;
	struct kp_bpf_live *live; /* the program's .bss, mapped */
	size_t live_len;
	int stats_fd;
	kp_offcpu_bpf_fn fn; /* during a read */
	void *arg;
};

/* libbpf speaks through a print callback: kprof says why in one line
 * itself, so its chatter goes. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

/* A stack at every switch (switch_freq 0) is some 9 KiB each: a second
 * of fdatasync's switches kprof could not read, under load or ASan, filled
 * 4 MiB a CPU and lost stacks and chosen waits' times. */
static size_t ring_size(size_t ncpus, uint64_t switch_freq)
{
	size_t per = switch_freq ? RING_PER_CPU : RING_PER_CPU_EVERY;
	size_t want = per * (ncpus ? ncpus : 1), size = RING_PER_CPU;

	while (size < want && size < RING_MAX)
		size <<= 1;
	return size;
}

/* A global data map's value, where libbpf keeps it (before loading) or
 * where the kernel's map is mapped (after): writable both ways, as a
 * skeleton's are, though libbpf 1.1 returns it const. NULL unless its
 * size is want: a program and loader out of step fail here. */
static void *global_data(struct bpf_map *m, size_t want)
{
	size_t size = 0;
	const void *v = m ? bpf_map__initial_value(m, &size) : NULL;

	return v && size == want ? (void *)(uintptr_t)v : NULL;
}

/* The globals are checked by size against the program's sections: a
 * program and loader out of step fail here, not in the kernel. */
static int set_rodata(struct bpf_object *obj, const struct kp_offcpu_bpf_opts *o, size_t ring)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, ".rodata");
	struct kp_bpf_config *r = global_data(m, sizeof(*r));

	if (!r)
		return -EPROTO;
	r->all_tasks = o->all_tasks;
	r->follow = o->follow;
	r->user_chain = o->user_chain;
	r->copy_stack = o->copy_stack;
	r->min_wait_ns = o->min_wait_ns;
	if (o->switch_freq) {
		r->stack_cost_ns = 1000000000ULL / o->switch_freq;
		if (!r->stack_cost_ns)
			r->stack_cost_ns = 1;
	}
	r->wakeup_bytes = ring / 4;
	return 0;
}

/* The program's .bss, where kprof writes while it runs: mapped from the
 * map's fd (libbpf 1.1 does that only for skeletons). */
static int map_live(struct kp_offcpu_bpf *b)
{
	struct bpf_map *m = bpf_object__find_map_by_name(b->obj, ".bss");
	long page = sysconf(_SC_PAGESIZE);
	void *at;

	if (!m || !global_data(m, sizeof(*b->live)) || page <= 0)
		return -EPROTO;
	b->live_len = ((sizeof(*b->live) + (size_t)page - 1) / (size_t)page) * (size_t)page;
	at = mmap(NULL, b->live_len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (at == MAP_FAILED)
		return -errno;
	b->live = at;
	return 0;
}

static int fill_targets(struct bpf_object *obj, const char *map, const pid_t *ids, size_t n)
{
	int fd = bpf_object__find_map_fd_by_name(obj, map);
	__u8 yes = 1;

	for (size_t i = 0; i < n; i++) {
		__u32 key = (__u32)ids[i];

		if (fd < 0 || bpf_map_update_elem(fd, &key, &yes, BPF_ANY) < 0)
			return -errno ? -errno : -EINVAL;
	}
	return 0;
}

static const char *const progs[] = {"on_switch", "on_exec", "on_fork", "on_exit"};

static int explain(struct kp_diag *d, int err, const char *what)
{
	if (err == -EPERM || err == -EACCES)
		return kp_diag_set(d, err,
				   "%s: not permitted (it needs root, or CAP_BPF and CAP_PERFMON)",
				   what);
	return kp_diag_set(d, err, "%s: %s", what, strerror(-err));
}

int kp_offcpu_bpf_open(struct kp_offcpu_bpf **out, const struct kp_offcpu_bpf_opts *o,
		       struct kp_diag *d)
{
	struct kp_offcpu_bpf *b;
	size_t ring = ring_size(o->ncpus, o->switch_freq);
	int err;

	*out = NULL;
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0)
		return kp_diag_set(d, -ENOTSUP,
				   "the kernel has no BTF (/sys/kernel/btf/vmlinux) to load it on");
	libbpf_set_print(quiet);
	b = kp_xcalloc(1, sizeof(*b));
	b->stats_fd = -1;
	b->obj = bpf_object__open_mem(kp_offcpu_bpf_object, kp_offcpu_bpf_object_size, NULL);
	if (!b->obj) {
		err = -errno;
		b->obj = NULL;
		kp_offcpu_bpf_free(b);
		return explain(d, err, "opening the BPF program");
	}
	err = set_rodata(b->obj, o, ring);
	if (!err)
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(b->obj, "records"),
					       (__u32)ring);
	if (err) {
		kp_offcpu_bpf_free(b);
		return explain(d, err < 0 ? err : -EINVAL, "setting up the BPF program");
	}
	err = bpf_object__load(b->obj);
	if (err) {
		kp_offcpu_bpf_free(b);
		return explain(d, err, "loading the BPF program");
	}
	err = map_live(b);
	if (err) {
		kp_offcpu_bpf_free(b);
		return explain(d, err, "mapping the BPF program's data");
	}
	err = fill_targets(b->obj, "target_tgids", o->tgids, o->ntgids);
	if (!err)
		err = fill_targets(b->obj, "target_tids", o->tids, o->ntids);
	if (err) {
		kp_offcpu_bpf_free(b);
		return explain(d, err, "the BPF program's targets (4096 -p or -t at most)");
	}
	for (size_t i = 0; !err && i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_program *p = bpf_object__find_program_by_name(b->obj, progs[i]);
		struct bpf_link *l = p ? bpf_program__attach(p) : NULL;

		if (!l) {
			err = -errno ? -errno : -ENOENT;
			break;
		}
		b->links[b->nlinks++] = l;
	}
	if (err) {
		kp_offcpu_bpf_free(b);
		return explain(d, err, "attaching the BPF program");
	}
	b->stats_fd = bpf_object__find_map_fd_by_name(b->obj, "cpu");
	*out = b;
	return 0;
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct kp_offcpu_bpf *b = ctx;

	b->fn(b->arg, data, size);
	return 0;
}

void kp_offcpu_bpf_read(struct kp_offcpu_bpf *b, kp_offcpu_bpf_fn fn, void *arg)
{
	if (!b->ring) {
		int fd = bpf_object__find_map_fd_by_name(b->obj, "records");

		b->ring = ring_buffer__new(fd, on_record, b, NULL);
		if (!b->ring)
			return;
	}
	b->fn = fn;
	b->arg = arg;
	ring_buffer__consume(b->ring);
}

int kp_offcpu_bpf_fd(const struct kp_offcpu_bpf *b)
{
	int fd = bpf_object__find_map_fd_by_name(b->obj, "records");

	/* a ring buffer map's fd polls readable when it holds data: the
	 * program wakes it only past wakeup_bytes (BPF_RB_NO_WAKEUP else) */
	return fd;
}

void kp_offcpu_bpf_exec(struct kp_offcpu_bpf *b, pid_t tgid)
{
	__atomic_store_n(&b->live->exec_tgid, (__u32)tgid, __ATOMIC_RELEASE);
}

int kp_offcpu_bpf_finish(struct kp_offcpu_bpf *b, uint64_t end_ns, kp_offcpu_bpf_fn fn, void *arg)
{
	struct bpf_program *p = bpf_object__find_program_by_name(b->obj, "flush_all");
	size_t have = 0, want = sizeof(struct kp_bpf_rec_head);
	union {
		struct kp_bpf_rec_head h;
		struct kp_bpf_waits_rec waits;
		struct kp_bpf_chosen_rec chosen;
	} rec;
	struct bpf_link *link;
	int fd, err = 0;
	ssize_t n = 0;

	if (!p)
		return -EPROTO;
	/* The programs stay attached until the sums are read: a thread that
	 * exits meanwhile (the command, stopped by kprof's signal) writes its
	 * last sums at its exit, which the iterator would not find. The ring
	 * first, so that the sums a stack record carries come before those
	 * written after it. */
	kp_offcpu_bpf_read(b, fn, arg);
	__atomic_store_n(&b->live->end_ns, end_ns, __ATOMIC_RELEASE);
	link = bpf_program__attach_iter(p, NULL);
	fd = link ? bpf_iter_create(bpf_link__fd(link)) : -errno;
	/* whole records, however read() splits them: the head, then the rest
	 * its size says (a size out of bounds ends the read: out of step) */
	while (fd >= 0 && ((n = read(fd, (char *)&rec + have, want - have)) > 0 ||
			   (n < 0 && errno == EINTR))) {
		if (n < 0)
			continue;
		have += (size_t)n;
		if (have == sizeof(rec.h) && want == sizeof(rec.h)) {
			if (rec.h.size < sizeof(rec.h) || rec.h.size > sizeof(rec)) {
				err = -EPROTO;
				break;
			}
			want = rec.h.size;
		}
		if (have == want) {
			fn(arg, &rec, have);
			have = 0;
			want = sizeof(rec.h);
		}
	}
	if (fd < 0)
		err = fd;
	else if (n < 0 && !err)
		err = -errno;
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	/* what exited while the iterator ran; then nothing more is timed,
	 * and the program costs nothing while kprof names and writes */
	kp_offcpu_bpf_read(b, fn, arg);
	for (size_t i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	b->nlinks = 0;
	return err;
}

void kp_offcpu_bpf_stats(const struct kp_offcpu_bpf *b, struct kp_offcpu_bpf_stats *st)
{
	struct kp_bpf_cpu *per;
	uint64_t sum[KP_BPF_NSTATS] = {0};
	int ncpus = libbpf_num_possible_cpus();
	__u32 zero = 0;

	memset(st, 0, sizeof(*st));
	if (b->stats_fd < 0 || ncpus <= 0)
		return;
	per = kp_xcalloc((size_t)ncpus, sizeof(*per));
	if (bpf_map_lookup_elem(b->stats_fd, &zero, per) == 0)
		for (int c = 0; c < ncpus; c++)
			for (int k = 0; k < KP_BPF_NSTATS; k++)
				sum[k] += per[c].stats[k];
	free(per);
	st->short_waits = sum[KP_BPF_ST_SHORT];
	st->stacks = sum[KP_BPF_ST_STACKS];
	st->rate = sum[KP_BPF_ST_RATE];
	st->lost = sum[KP_BPF_ST_LOST];
	st->lost_waits = sum[KP_BPF_ST_LOST_WAITS];
	st->lost_ns = sum[KP_BPF_ST_LOST_NS];
	st->open = sum[KP_BPF_ST_OPEN];
	st->unpaired = sum[KP_BPF_ST_UNPAIRED];
	st->chosen = sum[KP_BPF_ST_CHOSEN];
	st->lost_chosen = sum[KP_BPF_ST_LOST_CHOSEN];
}

void kp_offcpu_bpf_free(struct kp_offcpu_bpf *b)
{
	if (!b)
		return;
	ring_buffer__free(b->ring);
	if (b->live)
		munmap(b->live, b->live_len);
	for (size_t i = 0; i < b->nlinks; i++)
		bpf_link__destroy(b->links[i]);
	bpf_object__close(b->obj);
	free(b);
}

#else /* built without libbpf */

struct kp_offcpu_bpf {
	int unused;
};

int kp_offcpu_bpf_open(struct kp_offcpu_bpf **out, const struct kp_offcpu_bpf_opts *o,
		       struct kp_diag *d)
{
	(void)o;
	*out = NULL;
	return kp_diag_set(d, -ENOSYS, "this kprof was built without BPF (libbpf-dev and clang)");
}

void kp_offcpu_bpf_free(struct kp_offcpu_bpf *b)
{
	free(b);
}

int kp_offcpu_bpf_fd(const struct kp_offcpu_bpf *b)
{
	(void)b;
	return -1;
}

void kp_offcpu_bpf_exec(struct kp_offcpu_bpf *b, pid_t tgid)
{
	(void)b;
	(void)tgid;
}

void kp_offcpu_bpf_read(struct kp_offcpu_bpf *b, kp_offcpu_bpf_fn fn, void *arg)
{
	(void)b;
	(void)fn;
	(void)arg;
}

int kp_offcpu_bpf_finish(struct kp_offcpu_bpf *b, uint64_t end_ns, kp_offcpu_bpf_fn fn, void *arg)
{
	(void)b;
	(void)end_ns;
	(void)fn;
	(void)arg;
	return -ENOSYS;
}

void kp_offcpu_bpf_stats(const struct kp_offcpu_bpf *b, struct kp_offcpu_bpf_stats *st)
{
	(void)b;
	memset(st, 0, sizeof(*st));
}

#endif
