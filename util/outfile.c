#include "util/outfile.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/xalloc.h"

/* ---- removing named temporaries when a signal ends the process ----
 *
 * Only the fallback has a name to remove. The handler unlinks every
 * registered name, then dies of the signal as if it had not been caught.
 * Processes that block these signals (the recorder reads them from a
 * signalfd) never run it: they commit or abort in order. Running out of
 * memory (util/xalloc.h: _exit(1), no atexit handler) unlinks them too. */

#define CLEANUP_SLOTS 8

static char *volatile cleanup_paths[CLEANUP_SLOTS];
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
static bool cleanup_installed;

static void remove_temporaries(void)
{
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		char *p = cleanup_paths[i];

		if (p)
			unlink(p);
	}
}

static void cleanup_on_signal(int sig)
{
	remove_temporaries();
	/* SA_RESETHAND restored the default: this ends the process */
	raise(sig);
}

static void install_cleanup(void)
{
	if (cleanup_installed)
		return;
	cleanup_installed = true;
	kp_set_oom_hook(remove_temporaries);
	for (size_t i = 0; i < sizeof(cleanup_signals) / sizeof(cleanup_signals[0]); i++) {
		struct sigaction old, sa = {.sa_handler = cleanup_on_signal,
					    .sa_flags = SA_RESETHAND | SA_NODEFER};

		/* an ignored signal (nohup) or a handler of the caller's stays */
		if (sigaction(cleanup_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL)
			continue;
		sigemptyset(&sa.sa_mask);
		sigaction(cleanup_signals[i], &sa, NULL);
	}
}

/* Returns the slot + 1 that now holds path (a copy), or 0 when all are
 * taken (the file is then only removed on ordinary failures). */
static int cleanup_add(const char *path)
{
	install_cleanup();
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		if (!cleanup_paths[i]) {
			cleanup_paths[i] = kp_xstrdup(path);
			return i + 1;
		}
	}
	return 0;
}

static void cleanup_remove(int slot)
{
	char *p;

	if (slot <= 0)
		return;
	p = cleanup_paths[slot - 1];
	cleanup_paths[slot - 1] = NULL; /* before the free: the handler may run */
	free(p);
}

/* ---- opening ----
 *
 * Every step after the first is taken relative to the target's folder,
 * opened once (O_PATH): the folders above it cannot be swapped in the
 * middle. What is found under the name is looked at without following it
 * or opening it for writing (O_PATH|O_NOFOLLOW, fstat on that descriptor):
 *  - nothing, a regular file, a symbolic link: a new file is put in place
 *    under the name on commit (rename replaces a link, never its target);
 *  - a FIFO, a device, a terminal: written in place, only when nobody but
 *    root and us could have put it there (trusted_in);
 *  - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: our own
 *    descriptor N, written in place (as a shell does for these names). */

/* The folder part of path, for the folder's descriptor ("." for a bare
 * name). Heap. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return kp_xstrdup(".");
	if (slash == path)
		return kp_xstrdup("/");
	return kp_xasprintf("%.*s", (int)(slash - path), path);
}

/* The last part of path (points into it; "" when path ends in '/'). */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The descriptor a name of our own descriptors stands for, or -1. */
static int own_fd_named(const char *path)
{
	static const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/"};
	char *end;
	long n;

	if (strcmp(path, "/dev/stdout") == 0)
		return 1;
	if (strcmp(path, "/dev/stderr") == 0)
		return 2;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t len = strlen(prefixes[i]);

		if (strncmp(path, prefixes[i], len) != 0 || !isdigit((unsigned char)path[len]))
			continue;
		errno = 0;
		n = strtol(path + len, &end, 10);
		if (*end == '\0' && errno == 0 && n <= INT_MAX)
			return (int)n;
	}
	return -1;
}

/* Could only root or we have put the object *st in the folder dirfd? Yes
 * when nobody else may write the folder, or when the folder is sticky
 * (others may add names but not replace ours) and root or we own the
 * object: the kernel's protected_fifos rule, held here whatever the
 * sysctl says. */
