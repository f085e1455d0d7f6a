/* The spool: each window not yet delivered everywhere is a file of the
 * spool directory, so that a restart loses nothing (docs/push.md, "The
 * spool"). kprof runs as root beside other users: the directory is taken
 * only when it is ours and nobody else can write it, every step after the
 * first is relative to its descriptor, nothing is followed, and a file is
 * read back only when it is ours, bounded and checked. */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "push/pushP.h"
#include "util/checksum.h"
#include "util/xalloc.h"

#define MAGIC	    "kpspool1"
#define VERSION	    1
#define FILE_MAX    (64ull << 20) /* a window's bytes in one file */
#define NAME_PREFIX "w-"
#define NAME_SUFFIX ".kpw"
#define TMP_PREFIX  ".tmp-"
#define LOCK_NAME   "kprof.lock" /* held (flock) by the agent using the spool */

/* A file: this header, then the window's bytes. Integers little-endian.
 * done[] is left out of the header's checksum: it is updated in place
 * (one byte) as targets receive the window. */
struct header {
	char magic[8];
	uint32_t version, size;
	uint64_t from_ns, until_ns, len;
	uint64_t data_sum;
	uint32_t nkeys, pad;
	uint64_t keys[KP_PUSH_MAX_TARGETS];
	uint64_t header_sum; /* of everything above */
	uint8_t done[KP_PUSH_MAX_TARGETS];
};

struct kp_spool {
	int dirfd;
	int lockfd; /* LOCK_NAME, flock'd: the spool is this process's while open */
	char *dir;
	uint64_t max;
	_Atomic uint64_t used; /* bytes of the files counted (written or loaded) */
	unsigned seq;
};

/* The pid written in the lock file by its holder: a claim, only shown
 * (as a number); 0 when there is none. */
static long lock_holder(int fd)
{
	char buf[24];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long pid = 0;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (const char *c = buf; *c >= '0' && *c <= '9' && pid < 100000000; c++)
		pid = pid * 10 + (*c - '0');
	return pid;
}

/* One agent a spool: another one's start would take (and remove) windows
 * the first still sends. The lock is flock(2) on LOCK_NAME, so that it
 * dies with its process whatever ends it; the file is opened without
 * following a link or waiting on a FIFO, and only a regular file of ours
 * is taken (the directory is ours and nobody else's to write, checked
 * before). The holder's pid is written in it for the message. */
static int take_lock(struct kp_spool *s, struct kp_diag *d)
{
	int fd = openat(s->dirfd, LOCK_NAME,
			O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	char pid[24];
	struct stat st;

	if (fd < 0)
		return kp_diag_errno(d, -errno, "--spool %s: cannot open its lock file %s", s->dir,
				     LOCK_NAME);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		close(fd);
		return kp_diag_set(d, -EPERM,
				   "--spool %s: its lock file %s is not a regular file of kprof's "
				   "user, refused",
				   s->dir, LOCK_NAME);
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int err = errno == EWOULDBLOCK ? -EBUSY : -errno;
		long holder = err == -EBUSY ? lock_holder(fd) : 0;

		close(fd);
		if (err != -EBUSY)
			return kp_diag_errno(d, err, "--spool %s: cannot lock it", s->dir);
		if (holder)
			return kp_diag_set(d, -EBUSY,
					   "--spool %s: in use by another kprof (pid %ld): give "
					   "each agent a spool of its own",
					   s->dir, holder);
		return kp_diag_set(d, -EBUSY,
				   "--spool %s: in use by another kprof: give each agent a "
				   "spool of its own",
				   s->dir);
	}
	snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	/* a failure here only loses the pid in another agent's message */
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, strlen(pid), 0);
	s->lockfd = fd;
	return 0;
}

