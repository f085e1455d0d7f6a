/* JIT perf maps. The file sits in world-writable /tmp, so like perf we use
 * it only when it is a regular file (O_NOFOLLOW, fstat) owned by the
 * process's user or root. Opening with O_NONBLOCK keeps a FIFO planted
 * under that name from hanging us. While recording a map is only opened
 * and checked (kept open, so a map deleted before the exit is still
 * there); it is read when its frames are resolved, for the addresses the
 * recorder hinted, since a map can be gigabytes and reading it while
 * recording would let the ring buffers overflow.
 *
 * A process's jitdump (jitdump.c parses it) is found by its mapping, not
 * by a path in /tmp: opened through /proc/PID/map_files (else its path
 * under the process's root, O_NOFOLLOW), checked (a regular file, the
 * inode mapped, owned by the process's user), kept open and read as it
 * grows: a few MiB a round while recording (its records skip the code
 * bytes, which are most of the file), the rest at the process's exit or
 * at the first lookup. Its names win over the perf map's. */
#include "symbolize/jit.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "procfs/root.h"
#include "procfs/status.h"
#include "symbolize/idmap.h"
#include "symbolize/jitdump.h"
#include "symbolize/perfmap.h"
#include "util/hash.h"
#include "util/search.h"
#include "util/strtab.h"
#include "util/xalloc.h"

/* File bytes read at most per poll (a round of the recorder's, 100 ms),
 * all jitdumps together and each: 80 MiB/s at most, which keeps up with
 * any JIT, while a round still takes milliseconds. */
#define ROUND_BUDGET ((uint64_t)8 << 20)
/* File bytes read at most per jitdump when names are asked (a window's
 * end, or the run's): what the polls have not read yet, bounded so that
 * a window closes on time; the rest is read by later polls. */
#define LOOKUP_BUDGET ((uint64_t)256 << 20)
/* What a jitdump's state may take (its loads' ranges, lines, unwinding
 * info: names are read from the file when sampled), and all of them
 * together: past it a file is read no further, and a note says so. 64
 * MiB is about 500,000 loads. */
#define DUMP_MAX_BYTES	((uint64_t)64 << 20)
#define TOTAL_MAX_BYTES ((uint64_t)128 << 20)

/* A jitdump file: the file (checked, kept open) and what it says. One
 * per file (device and inode), however many processes map it. */
struct dump {
	struct kp_jitdump jd;
	struct kp_strtab *strs; /* the files its lines hold, freed with it */
	struct kp_jittab *jt;
	pid_t pid; /* a live process mapping it (for keep), else the last one */
	dev_t dev; /* the file's identity */
	ino_t ino;
	uint32_t live;	/* live processes mapping it */
	uint32_t users; /* jits pointing at it, live or not */
	int fd;
	bool done;	 /* read as far as names were asked (this window) */
	bool noted;	 /* its refusal or damage said */
	bool cut;	 /* read no further though not whole: counted, said */
	size_t bad_note; /* notes slot for skipped records */
	char shown[128]; /* its name, for notes */
};

struct jit {
	pid_t pid;
	bool exited;	      /* a later get(pid) is another process */
	int rootfd;	      /* O_PATH of /proc/PID/root, or -1 */
	int mapfd;	      /* the map, checked, kept open from when it is first seen */
	uint64_t last_try_ms; /* when opening the map was last tried */
	char inner_path[48];  /* "/tmp/perf-NSPID.map" as the process sees it */
	uid_t uids[4];
	bool have_uids;
	size_t bad_note; /* notes slot for the malformed-lines note, 0: none */
	uint64_t *want;	 /* sorted, distinct: the addresses to name */
	size_t nwant, want_cap;
	bool stale;	       /* want grew since map was read */
	bool had_map;	       /* a map was found when last read */
	struct kp_perfmap map; /* the names of want, as last read */
	struct dump *dump;     /* its jitdump, which names what it covers first; or NULL */
};