static bool trusted_in(int dirfd, const struct stat *st)
{
	uid_t me = geteuid();
	struct stat ds;
	bool dir_ours, obj_ours = st->st_uid == 0 || st->st_uid == me;

	if (fstat(dirfd, &ds) != 0)
		return false;
	dir_ours = ds.st_uid == 0 || ds.st_uid == me;
	if (dir_ours && !(ds.st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	return dir_ours && (ds.st_mode & S_ISVTX) && obj_ours;
}

static const char *kind_of(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISBLK(mode))
		return "a block device";
	return "a device";
}

/* Opens the FIFO or device *st found under out->path for writing in
 * place. Returns a descriptor or a negative errno (diag set). */
static int open_special(struct kp_outfile *out, const struct stat *st, struct kp_diag *d)
{
	const char *base = base_of(out->path);
	struct stat now;
	int fd, flags = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;

	if (S_ISSOCK(st->st_mode))
		return kp_diag_set(d, -ENXIO, "cannot write %s: it is a socket", out->path);
	if (!trusted_in(out->dirfd, st))
		return kp_diag_set(d, -EPERM,
				   "not writing %s: it is %s owned by uid %u in a folder others "
				   "can write (remove it, or name another path)",
				   out->path, kind_of(st->st_mode), (unsigned)st->st_uid);
	/* a FIFO of our own waits for its reader, as a shell's redirection
	 * does; a device is opened without waiting (a modem's carrier) */
	fd = openat(out->dirfd, base, flags | (S_ISFIFO(st->st_mode) ? 0 : O_NONBLOCK));
	if (fd < 0)
		return kp_diag_errno(d, -errno, "cannot open %s", out->path);
	/* only root or we could swap it, but check the descriptor anyway */
	if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		close(fd);
		return kp_diag_set(d, -EAGAIN, "cannot write %s: it changed while opened",
				   out->path);
	}
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/* An unnamed file in the folder, or -errno. */
static int open_unnamed(int dirfd)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); /* umask applies */

	return fd >= 0 ? fd : -errno;
}

/* FOLDER/NAME.tmp.RANDOM: a fresh name for path (heap). */
static char *temporary_name(const char *path, int tries)
{
	uint64_t r = 0;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
		r = (uint64_t)getpid() << 32 ^ (uint64_t)tries ^ (uint64_t)time(NULL) << 12;
	return kp_xasprintf("%s.tmp.%012llx", path, (unsigned long long)(r >> 16));
}

/* The fallback: a new FILE.tmp.RANDOM (never an existing name or a link),
 * registered for removal on signals. */
static int open_named(struct kp_outfile *out)
{
	int fd = -EEXIST;

	for (int tries = 0; fd == -EEXIST && tries < 100; tries++) {
		out->tmp = temporary_name(out->path, tries);
		fd = openat(out->dirfd, base_of(out->tmp),
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0666); /* umask applies */
		if (fd >= 0)
			break;
		fd = -errno;
		free(out->tmp);
		out->tmp = NULL;
	}
	if (fd >= 0)
		out->slot = cleanup_add(out->tmp);
	return fd;
}

/* Writes in place to a descriptor of ours that path names. */
static int open_own_fd(struct kp_outfile *out, const char *path, int n, struct kp_diag *d)
{
	int fd = fcntl(n, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return kp_diag_errno(d, -errno, "cannot write %s", path);
	out->fp = fdopen(fd, "w");
	if (!out->fp) {
		int err = -errno;

		close(fd);
		return kp_diag_errno(d, err, "cannot write %s", path);
	}
	out->path = kp_xstrdup(path);
	out->direct = true;
	return 0;
}

int kp_outfile_open_flags(struct kp_outfile *out, const char *path, unsigned flags,
			  struct kp_diag *d)
{
	struct stat st;
	char *dir;
	int fd = -EOPNOTSUPP, found, n;

	memset(out, 0, sizeof(*out));
	out->dirfd = -1;
	if (!path || strcmp(path, "-") == 0) {
		out->fp = stdout;
		return 0;
	}
	n = own_fd_named(path);
	if (n >= 0)
		return open_own_fd(out, path, n, d);
	if (!*base_of(path))
		return kp_diag_set(d, -EISDIR, "cannot write %s: it is a directory", path);
	dir = dir_of(path);
	out->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (out->dirfd < 0)
		return kp_diag_errno(d, -errno, "cannot create %s", path);
	out->path = kp_xstrdup(path);

	found = openat(out->dirfd, base_of(path), O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (found < 0 && errno != ENOENT) {
		fd = -errno;
		goto fail;
	}
	if (found >= 0) {
		int err = fstat(found, &st) != 0 ? -errno : 0;

		close(found);
		if (err) {
			fd = err;
			goto fail;
		}
		if (S_ISDIR(st.st_mode)) {
			kp_outfile_abort(out);
			return kp_diag_set(d, -EISDIR, "cannot write %s: it is a directory", path);
		}
		if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			fd = open_special(out, &st, d);
			if (fd < 0) {
				kp_outfile_abort(out);
				return fd;
			}
			out->direct = true;
		}
	}
	if (!out->direct) {
		if (!(flags & KP_OUTFILE_NAMED_TMP))
			fd = open_unnamed(out->dirfd);
		/* no O_TMPFILE in this kernel (EISDIR) or file system (EOPNOTSUPP) */
		if (fd == -EOPNOTSUPP || fd == -EISDIR || fd == -EINVAL)
			fd = open_named(out);
	}
	if (fd >= 0) {
		int err;

		out->fp = fdopen(fd, "w");
		if (out->fp)
			return 0;
		err = -errno;
		close(fd);
		fd = err;
	}
fail:
	kp_outfile_abort(out);
	return kp_diag_errno(d, fd, "cannot create %s", path);
}

int kp_outfile_open(struct kp_outfile *out, const char *path, struct kp_diag *d)
{
	return kp_outfile_open_flags(out, path, 0, d);
}

int kp_outfile_in_the_way(const char *path, char *what, size_t size)
{
	struct stat st;
	const char *kind = NULL;
	int dirfd;
	char *dir;

	*what = '\0';
	if (!path || strcmp(path, "-") == 0 || own_fd_named(path) >= 0 || !*base_of(path))
		return 0;
	dir = dir_of(path);
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dirfd < 0)
		return 0;
	if (fstatat(dirfd, base_of(path), &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISDIR(st.st_mode))
			kind = "a directory";
		else if (S_ISSOCK(st.st_mode))
			kind = "a socket";
		else if ((!S_ISREG(st.st_mode) || st.st_uid != geteuid()) &&
			 !trusted_in(dirfd, &st))
			kind = S_ISLNK(st.st_mode)   ? "a symbolic link"
			       : S_ISREG(st.st_mode) ? "a file"
						     : kind_of(st.st_mode);
	}
	close(dirfd);
	if (!kind)
		return 0;
	snprintf(what, size, "%s of uid %u", kind, (unsigned)st.st_uid);
	return -EEXIST;
}

