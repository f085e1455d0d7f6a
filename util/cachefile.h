/* kp_cachedir, kp_cachefile: kprof's private cache directory
 * ($XDG_CACHE_HOME/kprof, else ~/.cache/kprof) and the files it keeps
 * there between runs: the per-boot copy of /proc/kallsyms and, in its
 * symbols/, the symbol indexes of builds.
 *
 * The rule for kprof's own directory and every directory below it: it is
 * opened without following a symbolic link (O_NOFOLLOW | O_DIRECTORY) and
 * used only when it is owned by the effective user and gives group and
 * others no permission at all (it is made mode 0700); otherwise it is not
 * used, and the handle's note says so once (a directory that merely
 * cannot be made, in a read-only or unwritable home, costs speed only and
 * is not mentioned). What lies above it
 * ($XDG_CACHE_HOME, ~/.cache, either a link) is the user's choice. Each
 * directory is opened once per run, and everything below it is reached
 * relative to that descriptor (openat, mkdirat, renameat, unlinkat,
 * fstatat), never through the path again: a link swapped in later is not
 * followed either.
 *
 * Files are written under a temporary name (mode 0600) and renamed into
 * place, and read only when they are regular files (O_NOFOLLOW) owned by
 * the user that nobody else can write. What is in them is the caller's
 * (each kind of file carries its own checksum, util/checksum.h). */
#ifndef KP_UTIL_CACHEFILE_H
#define KP_UTIL_CACHEFILE_H

#include <dirent.h>
#include <stdbool.h>
#include <sys/stat.h>

struct kp_cachedir;

/* Receives the one sentence saying that a cache directory is not used,
 * and why. */
typedef void (*kp_cachedir_note_fn)(void *arg, const char *msg);

/* A handle on kprof's cache directory path, opened at its first use (its
 * missing parents are then made too, mode 0700). note (may be NULL) is
 * told, once per handle, when what is at the path breaks the rule; handles
 * made by kp_cachedir_sub share it. Returns a new handle (never NULL);
 * free with kp_cachedir_free. */
struct kp_cachedir *kp_cachedir_new(const char *path, kp_cachedir_note_fn note, void *arg);

/* A handle on parent's subdirectory name (one path component), opened at
 * its first use below parent's descriptor. Returns a new handle (never
 * NULL), to be freed before parent. */
struct kp_cachedir *kp_cachedir_sub(struct kp_cachedir *parent, const char *name);
void kp_cachedir_free(struct kp_cachedir *dir);

/* The directory's descriptor (owned by dir, open until kp_cachedir_free),
 * opened at the first call and made (mode 0700) when create. -1 when it is
 * missing and !create (a later call may make it), or when it cannot be
 * made or may not be used (the note has said why): then every later call
 * is -1 too. */
int kp_cachedir_fd(struct kp_cachedir *dir, bool create);

/* The directory's path, for messages (owned by dir). */
const char *kp_cachedir_path(const struct kp_cachedir *dir);

/* Lists the directory: NULL when it is not open (or cannot be read).
 * dirfd() of the result is the same directory, for *at calls; closedir
 * it. */
DIR *kp_cachedir_list(struct kp_cachedir *dir);

/* Opens dir/name (name is one path component) for reading when it is a
 * trusted non-empty regular file; fills *st. Returns the fd, or -1. */
int kp_cachefile_open(struct kp_cachedir *dir, const char *name, struct stat *st);

/* Is dir/name a trusted regular file (not followed if a link)? Fills *st. */
bool kp_cachefile_exists(struct kp_cachedir *dir, const char *name, struct stat *st);

/* Starts writing a new file in dir (made if missing): returns an fd to
 * write to and sets *tmp to its temporary name in dir (heap), or returns
 * -1 with *tmp NULL. Finish with kp_cachefile_commit. */
int kp_cachefile_begin(struct kp_cachedir *dir, const char *prefix, char **tmp);

/* Closes fd; when ok (and the close worked) renames *tmp to name in dir,
 * else removes it. Frees *tmp and sets it to NULL. Returns true when name
 * now holds the new file. */
bool kp_cachefile_commit(struct kp_cachedir *dir, char **tmp, int fd, bool ok, const char *name);

/* Removes dir/name, if the directory is open. */
void kp_cachefile_remove(struct kp_cachedir *dir, const char *name);

#endif
