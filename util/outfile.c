#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* ---- removing named temporaries when a signal ends the process ----
 *
 * Only the fallback has a name to remove. The handler unlinks every
 * registered name, then dies of the signal as if it had not been caught.
 * Processes that block these signals (the recorder reads them from a
 * signalfd) never run it: they commit or abort in order. */

#define CLEANUP_SLOTS 8

static char *volatile cleanup_paths[CLEANUP_SLOTS];
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP};
static bool cleanup_installed;

static void cleanup_on_signal(int sig)
{
	for (int i = 0; i < CLEANUP_SLOTS; i++) {
		char *p = cleanup_paths[i];

		if (p)
			unlink(p);
	}
	/* SA_RESETHAND restored the default: this ends the process */
	raise(sig);
}

static void install_cleanup(void)
{
	if (cleanup_installed)
		return;
	cleanup_installed = true;
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

/* ---- opening ---- */

/* The folder of path, for O_TMPFILE ("." for a bare name). Heap. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return kp_xstrdup(".");
	if (slash == path)
		return kp_xstrdup("/");
	return kp_xasprintf("%.*s", (int)(slash - path), path);
}

/* An unnamed file in path's folder, or -errno. */
static int open_unnamed(const char *path)
{
	char *dir = dir_of(path);
	int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666); /* umask applies */
	int err = fd < 0 ? -errno : 0;

	free(dir);
	return fd >= 0 ? fd : err;
}

/* The fallback: FILE.tmp.XXXXXX, registered for removal on signals. */
static int open_named(struct kp_outfile *out)
{
	mode_t um;
	int fd;

	out->tmp = kp_xasprintf("%s.tmp.XXXXXX", out->path);
	fd = mkostemp(out->tmp, O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		free(out->tmp);
		out->tmp = NULL;
		return err;
	}
	out->slot = cleanup_add(out->tmp);
	/* mkstemp makes 0600; a profile is an ordinary file */
	um = umask(0);
	umask(um);
	(void)fchmod(fd, 0666 & ~um);
	return fd;
}

int kp_outfile_open_flags(struct kp_outfile *out, const char *path, unsigned flags,
			  struct kp_diag *d)
{
	struct stat sb;
	int fd = -EOPNOTSUPP;

	memset(out, 0, sizeof(*out));
	if (!path || strcmp(path, "-") == 0) {
		out->fp = stdout;
		return 0;
	}
	/* /dev/null, a FIFO, a terminal: nothing to replace, write directly */
	if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		if (S_ISDIR(sb.st_mode))
			return kp_diag_set(d, -EISDIR, "cannot write %s: it is a directory", path);
		out->fp = fopen(path, "we");
		if (!out->fp)
			return kp_diag_errno(d, -errno, "cannot open %s", path);
		out->path = kp_xstrdup(path);
		out->direct = true;
		return 0;
	}
	out->path = kp_xstrdup(path);
	if (!(flags & KP_OUTFILE_NAMED_TMP))
		fd = open_unnamed(path);
	/* no O_TMPFILE in this kernel (EISDIR) or file system (EOPNOTSUPP) */
	if (fd == -EOPNOTSUPP || fd == -EISDIR || fd == -EINVAL)
		fd = open_named(out);
	if (fd >= 0) {
		int err;

		out->fp = fdopen(fd, "w");
		if (out->fp)
			return 0;
		err = -errno;
		close(fd);
		fd = err;
	}
	kp_outfile_abort(out);
	return kp_diag_errno(d, fd, "cannot create %s", path);
}

int kp_outfile_open(struct kp_outfile *out, const char *path, struct kp_diag *d)
{
	return kp_outfile_open_flags(out, path, 0, d);
}

/* ---- committing ---- */

/* Gives the unnamed file fd the name path. Returns 0 or -errno (EEXIST
 * when path exists). */
static int link_unnamed(int fd, const char *path)
{
	char proc[64];
	int err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (linkat(AT_FDCWD, proc, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0)
		return 0;
	err = -errno;
	/* no /proc: AT_EMPTY_PATH does the same where we may (CAP_DAC_READ_SEARCH) */
	if (err == -ENOENT && linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH) == 0)
		return 0;
	return err;
}

/* Puts the unnamed file fd in place over path: linked straight to it when
 * the name is free, else under a fresh temporary name renamed over it (so
 * the old file is replaced in one step). */
static int place_unnamed(int fd, const char *path)
{
	int err = link_unnamed(fd, path);

	for (int tries = 0; err == -EEXIST && tries < 100; tries++) {
		uint64_t r = 0;
		char *tmp;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r))
			r = (uint64_t)getpid() << 32 ^ (uint64_t)tries;
		tmp = kp_xasprintf("%s.tmp.%012llx", path, (unsigned long long)(r >> 16));
		err = link_unnamed(fd, tmp);
		if (err == 0) {
			if (rename(tmp, path) != 0) {
				err = -errno;
				unlink(tmp);
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
		err = place_unnamed(fileno(out->fp), out->path);
		if (err)
			kp_diag_errno(d, err, "cannot create %s", out->path);
	}
	if (fclose(out->fp) != 0 && !err)
		err = kp_diag_errno(d, -errno, "cannot write %s", out->path);
	out->fp = NULL;
	if (out->tmp) {
		if (!err && rename(out->tmp, out->path) != 0)
			err = kp_diag_errno(d, -errno, "cannot rename %s to %s", out->tmp,
					    out->path);
		if (err)
			unlink(out->tmp);
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
		unlink(out->tmp);
		free(out->tmp);
	}
	cleanup_remove(out->slot);
	free(out->path);
	memset(out, 0, sizeof(*out));
}

const char *kp_outfile_name(const struct kp_outfile *out)
{
	return out->path ? out->path : "stdout";
}
