/* /proc/PID/status (see status.h). */
#include "procfs/status.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "procfs/root.h"

int kp_status_parse(const char *text, struct kp_status *st)
{
	const char *p;

	memset(st, 0, sizeof(*st));
	p = strstr(text, "\nTgid:");
	if (p) {
		long v = strtol(p + 6, NULL, 10);

		if (v > 0 && v <= INT32_MAX)
			st->tgid = (pid_t)v;
	}
	p = strstr(text, "\nNStgid:");
	if (p) {
		const char *q = p + 8;

		/* the last number on the line is the innermost namespace's */
		for (;;) {
			char *end;
			long v;

			while (*q == ' ' || *q == '\t')
				q++;
			if (*q < '0' || *q > '9')
				break;
			v = strtol(q, &end, 10);
			if (v > 0 && v <= INT32_MAX)
				st->nspid = (pid_t)v;
			q = end;
		}
	}
	p = strstr(text, "\nUid:");
	if (p) {
		unsigned long u[4];

		if (sscanf(p + 5, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			for (int i = 0; i < 4; i++)
				st->uids[i] = (uid_t)u[i];
			st->have_uids = true;
		}
	}
	p = strstr(text, "\nVmRSS:");
	if (p)
		st->rss_kib = strtoul(p + 7, NULL, 10);
	p = strstr(text, "\nSigPnd:");
	if (p)
		st->sig_pending |= strtoull(p + 8, NULL, 16);
	p = strstr(text, "\nShdPnd:");
	if (p)
		st->sig_pending |= strtoull(p + 8, NULL, 16);
	return 0;
}

static int read_path(const char *path, struct kp_status *st)
{
	char buf[8192];
	ssize_t n;
	size_t len = 0;
	int fd;

	memset(st, 0, sizeof(*st));
	fd = kp_root_open(path, O_RDONLY);
	if (fd < 0)
		return fd;
	/* leading newline so every field can be matched as "\nName:" */
	buf[len++] = '\n';
	while (len < sizeof(buf) - 1 && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	buf[len] = '\0';
	return kp_status_parse(buf, st);
}

int kp_status_read(pid_t pid, struct kp_status *st)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	return read_path(path, st);
}

int kp_status_read_self(struct kp_status *st)
{
	return read_path("/proc/self/status", st);
}
