#include "util/input.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

int kp_input_open(struct kp_input *in, const char *path, struct kp_diag *d)
{
	struct stat st;

	in->is_stdin = strcmp(path, "-") == 0;
	in->name = in->is_stdin ? "stdin" : path;
	in->fp = in->is_stdin ? stdin : fopen(path, "re");
	if (!in->fp)
		return kp_diag_errno(d, -errno, "cannot open %s", path);
	if (fstat(fileno(in->fp), &st) == 0 && S_ISDIR(st.st_mode))
		return kp_diag_set(d, -EISDIR, "cannot read %s: it is a directory", in->name);
	return 0;
}

void kp_input_close(struct kp_input *in)
{
	if (in->fp && !in->is_stdin)
		fclose(in->fp);
	in->fp = NULL;
}
