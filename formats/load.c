#include "formats/folded_read.h"
#include "formats/load.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profile/folded.h"
#include "profile/fold.h"
#include "formats/recording.h"
#include "formats/zstdio.h"
#include "util/xalloc.h"

/* A stream that gives back the bytes read to recognise the file, then the
 * rest of it: stdin cannot be rewound. The head is long enough to tell
 * binary data (a NUL byte, which folded text never has) from text. */
struct peeked {
	unsigned char head[4096];
	size_t n, pos;
	FILE *in;
};

static ssize_t peeked_read(void *cookie, char *buf, size_t size)
{
	struct peeked *p = cookie;

	if (p->pos < p->n) {
		size_t k = p->n - p->pos < size ? p->n - p->pos : size;

		memcpy(buf, p->head + p->pos, k);
		p->pos += k;
		return (ssize_t)k;
	}
	size = fread(buf, 1, size, p->in);
	if (size == 0 && ferror(p->in))
		return -1;
	return (ssize_t)size;
}

static int peeked_close(void *cookie)
{
	(void)cookie;
	return 0;
}

/* Why reading the zstd reader arg's stream failed, for kp_folded_read. */
static const char *zstd_error(const void *arg)
{
	return kp_zstd_reader_error(arg);
}

/* Folded text from in (decompressed by z when not NULL) into a new
 * profile. */
static int load_folded(FILE *in, struct kp_zstd_reader *z, const char *name,
		       const struct kp_load_opts *o, struct kp_profile **out,
		       struct kp_load_info *info, struct kp_diag *d)
{
	struct kp_folded *f = kp_folded_new();
	struct kp_folded_read_opts ro = {
		.strict = o->strict, .read_error = z ? zstd_error : NULL, .read_error_arg = z};
	struct kp_diag rd = {{0}};
	uint64_t bad = 0;
	int err = kp_folded_read(f, in, name, &ro, &bad, &rd);

	if (info) {
		info->bad_lines = bad;
		info->differential = kp_folded_differential(f);
		if (bad)
			snprintf(info->first_bad, sizeof(info->first_bad), "%s", rd.msg);
	}
	if (!err && !kp_folded_nstacks(f))
		err = bad ? kp_diag_set(d, -EINVAL,
					"%s: no valid stack: %llu line%s with invalid format; the "
					"first: %s",
					name, (unsigned long long)bad, bad == 1 ? "" : "s", rd.msg)
			  : kp_diag_set(d, -EINVAL, "%s: no stacks (an empty profile)", name);
	else if (err)
		kp_diag_set(d, err, "%s", rd.msg);
	if (!err)
		*out = kp_fold_to_profile(f, o->countname);
	kp_folded_free(f);
	return err;
}

/* path opened for reading; with regular_only never through a link and
 * only when it is a regular file (O_NONBLOCK: a FIFO does not block the
 * open). NULL with errno and d set. */
static FILE *open_input(const char *path, bool regular_only, struct kp_diag *d)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NOFOLLOW | O_NONBLOCK : 0));
	struct stat st;
	FILE *in;

	if (fd < 0) {
		int err = errno;

		kp_diag_errno(d, -err,
			      err == ELOOP && regular_only ? "cannot open %s (a symbolic link)"
							   : "cannot open %s",
			      path);
		errno = err;
		return NULL;
	}
	if (regular_only && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))) {
		kp_diag_set(d, -EINVAL, "cannot read %s: not a regular file", path);
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	in = fdopen(fd, "r");
	if (!in) {
		int err = errno;

		kp_diag_errno(d, -err, "cannot open %s", path);
		close(fd);
		errno = err;
	}
	return in;
}

int kp_load_profile(const char *path, const struct kp_load_opts *o, struct kp_profile **out,
		    struct kp_load_info *info, struct kp_diag *d)
{
	static const struct kp_load_opts defaults = {0};
	bool is_stdin = strcmp(path, "-") == 0;
	const char *name = is_stdin ? "stdin" : path;
	FILE *in, *fp;
	cookie_io_functions_t io = {.read = peeked_read, .close = peeked_close};
	struct peeked pk;
	struct stat st;
	int err;

	*out = NULL;
	if (!o)
		o = &defaults;
	if (info)
		memset(info, 0, sizeof(*info));
	in = is_stdin ? stdin : open_input(path, o->regular_only, d);
	if (!in)
		return -errno;
	pk = (struct peeked){.in = in};
	if (fstat(fileno(in), &st) == 0 && S_ISDIR(st.st_mode)) {
		err = kp_diag_set(d, -EISDIR, "cannot read %s: it is a directory", name);
		goto out_in;
	}
	pk.n = fread(pk.head, 1, sizeof(pk.head), in);
	if (pk.n < sizeof(pk.head) && ferror(in)) {
		err = kp_diag_errno(d, -(errno ? errno : EIO), "cannot read %s", name);
		goto out_in;
	}
	fp = fopencookie(&pk, "r", io);
	if (!fp) {
		err = kp_diag_errno(d, -ENOMEM, "cannot read %s", name);
		goto out_in;
	}
	if (kp_recording_magic(pk.head, pk.n)) {
		if (info)
			info->format = "kprof";
		err = kp_recording_read(fp, name, out, d);
	} else if (kp_zstd_magic(pk.head, pk.n)) {
		struct kp_zstd_reader *z = kp_zstd_reader_new(fp);

		if (info)
			info->format = "folded (zstd)";
		/* a damaged stream is a read error of the folded reader, which
		 * names the line; nothing is taken for the end of the input */
		err = load_folded(kp_zstd_reader_file(z), z, name, o, out, info, d);
		kp_zstd_reader_free(z);
	} else if (memchr(pk.head, 0, pk.n)) {
		/* a .kprof whose magic is damaged, pprof, an executable, ... */
		err = kp_diag_set(d, -EINVAL,
				  "%s: not a profile kprof reads (binary data, neither a .kprof "
				  "recording nor zstd-compressed folded stacks)",
				  name);
	} else {
		if (info)
			info->format = "folded";
		err = load_folded(fp, NULL, name, o, out, info, d);
	}
	fclose(fp);
out_in:
	if (!is_stdin)
		fclose(in);
	return err;
}
