#include "util/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

int kp_outfile_open(struct kp_outfile *out, const char *path, struct kp_diag *d)
{
	int fd;

	memset(out, 0, sizeof(*out));
	if (!path || strcmp(path, "-") == 0) {
		out->fp = stdout;
		return 0;
	}
	{
		struct stat sb;

		/* /dev/null, a FIFO, a terminal: nothing to replace, write directly */
		if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			out->fp = fopen(path, "w");
			if (!out->fp)
				return kp_diag_errno(d, -errno, "cannot open %s", path);
			out->path = kp_xstrdup(path);
			out->direct = true;
			return 0;
		}
	}
	out->path = kp_xstrdup(path);
	out->tmp = kp_xasprintf("%s.tmp.XXXXXX", path);
	fd = mkstemp(out->tmp);
	if (fd < 0) {
		int err = -errno;

		kp_diag_errno(d, err, "cannot create %s", path);
		free(out->tmp);
		free(out->path);
		memset(out, 0, sizeof(*out));
		return err;
	}
	/* mkstemp makes 0600; a profile is an ordinary file */
	{
		mode_t um = umask(0);

		umask(um);
		(void)fchmod(fd, 0666 & ~um);
	}
	out->fp = fdopen(fd, "w");
	if (!out->fp) {
		int err = -errno;

		close(fd);
		unlink(out->tmp);
		free(out->tmp);
		free(out->path);
		memset(out, 0, sizeof(*out));
		return kp_diag_errno(d, err, "cannot open %s", path);
	}
	return 0;
}

int kp_outfile_commit(struct kp_outfile *out, struct kp_diag *d)
{
	int err = 0;

	if (!out->fp)
		return 0;
	if (!out->path) {
		if (fflush(out->fp) != 0 || ferror(out->fp))
			err = kp_diag_errno(d, -(errno ? errno : EIO), "cannot write to stdout");
		out->fp = NULL;
		return err;
	}
	if (fflush(out->fp) != 0 || ferror(out->fp))
		err = kp_diag_errno(d, -(errno ? errno : EIO), "cannot write %s", out->path);
	if (fclose(out->fp) != 0 && !err)
		err = kp_diag_errno(d, -errno, "cannot write %s", out->path);
	out->fp = NULL;
	if (out->direct)
		return err;
	if (!err && rename(out->tmp, out->path) != 0)
		err = kp_diag_errno(d, -errno, "cannot rename %s to %s", out->tmp, out->path);
	if (err)
		unlink(out->tmp);
	free(out->tmp);
	out->tmp = NULL;
	/* keep the name for kp_outfile_name until abort or the next open */
	return err;
}

void kp_outfile_abort(struct kp_outfile *out)
{
	if (out->fp && out->path)
		fclose(out->fp);
	if (out->tmp) {
		unlink(out->tmp);
		free(out->tmp);
	}
	free(out->path);
	memset(out, 0, sizeof(*out));
}

const char *kp_outfile_name(const struct kp_outfile *out)
{
	return out->path ? out->path : "stdout";
}