struct kp_jittab {
	struct jit *jits; /* id = index + 1 */
	size_t n, cap;
	struct kp_idmap by_pid;
	struct kp_notes *notes;
	uint64_t reads;	     /* passes over map files */
	struct dump **dumps; /* every jitdump open, once each */
	size_t ndumps, dumps_cap, next_poll;
	uint64_t dumps_cut;	   /* jitdumps read no further though not whole */
	uint64_t dump_opens;	   /* files opened to be read (one per file) */
	struct kp_notes cut_notes; /* the notes of jitdumps read in part */
	struct kp_strtab *names;   /* names made from jitdumps for lookups (a window's) */
	kp_jit_code_fn is_jit;	   /* the caller's view of the process's JIT code */
	void *is_jit_arg;
};

static int open_map(struct kp_jittab *jt, struct jit *j, struct stat *st);
static uint64_t now_ms(void);

static void dump_read(struct kp_jittab *jt, struct dump *d, uint64_t budget);
static void dump_unmapped(struct kp_jittab *jt, struct dump *d, pid_t pid);
static void dump_release(struct kp_jittab *jt, struct dump *d);
static const char *dump_lookup(struct kp_jittab *jt, struct jit *j, uint64_t addr);

static void dump_free(struct dump *d)
{
	if (!d)
		return;
	kp_jitdump_fini(&d->jd);
	kp_strtab_free(d->strs);
	if (d->fd >= 0)
		close(d->fd);
	free(d);
}

struct kp_jittab *kp_jit_new(struct kp_notes *notes)
{
	struct kp_jittab *jt = kp_xcalloc(1, sizeof(*jt));

	jt->notes = notes;
	jt->names = kp_strtab_new();
	return jt;
}

void kp_jit_free(struct kp_jittab *jt)
{
	if (!jt)
		return;
	for (size_t i = 0; i < jt->n; i++) {
		if (jt->jits[i].rootfd >= 0)
			close(jt->jits[i].rootfd);
		if (jt->jits[i].mapfd >= 0)
			close(jt->jits[i].mapfd);
		kp_perfmap_fini(&jt->jits[i].map);
		free(jt->jits[i].want);
	}
	for (size_t i = 0; i < jt->ndumps; i++)
		dump_free(jt->dumps[i]);
	free(jt->dumps);
	kp_notes_fini(&jt->cut_notes);
	free(jt->jits);
	kp_strtab_free(jt->names);
	kp_idmap_fini(&jt->by_pid);
	free(jt);
}

struct pid_query {
	const struct kp_jittab *jt;
	pid_t pid;
};

static bool live_pid_eq(void *ctx, uint32_t id)
{
	const struct pid_query *q = ctx;
	const struct jit *j = &q->jt->jits[id - 1];

	return j->pid == q->pid && !j->exited;
}

static uint32_t find_live(struct kp_jittab *jt, pid_t pid)
{
	struct pid_query q = {jt, pid};

	return kp_idmap_find(&jt->by_pid, kp_hash_u64((uint64_t)pid), live_pid_eq, &q);
}

uint32_t kp_jit_get(struct kp_jittab *jt, pid_t pid)
{
	struct kp_status st;
	struct jit *j;
	uint32_t id = find_live(jt, pid);

	if (id) {
		j = &jt->jits[id - 1];
		/* the map may appear later: look again, at most ten times a second */
		if (j->mapfd < 0 && now_ms() - j->last_try_ms >= 100) {
			struct stat mst;
			int fd = open_map(jt, j, &mst);

			if (fd >= 0)
				close(fd);
		}
		return id;
	}
	kp_xgrow(&jt->jits, &jt->cap, jt->n + 1, sizeof(*jt->jits));
	j = &jt->jits[jt->n++];
	memset(j, 0, sizeof(*j));
	id = (uint32_t)jt->n;
	j->pid = pid;
	j->rootfd = kp_root_of(pid);
	if (j->rootfd < 0)
		j->rootfd = -1;
	if (kp_status_read(pid, &st) == 0) {
		memcpy(j->uids, st.uids, sizeof(j->uids));
		j->have_uids = st.have_uids;
	} else {
		st.nspid = 0;
	}
	/* the JIT names the file after the pid it sees in its own namespace */
	snprintf(j->inner_path, sizeof(j->inner_path), "/tmp/perf-%d.map",
		 (int)(st.nspid > 0 ? st.nspid : pid));
	j->mapfd = -1;
	kp_idmap_put(&jt->by_pid, kp_hash_u64((uint64_t)pid), id);
	{
		struct stat mst;
		int fd = open_map(jt, j, &mst);

		if (fd >= 0)
			close(fd);
	}
	return id;
}

