/* /proc/PID/maps (see maps.h). */
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

int kp_maps_parse_line(char *line, struct kp_mapping *e)
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
	e->kind = (uint8_t)kp_mapping_kind_of(p);
	return 0;
}

static size_t read_maps(FILE *f, pid_t pid, void (*fn)(void *arg, const struct kp_mapping *m),
			void *arg)
{
	char *line = NULL;
	size_t cap = 0, bad = 0;
	ssize_t n;

	while ((n = getline(&line, &cap, f)) > 0) {
		struct kp_mapping e;

		if (kp_maps_parse_line(line, &e) < 0) {
			bad++;
			continue;
		}
		e.pid = pid;
		if (e.exec)
			fn(arg, &e);
	}
	free(line);
	return bad;
}

size_t kp_maps_read(FILE *f, void (*fn)(void *arg, const struct kp_mapping *m), void *arg)
{
	return read_maps(f, 0, fn, arg);
}

int kp_maps_read_pid(pid_t pid, void (*fn)(void *arg, const struct kp_mapping *m), void *arg)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	read_maps(f, pid, fn, arg);
	fclose(f);
	return 0;
}

int kp_maps_find_self(const char *name, uint64_t *start, uint64_t *end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (err && getline(&line, &cap, f) > 0) {
		struct kp_mapping e;

		if (kp_maps_parse_line(line, &e) == 0 && strcmp(e.path, name) == 0) {
			*start = e.start;
			*end = e.end;
			err = 0;
		}
	}
	free(line);
	fclose(f);
	return err;
}