int kp_spool_open(struct kp_spool **out, const char *dir, uint64_t max, struct kp_diag *d)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	int err;

	/* a missing directory is made, 0700; what is found is then checked
	 * the same way, whoever made it */
	if (fd < 0 && errno == ENOENT && mkdir(dir, 0700) == 0)
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		struct stat lst;

		if (lstat(dir, &lst) == 0 && S_ISLNK(lst.st_mode))
			return kp_diag_set(d, -ELOOP, "--spool %s: a symbolic link, refused", dir);
		return kp_diag_set(d, -ENOTDIR, "--spool %s: not a directory", dir);
	}
	if (fd < 0)
		return kp_diag_errno(d, -errno, "--spool %s", dir);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		return kp_diag_set(d, -EPERM, "--spool %s: owned by uid %u, not by kprof's (%u)",
				   dir, (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if (st.st_mode & 022) {
		close(fd);
		return kp_diag_set(d, -EPERM,
				   "--spool %s: writable by group or others (mode %03o), refused",
				   dir, (unsigned)(st.st_mode & 0777));
	}
	*out = kp_xcalloc(1, sizeof(**out));
	(*out)->dirfd = fd;
	(*out)->lockfd = -1;
	(*out)->dir = kp_xstrdup(dir);
	(*out)->max = max;
	err = take_lock(*out, d);
	if (err < 0) {
		kp_spool_close(*out);
		*out = NULL;
	}
	return err;
}

void kp_spool_close(struct kp_spool *s)
{
	if (s->lockfd >= 0)
		close(s->lockfd); /* the lock goes with it */
	close(s->dirfd);
	free(s->dir);
	free(s);
}

bool kp_spool_fits(const struct kp_spool *s, uint64_t len)
{
	return atomic_load(&s->used) + len + sizeof(struct header) <= s->max;
}

static uint64_t header_sum(const struct header *h)
{
	return kp_checksum(h, offsetof(struct header, header_sum));
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Writes tmp in full (O_EXCL, never through a link), else removes it. */
static int write_tmp(struct kp_spool *s, const char *tmp, const struct header *h,
		     const uint8_t *data, size_t len)
{
	int fd = openat(s->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int err;

	if (fd < 0)
		return -errno;
	err = write_all(fd, h, sizeof(*h));
	if (err == 0)
		err = write_all(fd, data, len);
	if (close(fd) < 0 && err == 0)
		err = -errno;
	if (err)
		unlinkat(s->dirfd, tmp, 0);
	return err;
}

int kp_spool_write(struct kp_spool *s, const uint8_t *data, size_t len, uint64_t from_ns,
		   uint64_t until_ns, const uint64_t *keys, size_t nkeys, struct kp_spool_entry *e,
		   struct kp_diag *d)
{
	struct header h = {.version = htole32(VERSION), .size = htole32(sizeof(h))};
	char tmp[96];
	int err = 0;

	if (len > FILE_MAX)
		return kp_diag_set(d, -EFBIG, "spool %s: a window over %llu MiB is not spooled",
				   s->dir, FILE_MAX >> 20);
	memcpy(h.magic, MAGIC, sizeof(h.magic));
	h.from_ns = htole64(from_ns);
	h.until_ns = htole64(until_ns);
	h.len = htole64(len);
	h.data_sum = htole64(kp_checksum(data, len));
	h.nkeys = htole32((uint32_t)nkeys);
	for (size_t i = 0; i < nkeys; i++)
		h.keys[i] = htole64(keys[i]);
	h.header_sum = htole64(header_sum(&h));
	for (int tries = 0; tries < 100; tries++) {
		snprintf(e->name, sizeof(e->name), NAME_PREFIX "%020" PRIu64 "-%u-%u" NAME_SUFFIX,
			 from_ns, (unsigned)getpid(), s->seq++);
		snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s", e->name);
		err = write_tmp(s, tmp, &h, data, len);
		if (err == 0 && renameat2(s->dirfd, tmp, s->dirfd, e->name, RENAME_NOREPLACE) < 0) {
			err = -errno;
			unlinkat(s->dirfd, tmp, 0);
		}
		if (err != -EEXIST)
			break;
	}
	if (err)
		return kp_diag_errno(d, err, "spool %s: cannot write a window", s->dir);
	atomic_fetch_add(&s->used, len + sizeof(h));
	e->from_ns = from_ns;
	e->until_ns = until_ns;
	e->len = len;
	e->pending = nkeys >= 32 ? UINT32_MAX : (uint32_t)((1ull << nkeys) - 1);
	return 0;
}

void kp_spool_done(struct kp_spool *s, const char *name, uint64_t key)
{
	int fd = openat(s->dirfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct header h;
	uint8_t one = 1;

	if (fd < 0)
		return;
	if (pread(fd, &h, sizeof(h), 0) == (ssize_t)sizeof(h))
		for (uint32_t i = 0; i < le32toh(h.nkeys) && i < KP_PUSH_MAX_TARGETS; i++)
			if (le64toh(h.keys[i]) == key)
				pwrite(fd, &one, 1, (off_t)offsetof(struct header, done) + i);
	close(fd);
}

void kp_spool_remove(struct kp_spool *s, const char *name, uint64_t len)
{
	if (unlinkat(s->dirfd, name, 0) == 0)
		atomic_fetch_sub(&s->used, len + sizeof(struct header));
}

/* Opens name and checks it is ours: a regular file of kprof's user, of a
 * size a window can have, with a sound header. The descriptor is returned. */
static int open_checked(struct kp_spool *s, const char *name, struct header *h, const char **why)
{
	int fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	*why = NULL;
	if (fd < 0) {
		*why = errno == ELOOP ? "a symbolic link" : "cannot be opened";
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		*why = "not a regular file";
	else if (st.st_uid != geteuid())
		*why = "not owned by kprof's user";
	else if ((uint64_t)st.st_size < sizeof(*h) || (uint64_t)st.st_size > FILE_MAX + sizeof(*h))
		*why = "not of a window's size";
	else if (pread(fd, h, sizeof(*h), 0) != (ssize_t)sizeof(*h) ||
		 memcmp(h->magic, MAGIC, sizeof(h->magic)) || le32toh(h->version) != VERSION ||
		 le32toh(h->size) != sizeof(*h) || le64toh(h->header_sum) != header_sum(h) ||
		 le32toh(h->nkeys) > KP_PUSH_MAX_TARGETS ||
		 le64toh(h->len) != (uint64_t)st.st_size - sizeof(*h))
		*why = "not a kprof spool file, or damaged";
	if (*why) {
		close(fd);
		return -1;
	}
	return fd;
}

int kp_spool_read(struct kp_spool *s, const char *name, uint8_t **data, size_t *len,
		  struct kp_diag *d)
{
	const char *why;
	struct header h;
	int fd = open_checked(s, name, &h, &why);
	size_t n, got = 0;
	uint8_t *buf;

	if (fd < 0)
		return kp_diag_set(d, -EINVAL, "spool %s: %s: %s", s->dir, name, why);
	n = (size_t)le64toh(h.len);
	buf = kp_xmalloc(n ? n : 1);
	while (got < n) {
		ssize_t r = pread(fd, buf + got, n - got, (off_t)(sizeof(h) + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (got != n || kp_checksum(buf, n) != le64toh(h.data_sum)) {
		free(buf);
		return kp_diag_set(d, -EINVAL, "spool %s: %s: damaged (checksum)", s->dir, name);
	}
	*data = buf;
	*len = n;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct kp_spool_entry *x = a, *y = b;

	if (x->from_ns != y->from_ns)
		return x->from_ns < y->from_ns ? -1 : 1;
	return strcmp(x->name, y->name);
}

struct load_counts {
	size_t skipped, others;
	char first[64];
	const char *first_why;
};

static void skip(struct load_counts *c, const char *name, const char *why)
{
	if (c->skipped++ == 0) {
		snprintf(c->first, sizeof(c->first), "%.*s", (int)sizeof(c->first) - 1, name);
		c->first_why = why;
	}
}

/* The targets of keys that still need the window of header h. */
static uint32_t still_needed(const struct header *h, const uint64_t *keys, size_t nkeys,
			     struct load_counts *c)
{
	uint32_t pending = 0;
	bool other = false;

	for (uint32_t j = 0; j < le32toh(h->nkeys); j++) {
		bool found = false;

		for (size_t i = 0; i < nkeys; i++)
			if (le64toh(h->keys[j]) == keys[i]) {
				found = true;
				if (!h->done[j])
					pending |= 1u << i;
			}
		other |= !found && !h->done[j];
	}
	c->others += pending == 0 && other;
	return pending;
}

/* One directory entry: an entry of *out when it is a window still due. */
static void load_one(struct kp_spool *s, const char *name, const uint64_t *keys, size_t nkeys,
		     struct kp_spool_entry *e, size_t *n, struct load_counts *c)
{
	size_t nlen = strlen(name);
	const char *why;
	struct header h;
	struct stat st;
	int fd;

	if (strcmp(name, LOCK_NAME) == 0)
		return;
	if (strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
		/* a write cut short by a crash: removed when it is ours */
		if (fstatat(s->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		    st.st_uid == geteuid())
			unlinkat(s->dirfd, name, 0);
		else
			skip(c, name, "not kprof's");
		return;
	}
	if (nlen >= sizeof(e->name) || strncmp(name, NAME_PREFIX, strlen(NAME_PREFIX)) ||
	    nlen < strlen(NAME_SUFFIX) || strcmp(name + nlen - strlen(NAME_SUFFIX), NAME_SUFFIX)) {
		skip(c, name, "not a spool file's name");
		return;
	}
	fd = open_checked(s, name, &h, &why);
	if (fd < 0) {
		skip(c, name, why);
		return;
	}
	close(fd);
	e->pending = still_needed(&h, keys, nkeys, c);
	if (!e->pending) {
		unlinkat(s->dirfd, name, 0);
		return;
	}
	memcpy(e->name, name, nlen + 1);
	e->from_ns = le64toh(h.from_ns);
	e->until_ns = le64toh(h.until_ns);
	e->len = le64toh(h.len);
	atomic_fetch_add(&s->used, e->len + sizeof(h));
	(*n)++;
}

size_t kp_spool_load(struct kp_spool *s, const uint64_t *keys, size_t nkeys,
		     struct kp_spool_entry **out, char *notes, size_t notes_len)
{
	int fd = openat(s->dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct load_counts c = {.skipped = 0};
	struct kp_spool_entry *e = NULL;
	size_t n = 0, cap = 0, o = 0;
	DIR *dp = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	*out = NULL;
	*notes = '\0';
	if (!dp) {
		if (fd >= 0)
			close(fd);
		snprintf(notes, notes_len, "spool %s: cannot be listed", s->dir);
		return 0;
	}
	while ((de = readdir(dp))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		kp_xgrow(&e, &cap, n + 1, sizeof(*e));
		load_one(s, de->d_name, keys, nkeys, &e[n], &n, &c);
	}
	closedir(dp);
	if (n)
		qsort(e, n, sizeof(*e), by_time);
	if (c.skipped)
		o = (size_t)snprintf(notes, notes_len,
				     "spool %s: %zu files skipped (left there), the first: %s (%s)",
				     s->dir, c.skipped, c.first, c.first_why);
	if (c.others && o < notes_len)
		snprintf(notes + o, notes_len - o,
			 "%sspool %s: %zu windows for targets not given now removed", o ? "; " : "",
			 s->dir, c.others);
	*out = e;
	return n;
}