static bool owner_ok(const struct jit *j, uid_t owner)
{
	if (owner == 0)
		return true;
	if (!j->have_uids)
		return owner == geteuid(); /* process gone before we saw it: perf's rule */
	for (int i = 0; i < 4; i++) {
		if (j->uids[i] == owner)
			return true;
	}
	return false;
}

/* Where the user should look, in our own namespace. */
static void shown_path(const struct jit *j, char *buf, size_t size)
{
	if (j->rootfd >= 0 && !kp_root_is_ours(j->rootfd))
		kp_root_name(j->pid, j->inner_path, buf, size);
	else
		snprintf(buf, size, "%s", j->inner_path);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Opens the map by its path and checks it (regular file, owner); a map
 * that passes is also kept open in j->mapfd, so it can still be read when
 * the JIT deletes it before exiting. When the path is gone, the kept
 * descriptor stands in. Returns an fd the caller closes, or -1. */
static int open_map(struct kp_jittab *jt, struct jit *j, struct stat *st)
{
	char shown[128];
	int fd;

	j->last_try_ms = now_ms();
	if (j->rootfd >= 0)
		fd = kp_root_open_in(j->rootfd, j->inner_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	else
		fd = kp_root_open(j->inner_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd == -ELOOP) {
		shown_path(j, shown, sizeof(shown));
		kp_notes_add(jt->notes, "ignored %s: it is a symbolic link", shown);
		return -1;
	}
	if (fd < 0) {
		/* not written yet, or deleted: the kept one, if any */
		if (j->mapfd < 0 || fstat(j->mapfd, st) < 0)
			return -1;
		return fcntl(j->mapfd, F_DUPFD_CLOEXEC, 0);
	}
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		shown_path(j, shown, sizeof(shown));
		kp_notes_add(jt->notes, "ignored %s: not a regular file", shown);
		close(fd);
		return -1;
	}
	if (!owner_ok(j, st->st_uid)) {
		shown_path(j, shown, sizeof(shown));
		kp_notes_add(jt->notes, "ignored %s: owned by uid %u, not the process's user",
			     shown, (unsigned)st->st_uid);
		close(fd);
		return -1;
	}
	if (!j->exited) {
		if (j->mapfd >= 0)
			close(j->mapfd);
		j->mapfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	}
	return fd;
}

/* The descriptor to read the map through (caller closes), or -1. A live
 * process's map is looked up by its path again (checked, and kept as
 * mapfd); an exited one's is the file kept when it exited, never what the
 * path leads to now (another process may have the pid). */
static int map_fd(struct kp_jittab *jt, struct jit *j)
{
	struct stat st;

	if (!j->exited)
		return open_map(jt, j, &st);
	return j->mapfd >= 0 ? fcntl(j->mapfd, F_DUPFD_CLOEXEC, 0) : -1;
}

/* Reads the map for the wanted addresses: streamed, every line read, only
 * the names of these addresses kept (perfmap.h). */
static void read_map(struct kp_jittab *jt, struct jit *j)
{
	char shown[128];
	int fd = map_fd(jt, j), err;

	j->stale = false;
	j->had_map = fd >= 0;
	if (fd < 0) {
		kp_perfmap_parse(&j->map, NULL, 0, j->want, j->nwant, 0); /* names nothing */
		return;
	}
	err = kp_perfmap_read(&j->map, fd, j->want, j->nwant, 0);
	close(fd);
	jt->reads++;
	shown_path(j, shown, sizeof(shown));
	if (err < 0)
		kp_notes_add(jt->notes, "cannot read all of %s: %s", shown,
			     err == -ENODATA ? "it shrank while being read" : strerror(-err));
	if (j->map.bad_lines)
		kp_notes_update(jt->notes, &j->bad_note, "%s: skipped %llu malformed line%s", shown,
				(unsigned long long)j->map.bad_lines,
				j->map.bad_lines == 1 ? "" : "s");
}

/* Adds addrs[0..n) to the addresses j's map is read for. */
static void want_add(struct jit *j, const uint64_t *addrs, size_t n)
{
	size_t k = 0;

	if (!n)
		return;
	kp_xgrow(&j->want, &j->want_cap, j->nwant + n, sizeof(*j->want));
	memcpy(j->want + j->nwant, addrs, n * sizeof(*addrs));
	j->nwant += n;
	qsort(j->want, j->nwant, sizeof(*j->want), kp_u64_cmp);
	for (size_t i = 0; i < j->nwant; i++)
		if (!k || j->want[k - 1] != j->want[i])
			j->want[k++] = j->want[i];
	j->nwant = k;
	j->stale = true;
}

void kp_jit_exit(struct kp_jittab *jt, pid_t pid)
{
	uint32_t id = find_live(jt, pid);
	struct stat st;
	struct jit *j;
	int fd;

	if (!id)
		return;
	j = &jt->jits[id - 1];
	/* not read here (this runs while recording): opened and checked now,
	 * while the path still leads to this process's map, and kept */
	fd = open_map(jt, j, &st);
	if (fd >= 0)
		close(fd);
	j->exited = true;
	if (j->dump)
		dump_unmapped(jt, j->dump, j->pid);
}

void kp_jit_next_window(struct kp_jittab *jt)
{
	for (size_t i = 0; i < jt->n; i++) {
		struct jit *j = &jt->jits[i];

		/* the names of the last window's addresses: the next window
		 * hints its own, and the map is read again for them */
		kp_perfmap_fini(&j->map);
		j->nwant = 0;
		j->stale = false;
		if (!j->exited) {
			/* read on at the next window's lookups, and polled */
			if (j->dump)
				j->dump->done = false;
			continue;
		}
		/* named with the window it exited in: nothing will ask again */
		if (j->rootfd >= 0)
			close(j->rootfd);
		if (j->mapfd >= 0)
			close(j->mapfd);
		j->rootfd = j->mapfd = -1;
		free(j->want);
		j->want = NULL;
		j->want_cap = 0;
		if (j->dump)
			dump_release(jt, j->dump);
		j->dump = NULL;
	}
	/* the names handed out: copied into the window's profile by now */
	kp_strtab_free(jt->names);
	jt->names = kp_strtab_new();
}

void kp_jit_hint(struct kp_jittab *jt, uint32_t id, const uint64_t *addrs, size_t n)
{
	if (id >= 1 && id <= jt->n)
		want_add(&jt->jits[id - 1], addrs, n);
}

const char *kp_jit_lookup(struct kp_jittab *jt, uint32_t id, uint64_t addr)
{
	const char *name;
	struct jit *j;

	if (id < 1 || id > jt->n)
		return NULL;
	j = &jt->jits[id - 1];
	/* the jitdump first: it knows more (lines, moves) */
	if ((name = dump_lookup(jt, j, addr)))
		return name;
	if (!j->stale && kp_perfmap_find(&j->map, addr, &name))
		return name;
	/* an address not hinted: the map is read again, for it too */
	want_add(j, &addr, 1);
	read_map(jt, j);
	return kp_perfmap_find(&j->map, addr, &name) ? name : NULL;
}

uint64_t kp_jit_bad_lines(const struct kp_jittab *jt)
{
	uint64_t n = 0;

	for (size_t i = 0; i < jt->n; i++)
		n += jt->jits[i].map.bad_lines;
	return n;
}

uint64_t kp_jit_reads(const struct kp_jittab *jt)
{
	return jt->reads;
}

pid_t kp_jit_pid(const struct kp_jittab *jt, uint32_t id)
{
	return id >= 1 && id <= jt->n ? jt->jits[id - 1].pid : 0;
}

bool kp_jit_had_map(const struct kp_jittab *jt, uint32_t id)
{
	return id >= 1 && id <= jt->n && (jt->jits[id - 1].had_map || jt->jits[id - 1].dump);
}

/* ---- jitdumps ---- */

void kp_jit_set_code_check(struct kp_jittab *jt, kp_jit_code_fn fn, void *arg)
{
	jt->is_jit = fn;
	jt->is_jit_arg = arg;
}

bool kp_jit_is_dump_path(const char *path)
{
	const char *base = strrchr(path, '/'), *p;

	base = base ? base + 1 : path;
	if (strncmp(base, "jit-", 4) != 0)
		return false;
	for (p = base + 4; *p >= '0' && *p <= '9'; p++)
		;
	return p > base + 4 && strcmp(p, ".dump") == 0;
}

/* Loads in the process's file mappings (V8's embedded builtins, in node's
 * binary: named from its symbols) are not JIT code. */
static bool dump_keep(void *arg, uint64_t start, uint64_t end)
{
	const struct dump *d = arg;

	return !d->jt->is_jit || d->jt->is_jit(d->jt->is_jit_arg, d->pid, start, end);
}

/* The jitdump file behind a mapping, opened as the process's own: the
 * very file mapped (/proc/PID/map_files), else its path under the
 * process's root without following a link at its end; it must be a
 * regular file (O_NONBLOCK: a FIFO does not hang us), the inode mapped
 * when the record gave one, and owned by the process's user. Returns an
 * fd or -1 (a note says why). */
static int dump_open(struct kp_jittab *jt, const struct jit *j, const struct kp_mapping *m,
		     const char *shown)
{
	struct stat st;
	int fd;
	bool owner = false;

	fd = kp_root_open_map_file(j->pid, m->start, m->end, O_RDONLY | O_NONBLOCK);
	if (fd < 0 && j->rootfd >= 0)
		fd = kp_root_open_in(j->rootfd, m->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (m->ino &&
	     (st.st_ino != m->ino || major(st.st_dev) != m->maj || minor(st.st_dev) != m->min))) {
		kp_notes_add(jt->notes, "ignored %s: not the regular file the process mapped",
			     shown);
		close(fd);
		return -1;
	}
	for (int i = 0; j->have_uids && i < 4; i++)
		owner |= st.st_uid == j->uids[i];
	if (!owner) {
		kp_notes_add(jt->notes, "ignored %s: owned by uid %u, not the process's user",
			     shown, (unsigned)st.st_uid);
		close(fd);
		return -1;
	}
	return fd;
}

/* Whether a signal that stops kprof is waiting (the recorder blocks them
 * and reads them through a signalfd between rounds): a long read ends
 * then, and the recorder sees it within a buffer's parsing. */
static bool stop_pending(void)
{
	static const int stops[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	sigset_t set;

	if (sigpending(&set) < 0)
		return false;
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		if (sigismember(&set, stops[i]) == 1)
			return true;
	return false;
}

static struct dump *dump_find(struct kp_jittab *jt, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < jt->ndumps; i++)
		if (jt->dumps[i]->dev == dev && jt->dumps[i]->ino == ino)
			return jt->dumps[i];
	return NULL;
}

void kp_jit_dump_mapped(struct kp_jittab *jt, const struct kp_mapping *m)
{
	uint32_t id = kp_jit_get(jt, m->pid);
	struct jit *j = &jt->jits[id - 1];
	struct dump *d;
	struct stat st;
	char shown[128];
	int fd;

	if (j->dump)
		return; /* the first one the process mapped */
	if (j->rootfd >= 0 && !kp_root_is_ours(j->rootfd))
		kp_root_name(j->pid, m->path, shown, sizeof(shown));
	else
		snprintf(shown, sizeof(shown), "%s", m->path);
	/* every process's mapping is checked as its own ... */
	fd = dump_open(jt, j, m, shown);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	/* ... but a file is read once, whoever maps it */
	if ((d = dump_find(jt, st.st_dev, st.st_ino))) {
		close(fd);
		if (!d->live++)
			d->pid = m->pid;
		d->users++;
		j->dump = d;
		return;
	}
	d = kp_xcalloc(1, sizeof(*d));
	d->jt = jt;
	d->pid = m->pid;
	d->dev = st.st_dev;
	d->ino = st.st_ino;
	d->fd = fd;
	d->live = d->users = 1;
	snprintf(d->shown, sizeof(d->shown), "%s", shown);
	d->strs = kp_strtab_new();
	kp_jitdump_init(&d->jd, d->strs, dump_keep, d);
	d->jd.stop = stop_pending;
	kp_xgrow(&jt->dumps, &jt->dumps_cap, jt->ndumps + 1, sizeof(*jt->dumps));
	jt->dumps[jt->ndumps++] = d;
	jt->dump_opens++;
	j->dump = d;
}

/* Process pid, which maps d, exited: another live mapper, if any, is the
 * one whose JIT code loads are checked against. The file is read on by
 * the polls, within their budget, not here at once. */
static void dump_unmapped(struct kp_jittab *jt, struct dump *d, pid_t pid)
{
	if (d->live)
		d->live--;
	if (d->pid != pid || !d->live)
		return;
	for (size_t i = 0; i < jt->n; i++)
		if (jt->jits[i].dump == d && !jt->jits[i].exited) {
			d->pid = jt->jits[i].pid;
			return;
		}
}

/* A jitdump read in part: said among the notes, and among those a
 * continuous recording prints with the window that met them. */
static void cut_note(struct kp_jittab *jt, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void cut_note(struct kp_jittab *jt, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	kp_notes_add(jt->notes, "%s", msg);
	kp_notes_add(&jt->cut_notes, "%s", msg);
}

/* Says once that d was read no further though not whole. */
static void dump_cut(struct kp_jittab *jt, struct dump *d, const char *why)
{
	if (d->cut)
		return;
	d->cut = true;
	jt->dumps_cut++;
	cut_note(jt, "stopped reading %s at %s: %s", d->shown, d->jd.error, why);
}

/* A jit no longer needs d: freed with its last one (said when its file
 * had more than was read). */
static void dump_release(struct kp_jittab *jt, struct dump *d)
{
	struct stat st;

	if (--d->users)
		return;
	if (d->jd.state <= KP_JITDUMP_RECORDS && fstat(d->fd, &st) == 0 &&
	    d->jd.off < (uint64_t)st.st_size) {
		snprintf(d->jd.error, sizeof(d->jd.error), "offset %llu of %llu",
			 (unsigned long long)d->jd.off, (unsigned long long)st.st_size);
		dump_cut(jt, d,
			 "its processes exited before the rest could be read in the "
			 "read budget");
	}
	for (size_t i = 0; i < jt->ndumps; i++)
		if (jt->dumps[i] == d) {
			jt->dumps[i] = jt->dumps[--jt->ndumps];
			break;
		}
	dump_free(d);
}

/* The state all jitdumps but d hold. */
static uint64_t others_bytes(const struct kp_jittab *jt, const struct dump *d)
{
	uint64_t n = 0;

	for (size_t i = 0; i < jt->ndumps; i++)
		if (jt->dumps[i] != d)
			n += jt->dumps[i]->jd.bytes;
	return n;
}

/* Reads d on (at most budget file bytes, 0: to its end) and says once
 * what stopped it. */
static void dump_read(struct kp_jittab *jt, struct dump *d, uint64_t budget)
{
	uint64_t others = others_bytes(jt, d);
	int err;

	if (d->jd.state > KP_JITDUMP_RECORDS)
		return;
	d->jd.max_bytes = others >= TOTAL_MAX_BYTES ? 1 : TOTAL_MAX_BYTES - others;
	if (d->jd.max_bytes > DUMP_MAX_BYTES)
		d->jd.max_bytes = DUMP_MAX_BYTES;
	err = kp_jitdump_read(&d->jd, d->fd, budget);
	if (err < 0 && err != -EINTR && !d->noted) {
		d->noted = true;
		kp_notes_add(jt->notes, "cannot read all of %s: %s", d->shown, strerror(-err));
	}
	if (d->jd.state == KP_JITDUMP_REFUSED && !d->noted) {
		d->noted = true;
		kp_notes_add(jt->notes, "ignored %s: %s", d->shown, d->jd.error);
	} else if (d->jd.state == KP_JITDUMP_BROKEN && !d->noted) {
		d->noted = true;
		kp_notes_add(jt->notes, "stopped reading %s at %s", d->shown, d->jd.error);
	} else if (d->jd.state == KP_JITDUMP_FULL) {
		dump_cut(jt, d,
			 "kprof keeps at most 64 MiB for a jitdump and 128 MiB for all "
			 "(later code unnamed)");
	}
	if (d->jd.st.bad_records)
		kp_notes_update(jt->notes, &d->bad_note, "%s: skipped %llu malformed record%s",
				d->shown, (unsigned long long)d->jd.st.bad_records,
				d->jd.st.bad_records == 1 ? "" : "s");
}

/* What the jitdumps gained, ROUND_BUDGET bytes at most in all: each in
 * turn, from where the last poll stopped, so that a big one neither
 * stalls the rings nor starves the others. Those of exited processes are
 * read on too (their rest, budgeted like the rest). */
void kp_jit_poll(struct kp_jittab *jt)
{
	uint64_t left = ROUND_BUDGET;
	size_t n = jt->ndumps;

	for (size_t k = 0; k < n && left; k++) {
		struct dump *d = jt->dumps[(jt->next_poll + k) % n];
		uint64_t from = d->jd.off, share = left / (n - k) ? left / (n - k) : left;

		dump_read(jt, d, share);
		left -= d->jd.off - from < left ? d->jd.off - from : left;
	}
	if (n)
		jt->next_poll = (jt->next_poll + 1) % n;
}

/* The jitdump's name for addr of j, interned, or NULL. */
static const char *dump_lookup(struct kp_jittab *jt, struct jit *j, uint64_t addr)
{
	const struct kp_jitdump_code *c;
	char buf[4096];
	size_t n;

	if (!j->dump)
		return NULL;
	/* the names asked: what the file holds now (the process may live),
	 * read once a window, not at every location named, and within a
	 * budget (the rest is the next polls') */
	if (!j->dump->done) {
		dump_read(jt, j->dump, LOOKUP_BUDGET);
		j->dump->done = true;
		if (j->dump->jd.short_read) {
			/* said, counted; later polls read on (the process may live) */
			jt->dumps_cut++;
			cut_note(jt,
				 "names of %s read to offset %llu of %llu: the rest was past "
				 "kprof's read budget (256 MiB a file when naming) or a stop",
				 j->dump->shown, (unsigned long long)j->dump->jd.off,
				 (unsigned long long)j->dump->jd.size_seen);
		}
	}
	c = kp_jitdump_find(&j->dump->jd, addr);
	if (!c)
		return NULL;
	n = kp_jitdump_name(&j->dump->jd, c, addr, buf, sizeof(buf));
	if (!n)
		return NULL;
	return kp_strtab_str(jt->names, kp_strtab_intern(jt->names, buf, n));
}

const char *const *kp_jit_cut_notes(const struct kp_jittab *jt, size_t *n)
{
	return kp_notes_list(&jt->cut_notes, n);
}

void kp_jit_dump_stats(const struct kp_jittab *jt, struct kp_jit_dump_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->opens = jt->dump_opens;
	st->cut = jt->dumps_cut;
	for (size_t i = 0; i < jt->ndumps; i++) {
		st->loads += jt->dumps[i]->jd.st.loads;
		st->ignored += jt->dumps[i]->jd.st.ignored;
		st->bytes += jt->dumps[i]->jd.bytes;
	}
}

bool kp_jit_unwind_info(struct kp_jittab *jt, pid_t pid, uint64_t addr, struct kp_jit_unwind *out)
{
	uint32_t id = find_live(jt, pid);
	const struct kp_jitdump_code *c;
	const struct dump *d;

	if (!id || !(d = jt->jits[id - 1].dump) || !(c = kp_jitdump_find(&d->jd, addr)) ||
	    !c->unwind || c->hdr_len >= c->unwind_len)
		return false;
	out->start = c->start;
	out->end = c->start + c->size;
	/* the code's index in its file, which no other load of it takes */
	out->key = (uint64_t)id << 32 | (uint64_t)(c - d->jd.codes);
	out->eh_frame = c->unwind;
	out->eh_frame_len = c->unwind_len - c->hdr_len;
	out->hdr = c->unwind + out->eh_frame_len;
	out->hdr_len = c->hdr_len;
	return true;
}
