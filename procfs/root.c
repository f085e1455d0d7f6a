/* A process's files as it sees them (see root.h). */
#include "procfs/root.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "util/xalloc.h"

static int bump_nofile(void)
{
	static bool bumped;
	struct rlimit rl;

	if (bumped || getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur >= rl.rlim_max)
		return -EMFILE;
	bumped = true;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) ? -EMFILE : 0;
}

int kp_root_openat(int dirfd, const char *path, int flags)
{
	int fd = openat(dirfd, path, flags | O_CLOEXEC);

	if (fd < 0 && errno == EMFILE && bump_nofile() == 0)
		fd = openat(dirfd, path, flags | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int kp_root_open(const char *path, int flags)
{
	return kp_root_openat(AT_FDCWD, path, flags);
}

int kp_root_of(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	return kp_root_open(path, O_PATH | O_DIRECTORY);
}

bool kp_root_is_ours(int rootfd)
{
	struct stat a, b;

	return fstat(rootfd, &a) == 0 && stat("/", &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

ssize_t kp_root_fd_link(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size);
	return n < 0 ? -errno : n;
}

void kp_root_name(pid_t pid, const char *path, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/root%s", (int)pid, path);
}

int kp_root_open_in(int rootfd, const char *path, int flags)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC), .resolve = RESOLVE_IN_ROOT};
	static bool no_openat2;
	long fd;

	if (path[0] != '/')
		return -EINVAL;
	if (!no_openat2) {
		fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd < 0 && errno == EMFILE && bump_nofile() == 0)
			fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		if (errno != ENOSYS)
			return -errno;
		no_openat2 = true;
	}
	/* older kernels: absolute symlinks inside the root escape it */
	while (*path == '/')
		path++;
	return kp_root_openat(rootfd, path, flags);
}

/* Opens a regular file and checks its identity. */
static int check_file(int fd, const struct kp_mapping *m)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	if (m->ino &&
	    (st.st_ino != m->ino || major(st.st_dev) != m->maj || minor(st.st_dev) != m->min)) {
		close(fd);
		return -ESTALE; /* replaced since it was mapped */
	}
	return fd;
}

int kp_root_open_map_file(pid_t pid, uint64_t start, uint64_t end, int flags)
{
	char buf[96];

	if (pid <= 0 || end <= start)
		return -ENOENT;
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%llx-%llx", (int)pid,
		 (unsigned long long)start, (unsigned long long)end);
	return kp_root_open(buf, flags);
}

/* The very file mapped, checked. */
static int open_map_file(const struct kp_mapping *m)
{
	return check_file(kp_root_open_map_file(m->pid, m->start, m->end, O_RDONLY | O_NONBLOCK),
			  m);
}

int kp_root_open_mapping(const struct kp_mapping *m, char **debug_path)
{
	static const char deleted[] = " (deleted)";
	char *path;
	size_t len;
	int fd, rootfd;
	bool same_root = true;

	*debug_path = NULL;
	if (!m->path || m->path[0] != '/')
		return -ENOENT;
	if (kp_mapping_path_is_memfd(m->path)) {
		/* no path leads to a memfd (a file at "/memfd:NAME" would be
		 * another file), and it has no directory to look for a
		 * debuglink in: only the mapping itself */
		return open_map_file(m);
	}
	len = strlen(m->path);
	path = kp_xstrdup(m->path);
	if (len > sizeof(deleted) - 1 && strcmp(path + len - (sizeof(deleted) - 1), deleted) == 0)
		path[len - (sizeof(deleted) - 1)] = '\0';

	rootfd = m->pid > 0 ? kp_root_of(m->pid) : -ENOENT;
	if (rootfd >= 0)
		same_root = kp_root_is_ours(rootfd);
	fd = open_map_file(m);
	if (fd < 0 && rootfd >= 0)
		fd = check_file(kp_root_open_in(rootfd, path, O_RDONLY | O_NONBLOCK), m);
	if (fd < 0 && same_root)
		fd = check_file(kp_root_open(path, O_RDONLY | O_NONBLOCK), m);
	if (fd >= 0)
		*debug_path = same_root ? kp_xstrdup(path)
					: kp_xasprintf("/proc/%d/root%s", (int)m->pid, path);
	if (rootfd >= 0)
		close(rootfd);
	free(path);
	return fd;
}
