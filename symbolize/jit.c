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

/* File bytes a jitdump is read by at most per poll while recording. */
#define DUMP_BUDGET ((uint64_t)4 << 20)

/* A process's jitdump: the file (checked, kept open) and what it says. */
struct dump {
	struct kp_jitdump jd;
	struct kp_strtab *strs; /* the names its loads hold, freed with it */
	struct kp_jittab *jt;
	pid_t pid;
	int fd;
	bool done;	 /* read to its end: the process exited, or names were asked */
	bool noted;	 /* its refusal or damage said */
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
	uint64_t reads;		 /* passes over map files */
	struct kp_strtab *names; /* names made from jitdumps for lookups (a window's) */
	kp_jit_code_fn is_jit;	 /* the caller's view of the process's JIT code */
	void *is_jit_arg;
};

static int open_map(struct kp_jittab *jt, struct jit *j, struct stat *st);
static uint64_t now_ms(void);

static void dump_read(struct kp_jittab *jt, struct dump *d, uint64_t budget);
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
		dump_free(jt->jits[i].dump);
	}
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
	if (j->dump) {
		/* the file is whole now: read the rest while the caller still
		 * knows the process's mappings */
		dump_read(jt, j->dump, 0);
		j->dump->done = true;
	}
	j->exited = true;
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
		dump_free(j->dump);
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
static int dump_open(struct kp_jittab *jt, const struct jit *j, const struct kp_jit_mapping *m,
		     const char *shown)
{
	char buf[96];
	struct stat st;
	int fd;
	bool owner = false;

	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int)j->pid,
		 (unsigned long long)m->start, (unsigned long long)m->end);
	fd = kp_root_open(buf, O_RDONLY | O_NONBLOCK);
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

void kp_jit_dump_mapped(struct kp_jittab *jt, const struct kp_jit_mapping *m)
{
	uint32_t id = kp_jit_get(jt, m->pid);
	struct jit *j = &jt->jits[id - 1];
	struct dump *d;
	char shown[128];
	int fd;

	if (j->dump)
		return; /* the first one the process mapped */
	if (j->rootfd >= 0 && !kp_root_is_ours(j->rootfd))
		kp_root_name(j->pid, m->path, shown, sizeof(shown));
	else
		snprintf(shown, sizeof(shown), "%s", m->path);
	fd = dump_open(jt, j, m, shown);
	if (fd < 0)
		return;
	d = kp_xcalloc(1, sizeof(*d));
	d->jt = jt;
	d->pid = m->pid;
	d->fd = fd;
	snprintf(d->shown, sizeof(d->shown), "%s", shown);
	d->strs = kp_strtab_new();
	kp_jitdump_init(&d->jd, d->strs, dump_keep, d);
	j->dump = d;
}

/* Reads d on (budget: 0 to its end) and says once what stopped it. */
static void dump_read(struct kp_jittab *jt, struct dump *d, uint64_t budget)
{
	int err;

	if (d->done || d->jd.state > KP_JITDUMP_RECORDS)
		return;
	err = kp_jitdump_read(&d->jd, d->fd, budget);
	if (err < 0 && !d->noted) {
		d->noted = true;
		kp_notes_add(jt->notes, "cannot read all of %s: %s", d->shown, strerror(-err));
	}
	if (d->jd.state == KP_JITDUMP_REFUSED && !d->noted) {
		d->noted = true;
		kp_notes_add(jt->notes, "ignored %s: %s", d->shown, d->jd.error);
	} else if (d->jd.state == KP_JITDUMP_BROKEN && !d->noted) {
		d->noted = true;
		kp_notes_add(jt->notes, "stopped reading %s at %s", d->shown, d->jd.error);
	}
	if (d->jd.st.bad_records)
		kp_notes_update(jt->notes, &d->bad_note, "%s: skipped %llu malformed record%s",
				d->shown, (unsigned long long)d->jd.st.bad_records,
				d->jd.st.bad_records == 1 ? "" : "s");
}

void kp_jit_poll(struct kp_jittab *jt)
{
	for (size_t i = 0; i < jt->n; i++)
		if (jt->jits[i].dump && !jt->jits[i].exited)
			dump_read(jt, jt->jits[i].dump, DUMP_BUDGET);
}

/* The jitdump's name for addr of j, interned, or NULL. */
static const char *dump_lookup(struct kp_jittab *jt, struct jit *j, uint64_t addr)
{
	const struct kp_jitdump_code *c;
	char buf[4096];
	size_t n;

	if (!j->dump)
		return NULL;
	/* after the recording: what the file holds now (the process may
	 * live), read once, not at every location named */
	if (!j->dump->done) {
		dump_read(jt, j->dump, 0);
		j->dump->done = true;
	}
	c = kp_jitdump_find(&j->dump->jd, addr);
	if (!c)
		return NULL;
	n = kp_jitdump_name(&j->dump->jd, c, addr, buf, sizeof(buf));
	if (!n)
		return NULL;
	return kp_strtab_str(jt->names, kp_strtab_intern(jt->names, buf, n));
}

void kp_jit_dump_stats(const struct kp_jittab *jt, uint64_t *loads, uint64_t *ignored)
{
	*loads = *ignored = 0;
	for (size_t i = 0; i < jt->n; i++) {
		const struct dump *d = jt->jits[i].dump;

		if (d) {
			*loads += d->jd.st.loads;
			*ignored += d->jd.st.ignored;
		}
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
