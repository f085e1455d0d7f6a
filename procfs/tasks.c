/* The tasks of /proc (see tasks.h). */
#include "procfs/tasks.h"

#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs/root.h"
#include "util/xalloc.h"

/* The positive numbers a directory of /proc names entries by; digits_only:
 * entries that do not start with a digit are skipped (/proc's own files). */
static int list_dir(const char *path, bool digits_only, pid_t **out, size_t *n)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	pid_t *v = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t id;

		if (digits_only && !isdigit((unsigned char)de->d_name[0]))
			continue;
		id = (pid_t)atoi(de->d_name);
		if (id <= 0 && !digits_only)
			continue;
		kp_xgrow(&v, &cap, *n + 1, sizeof(*v));
		v[(*n)++] = id;
	}
	closedir(dir);
	*out = v;
	return 0;
}

size_t kp_tasks_processes(pid_t **out)
{
	size_t n;

	list_dir("/proc", true, out, &n);
	return n;
}

int kp_tasks_threads(pid_t pid, pid_t **out, size_t *n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	return list_dir(path, false, out, n);
}

size_t kp_tasks_of(pid_t pid, pid_t **out)
{
	pid_t *v;
	size_t n;

	kp_tasks_threads(pid, &v, &n);
	if (!n) {
		free(v);
		v = kp_xmalloc(sizeof(*v));
		v[n++] = pid;
	}
	*out = v;
	return n;
}

int kp_tasks_owner(pid_t pid, uid_t *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st) != 0)
		return -errno;
	*uid = st.st_uid;
	return 0;
}

ssize_t kp_tasks_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = kp_root_open(path, O_RDONLY);
	if (fd < 0)
		return fd;
	n = pread(fd, buf, len, (off_t)addr);
	close(fd);
	return n < 0 ? -EIO : n;
}

int kp_tasks_comm(pid_t pid, pid_t tid, char *buf, size_t size)
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
