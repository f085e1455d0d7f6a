/* What /proc says of the kernel (see kernel.h). */
#include "procfs/kernel.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/xalloc.h"

/* /proc/NAME opened for reading, or -1. */
static int open_proc(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "/proc/%s", name);
	return open(path, O_RDONLY | O_CLOEXEC);
}

char *kp_kernel_read(const char *name)
{
	size_t len = 0, cap = 4096;
	char *buf = kp_xmalloc(cap + 1);
	int fd = open_proc(name);

	if (fd < 0) {
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (len == cap) {
			if (cap >= (16u << 20)) /* not a small file after all */
				break;
			cap *= 2;
			buf = kp_xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	return buf;
}

ssize_t kp_kernel_read_start(const char *name, char *buf, size_t size)
{
	ssize_t n;
	int fd = size ? open_proc(name) : -1;

	if (fd < 0)
		return -1;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}
