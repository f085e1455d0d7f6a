/* kp_cachefile: files kprof keeps between runs in its private cache
 * directory ($XDG_CACHE_HOME/kprof, ~/.cache/kprof): the per-boot copy of
 * /proc/kallsyms and the symbol indexes of binaries. The directory is made
 * mode 0700, files are written under a temporary name (mode 0600) and
 * renamed into place, and a file is only read when it is a regular file
 * (O_NOFOLLOW) owned by us that nobody else can write. */
#ifndef KP_UTIL_CACHEFILE_H
#define KP_UTIL_CACHEFILE_H

#include <stdbool.h>
#include <sys/stat.h>

/* Ours and private: of type (S_IFREG, S_IFDIR), owned by the effective
 * user, writable by nobody else. */
bool kp_cachefile_trusted(const struct stat *st, mode_t type);

/* Makes dir (and its missing parents, e.g. ~/.cache) with mode 0700; true
 * when dir is then a directory we trust. */
bool kp_cachefile_make_dir(const char *dir);

/* Opens path for reading when it is a trusted non-empty regular file;
 * fills *st. Returns the fd, or -1. */
int kp_cachefile_open(const char *path, struct stat *st);

/* Starts writing a new file in dir (made if missing): returns an fd to
 * write to and sets *tmp to its temporary path (heap), or returns -1 with
 * *tmp NULL. Finish with kp_cachefile_commit. */
int kp_cachefile_begin(const char *dir, const char *prefix, char **tmp);

/* Closes fd; when ok (and the close worked) renames *tmp to path, else
 * removes it. Frees *tmp and sets it to NULL. Returns true when path now
 * holds the new file. */
bool kp_cachefile_commit(char **tmp, int fd, bool ok, const char *path);

#endif
