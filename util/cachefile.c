#include "util/cachefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/xalloc.h"

struct kp_cachedir {
	char *path;		    /* for messages */
	char *name;		    /* the last component, opened below the one above */
	struct kp_cachedir *parent; /* NULL: above is the directory of path */
	int fd;			    /* -1 until opened */
	bool refused;		    /* may not be used: said once, never tried again */
	kp_cachedir_note_fn note;
	void *arg;
};

/* Ours and private: of type (S_IFREG, S_IFDIR), owned by the effective
 * user, writable by nobody else. */
static bool trusted(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

struct kp_cachedir *kp_cachedir_new(const char *path, kp_cachedir_note_fn note, void *arg)
{
	struct kp_cachedir *dir = kp_xcalloc(1, sizeof(*dir));
	size_t len = strlen(path);
	const char *slash;

	while (len > 1 && path[len - 1] == '/')
		len--;
	dir->path = kp_xstrndup(path, len);
	slash = strrchr(dir->path, '/');
	/* a relative path or "/" itself: nothing to open it below */
	dir->name = kp_xstrdup(slash && slash[1] ? slash + 1 : "");
	dir->fd = -1;
	dir->note = note;
	dir->arg = arg;
	return dir;
}

struct kp_cachedir *kp_cachedir_sub(struct kp_cachedir *parent, const char *name)
{
	struct kp_cachedir *dir = kp_xcalloc(1, sizeof(*dir));

	dir->path = kp_xasprintf("%s/%s", parent->path, name);
	dir->name = kp_xstrdup(strchr(name, '/') ? "" : name);
	dir->parent = parent;
	dir->fd = -1;
	dir->note = parent->note;
	dir->arg = parent->arg;
	return dir;
}

void kp_cachedir_free(struct kp_cachedir *dir)
{
	if (!dir)
		return;
	if (dir->fd >= 0)
		close(dir->fd);
	free(dir->path);
	free(dir->name);
	free(dir);
}

const char *kp_cachedir_path(const struct kp_cachedir *dir)
{
	return dir->path;
}

/* Marks dir as not to be used and says why, once. Returns -1. */
__attribute__((format(printf, 2, 3))) static int refuse(struct kp_cachedir *dir, const char *fmt,
							...)
{
	char why[512], msg[1024 + 512];
	va_list ap;

	dir->refused = true;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(msg, sizeof(msg),
		 "not using the cache in %s: it %s (kprof's cache directories must be the "
		 "user's own, mode 0700, and not symbolic links)",
		 dir->path, why);
	if (dir->note)
		dir->note(dir->arg, msg);
	return -1;
}

/* The same without a word, when the directory cannot be made (a read-only
 * or unwritable home, a file where a parent should be): that costs speed
 * only, and nothing there breaks the rule. */
static int refuse_quietly(struct kp_cachedir *dir)
{
	dir->refused = true;
	return -1;
}

/* The directory above kprof's own (e.g. ~/.cache), made with its missing
 * parents when create; links are followed there, as the user set them.
 * Returns its fd, or -1 (errno set by the open). */
static int open_above(const struct kp_cachedir *dir, bool create)
{
	size_t len = strlen(dir->path) - strlen(dir->name);
	char *above = kp_xstrndup(dir->path, len > 1 ? len - 1 : len);
	int fd, err;

	for (char *slash = strchr(above + 1, '/'); create && slash;
	     slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(above, 0700); /* what fails shows in the open below */
		*slash = '/';
	}
	if (create)
		mkdir(above, 0700);
	fd = open(above, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	free(above);
	errno = err;
	return fd;
}

/* Opens (after making, when create) dir below the directory open as
 * above, by the rule: no link followed, ours, mode 0700. */
static int open_below(struct kp_cachedir *dir, int above, bool create)
{
	struct stat st;
	int fd;

	if (create && mkdirat(above, dir->name, 0700) != 0 && errno != EEXIST)
		return refuse_quietly(dir);
	fd = openat(above, dir->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		if (err == ENOENT && !create)
			return -1; /* not there yet: nothing to read */
		if (fstatat(above, dir->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return refuse(dir, "is a symbolic link");
		if (err == ENOTDIR || err == ELOOP)
			return refuse(dir, "is not a directory");
		return refuse(dir, "cannot be opened (%s)", strerror(err));
	}
	if (fstat(fd, &st) != 0) {
		close(fd);
		return refuse(dir, "cannot be examined (%s)", strerror(errno));
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return refuse(dir, "is owned by uid %u, not by this user (uid %u)",
			      (unsigned)st.st_uid, (unsigned)geteuid());
	}
	if (st.st_mode & 077) {
		close(fd);
		return refuse(dir, "has mode %04o, not 0700", (unsigned)(st.st_mode & 07777));
	}
	dir->fd = fd;
	return fd;
}

int kp_cachedir_fd(struct kp_cachedir *dir, bool create)
{
	int above;

	if (dir->fd >= 0 || dir->refused)
		return dir->fd;
	if (!dir->name[0])
		return refuse(dir, "is not a path below a directory");
	if (dir->parent) {
		above = kp_cachedir_fd(dir->parent, create);
		/* the parent refused (and said so) or is missing */
		return above < 0 ? -1 : open_below(dir, above, create);
	}
	above = open_above(dir, create);
	if (above < 0)
		return errno == ENOENT && !create ? -1 : refuse_quietly(dir);
	open_below(dir, above, create);
	close(above);
	return dir->fd;
}

DIR *kp_cachedir_list(struct kp_cachedir *dir)
{
	int dfd = kp_cachedir_fd(dir, false);
	int fd = dfd >= 0 ? openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (fd >= 0 && !d)
		close(fd);
	return d;
}

/* Is name one path component (no walking anywhere else)? */
static bool plain_name(const char *name)
{
	return name[0] && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

int kp_cachefile_open(struct kp_cachedir *dir, const char *name, struct stat *st)
{
	int dfd = kp_cachedir_fd(dir, false), fd;

	if (dfd < 0 || !plain_name(name))
		return -1;
	/* O_NONBLOCK: a FIFO put there does not hang us */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !trusted(st, S_IFREG) || st->st_size == 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool kp_cachefile_exists(struct kp_cachedir *dir, const char *name, struct stat *st)
{
	int dfd = kp_cachedir_fd(dir, false);

	return dfd >= 0 && plain_name(name) && fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       trusted(st, S_IFREG);
}

/* Six characters for a temporary name: random, else from the clock (an
 * existing name is never reused: O_EXCL). */
static void random_suffix(char out[7])
{
	static const char set[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	uint8_t b[6];

	if (getrandom(b, sizeof(b), GRND_NONBLOCK) != (ssize_t)sizeof(b)) {
		struct timespec ts;
		uint64_t x;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ULL ^ (uint64_t)getpid();
		for (size_t i = 0; i < sizeof(b); i++)
			b[i] = (uint8_t)(x >> (8 * i));
	}
	for (size_t i = 0; i < sizeof(b); i++)
		out[i] = set[b[i] % (sizeof(set) - 1)];
	out[6] = '\0';
}

int kp_cachefile_begin(struct kp_cachedir *dir, const char *prefix, char **tmp)
{
	int dfd = kp_cachedir_fd(dir, true);

	*tmp = NULL;
	if (dfd < 0)
		return -1;
	for (int tries = 0; tries < 64; tries++) {
		char suffix[7];
		int fd;

		random_suffix(suffix);
		*tmp = kp_xasprintf(".%s-%s", prefix, suffix);
		fd = openat(dfd, *tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		free(*tmp);
		*tmp = NULL;
		if (errno != EEXIST)
			break;
	}
	return -1;
}

bool kp_cachefile_commit(struct kp_cachedir *dir, char **tmp, int fd, bool ok, const char *name)
{
	if (!*tmp) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (fd < 0 || close(fd) != 0)
		ok = false;
	if (ok && (!plain_name(name) || renameat(dir->fd, *tmp, dir->fd, name) != 0))
		ok = false;
	if (!ok)
		unlinkat(dir->fd, *tmp, 0);
	free(*tmp);
	*tmp = NULL;
	return ok;
}

void kp_cachefile_remove(struct kp_cachedir *dir, const char *name)
{
	int dfd = kp_cachedir_fd(dir, false);

	if (dfd >= 0 && plain_name(name))
		unlinkat(dfd, name, 0);
}
