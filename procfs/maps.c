#include "procfs/maps.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int parse_hex(const char **pp, uint64_t *v)
{
	const char *p = *pp;
	char *end;

	if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') || (*p >= 'A' && *p <= 'F')))
		return -EINVAL;
	errno = 0;
	*v = strtoull(p, &end, 16);
	if (errno || end == p)
		return -EINVAL;
	*pp = end;
	return 0;
}

int kp_maps_parse_line(char *line, struct kp_maps_entry *e)
{
	const char *p = line;
	uint64_t maj, min;
	size_t len = strlen(line);

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	memset(e, 0, sizeof(*e));
	if (parse_hex(&p, &e->start) || *p++ != '-' || parse_hex(&p, &e->end) || *p++ != ' ')
		return -EINVAL;
	if (e->end <= e->start || strlen(p) < 5 || p[4] != ' ')
		return -EINVAL;
	e->exec = p[2] == 'x';
	p += 5;
	if (parse_hex(&p, &e->pgoff) || *p++ != ' ')
		return -EINVAL;
	if (parse_hex(&p, &maj) || *p++ != ':' || parse_hex(&p, &min) || *p++ != ' ')
		return -EINVAL;
	e->maj = (uint32_t)maj;
	e->min = (uint32_t)min;
	{
		char *end;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		e->ino = strtoull(p, &end, 10);
		p = end;
	}
	while (*p == ' ')
		p++;
	e->path = p;
	return 0;
}

size_t kp_maps_read(FILE *f, void (*fn)(void *arg, const struct kp_maps_entry *e), void *arg)
{
	char *line = NULL;
	size_t cap = 0, bad = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, f)) > 0) {
		struct kp_maps_entry e;

		if (kp_maps_parse_line(line, &e) < 0) {
			bad++;
			continue;
		}
		if (e.exec)
			fn(arg, &e);
	}
	free(line);
	return bad;
}

int kp_proc_read_comm(pid_t pid, pid_t tid, char *buf, size_t size)
{
	char path[64];
	int fd;
	ssize_t n;

	if (tid)
		snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	else
		snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -ENODATA;
	buf[n] = '\0';
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}