/* ---- committing ---- */

/* Gives the unnamed file fd the name base in the folder dirfd. Returns 0
 * or -errno (EEXIST when the name is taken). */
static int link_unnamed(int fd, int dirfd, const char *base)
{
	char proc[64];
	int err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, dirfd, base, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	err = -errno;
	/* no /proc: AT_EMPTY_PATH does the same where we may (CAP_DAC_READ_SEARCH) */
	if (err == -ENOENT && linkat(fd, "", dirfd, base, AT_EMPTY_PATH) == 0)
		return 0;
	return err;
}

/* Puts the unnamed file fd in place over out->path: linked straight to it
 * when the name is free, else under a fresh temporary name renamed over it
 * (so whatever is there, a file or a link, is replaced in one step). */
static int place_unnamed(struct kp_outfile *out, int fd)
{
	int err = link_unnamed(fd, out->dirfd, base_of(out->path));

	for (int tries = 0; err == -EEXIST && tries < 100; tries++) {
		char *tmp = temporary_name(out->path, tries);

		err = link_unnamed(fd, out->dirfd, base_of(tmp));
		if (err == 0) {
			if (renameat(out->dirfd, base_of(tmp), out->dirfd, base_of(out->path)) !=
			    0) {
				err = -errno;
				unlinkat(out->dirfd, base_of(tmp), 0);
			}
			free(tmp);
			return err;
		}
		free(tmp);
	}
	return err;
}

int kp_outfile_commit(struct kp_outfile *out, struct kp_diag *d)
{
	int err = 0;

	if (!out->fp)
		return 0;
	if (fflush(out->fp) != 0 || ferror(out->fp))
		err = kp_diag_errno(d, -(errno ? errno : EIO), "cannot write %s",
				    kp_outfile_name(out));
	if (!out->path) {
		out->fp = NULL; /* stdout stays open */
		return err;
	}
	if (!err && !out->direct && !out->tmp) {
		err = place_unnamed(out, fileno(out->fp));
		if (err)
			kp_diag_errno(d, err, "cannot create %s", out->path);
	}
	if (fclose(out->fp) != 0 && !err)
		err = kp_diag_errno(d, -errno, "cannot write %s", out->path);
	out->fp = NULL;
	if (out->tmp) {
		if (!err &&
		    renameat(out->dirfd, base_of(out->tmp), out->dirfd, base_of(out->path)) != 0)
			err = kp_diag_errno(d, -errno, "cannot rename %s to %s", out->tmp,
					    out->path);
		if (err)
			unlinkat(out->dirfd, base_of(out->tmp), 0);
		cleanup_remove(out->slot);
		out->slot = 0;
		free(out->tmp);
		out->tmp = NULL;
	}
	/* keep the name for kp_outfile_name until abort */
	return err;
}

void kp_outfile_abort(struct kp_outfile *out)
{
	/* an unnamed file vanishes with its descriptor */
	if (out->fp && out->path)
		fclose(out->fp);
	if (out->tmp) {
		unlinkat(out->dirfd, base_of(out->tmp), 0);
		free(out->tmp);
	}
	cleanup_remove(out->slot);
	if (out->dirfd > 0)
		close(out->dirfd);
	free(out->path);
	memset(out, 0, sizeof(*out));
}

const char *kp_outfile_name(const struct kp_outfile *out)
{
	return out->path ? out->path : "stdout";
}

/* A closed stdin, stdout or stderr (`2>&-`) would be taken by the next
 * file opened: an output would receive kprof's messages, a recording the
 * command's. Each is held open on /dev/null instead. */
void kp_outfile_hold_standard_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (got < 0)
			_exit(1); /* no /dev/null: nowhere safe to write, or to say so */
		if (got != fd) {
			dup2(got, fd);
			close(got);
		}
	}
}
