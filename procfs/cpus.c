/* The online CPUs (see cpus.h). */
#include "procfs/cpus.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/cpulist.h"
#include "util/xalloc.h"

int kp_cpus_online(int **cpus)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n;

	if (f && fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return kp_cpulist_parse(buf, cpus);
	}
	if (f)
		fclose(f);
	n = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (n <= 0)
		n = 1;
	*cpus = kp_xmalloc((size_t)n * sizeof(int));
	for (int i = 0; i < n; i++)
		(*cpus)[i] = i;
	return n;
}

/* Every CPU of -C must be online: the kernel's own answer for another one
 * (ENODEV, or EINVAL blamed on the frequency) would mislead. */
int kp_cpus_check(const int *want, size_t nwant, const int *online, int nonline, struct kp_diag *d)
{
	for (size_t i = 0; i < nwant; i++) {
		bool found = false;
		char list[256];

		for (int j = 0; j < nonline && !found; j++)
			found = online[j] == want[i];
		if (found)
			continue;
		kp_cpulist_format(online, nonline, list, sizeof(list));
		return kp_diag_set(d, -ENODEV, "-C: CPU %d %s; the online CPUs are %s", want[i],
				   want[i] < (int)sysconf(_SC_NPROCESSORS_CONF) ? "is offline"
										: "does not exist",
				   list);
	}
	return 0;
}
