#include "util/secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* Who may have put the bytes there: root, or the user kprof runs as; and
 * no one else may read or change them. A file another user owns or can
 * write could hand kprof a credential of theirs (and learn where it goes);
 * one that group or others can read has leaked already: said at once, as
 * ssh refuses a private key other users can read. */
static int check(const char *path, const char *what, const struct stat *st, struct kp_diag *d)
{
	if (!S_ISREG(st->st_mode))
		return kp_diag_set(d, -EINVAL, "%s %s: not a regular file: refused", what, path);
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return kp_diag_set(d, -EPERM,
				   "%s %s: owned by uid %u, not by root or kprof's user (uid %u): "
				   "refused",
				   what, path, (unsigned)st->st_uid, (unsigned)geteuid());
	if (st->st_mode & 077)
		return kp_diag_set(d, -EPERM,
				   "%s %s: mode %04o lets other users %s it: refused (chmod 600)",
				   what, path, (unsigned)(st->st_mode & 07777),
				   st->st_mode & 022 ? "change" : "read");
	if (st->st_size > KP_SECRET_MAX)
		return kp_diag_set(d, -EFBIG, "%s %s: larger than %d bytes: refused", what, path,
				   KP_SECRET_MAX);
	return 0;
}

int kp_secret_read(const char *path, const char *what, char **out, size_t *len, struct kp_diag *d)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	char *buf;
	size_t n = 0;
	int err;

	*out = NULL;
	*len = 0;
	if (fd < 0)
		return kp_diag_errno(d, -errno, "%s %s", what,
				     path); /* ELOOP: a link, never followed */
	if (fstat(fd, &st) < 0) {
		err = kp_diag_errno(d, -errno, "%s %s", what, path);
		close(fd);
		return err;
	}
	if ((err = check(path, what, &st, d)) < 0) {
		close(fd);
		return err;
	}
	/* one byte more than allowed: a file that grew since fstat is refused too */
	buf = kp_xmalloc(KP_SECRET_MAX + 2);
	for (;;) {
		ssize_t r = read(fd, buf + n, KP_SECRET_MAX + 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = kp_diag_errno(d, -errno, "%s %s", what, path);
			break;
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > KP_SECRET_MAX) {
			err = kp_diag_set(d, -EFBIG, "%s %s: larger than %d bytes: refused", what,
					  path, KP_SECRET_MAX);
			break;
		}
	}
	close(fd);
	if (err < 0) {
		kp_secret_free(buf, KP_SECRET_MAX + 2);
		return err;
	}
	buf[n] = '\0';
	*out = buf;
	*len = n;
	return 0;
}

void kp_secret_free(char *s, size_t len)
{
	if (!s)
		return;
	explicit_bzero(s, len ? len : strlen(s));
	free(s);
}
