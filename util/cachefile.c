#include "util/cachefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/xalloc.h"

bool kp_cachefile_trusted(const struct stat *st, mode_t type)
{
	return (st->st_mode & S_IFMT) == type && st->st_uid == geteuid() &&
	       !(st->st_mode & (S_IWGRP | S_IWOTH));
}

bool kp_cachefile_make_dir(const char *dir)
{
	struct stat st;
	char *path = kp_xstrdup(dir);

	/* the missing parents first (~/.cache, ~/.cache/kprof), mode 0700 */
	for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST) {
			free(path);
			return false;
		}
		*slash = '/';
	}
	free(path);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST)
		return false;
	return lstat(dir, &st) == 0 && kp_cachefile_trusted(&st, S_IFDIR);
}

int kp_cachefile_open(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !kp_cachefile_trusted(st, S_IFREG) || st->st_size == 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int kp_cachefile_begin(const char *dir, const char *prefix, char **tmp)
{
	int fd;

	*tmp = NULL;
	if (!kp_cachefile_make_dir(dir))
		return -1;
	*tmp = kp_xasprintf("%s/.%s-XXXXXX", dir, prefix);
	fd = mkostemp(*tmp, O_CLOEXEC); /* mode 0600 */
	if (fd < 0) {
		free(*tmp);
		*tmp = NULL;
	}
	return fd;
}

bool kp_cachefile_commit(char **tmp, int fd, bool ok, const char *path)
{
	if (!*tmp) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	if (fd < 0 || close(fd) != 0)
		ok = false;
	if (ok && rename(*tmp, path) != 0)
		ok = false;
	if (!ok)
		unlink(*tmp);
	free(*tmp);
	*tmp = NULL;
	return ok;
}
