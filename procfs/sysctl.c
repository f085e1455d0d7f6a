/* /proc/sys tunables (see sysctl.h). */
#include "procfs/sysctl.h"

#include <errno.h>
#include <stdio.h>

int kp_sysctl_read(const char *name, long *v)
{
	char path[256];
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/sys/%s", name);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%ld", v);
	fclose(f);
	return n == 1 ? 0 : -EINVAL;
}
