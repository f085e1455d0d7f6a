/* The last K files written, by name (see keeplist.h). */
#include "util/keeplist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/xalloc.h"

/* A folder files were written in: its own descriptor, shared by its
 * names (refs), closed when the last goes. */
struct folder {
	int fd;
	dev_t dev;
	ino_t ino;
	size_t refs;
};

struct name {
	size_t folder; /* index in folders */
	char *base;    /* the name in the folder */
	char *path;    /* for messages */
	dev_t dev;     /* the file written */
	ino_t ino;
};

struct kp_keeplist {
	size_t keep;
	struct name *v; /* oldest first */
	size_t n, cap;
	struct folder *folders;
	size_t nfolders, fcap;
};

struct kp_keeplist *kp_keeplist_new(size_t keep)
{
	struct kp_keeplist *k = kp_xcalloc(1, sizeof(*k));

	k->keep = keep;
	return k;
}

static void drop_folder(struct kp_keeplist *k, size_t i)
{
	struct folder *f = &k->folders[i];

	if (--f->refs == 0 && f->fd >= 0) {
		close(f->fd);
		f->fd = -1;
	}
}

void kp_keeplist_free(struct kp_keeplist *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].base);
		free(k->v[i].path);
	}
	for (size_t i = 0; i < k->nfolders; i++)
		if (k->folders[i].fd >= 0)
			close(k->folders[i].fd);
	free(k->v);
	free(k->folders);
	free(k);
}

/* The folder of dirfd in the table (a reference taken), or -errno. */
static long take_folder(struct kp_keeplist *k, int dirfd)
{
	struct stat st;
	size_t free_slot = k->nfolders;
	int fd;

	if (fstat(dirfd, &st) < 0)
		return -errno;
	for (size_t i = 0; i < k->nfolders; i++) {
		struct folder *f = &k->folders[i];

		if (f->fd >= 0 && f->dev == st.st_dev && f->ino == st.st_ino) {
			f->refs++;
			return (long)i;
		}
		if (f->fd < 0 && free_slot == k->nfolders)
			free_slot = i;
	}
	/* one descriptor a folder holding kept names: K at most */
	fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	if (free_slot == k->nfolders) {
		kp_xgrow(&k->folders, &k->fcap, k->nfolders + 1, sizeof(*k->folders));
		k->nfolders++;
	}
	k->folders[free_slot] = (struct folder){fd, st.st_dev, st.st_ino, 1};
	return (long)free_slot;
}

static void forget(struct kp_keeplist *k, size_t i)
{
	drop_folder(k, k->v[i].folder);
	free(k->v[i].base);
	free(k->v[i].path);
	memmove(k->v + i, k->v + i + 1, (k->n - i - 1) * sizeof(*k->v));
	k->n--;
}

/* Removes the oldest name's file if it is still the one written. Returns
 * 1 when removed, 0 when gone or replaced (left), -errno. */
static int remove_oldest(struct kp_keeplist *k, struct kp_diag *d)
{
	struct name *o = &k->v[0];
	int fd = k->folders[o->folder].fd;
	struct stat st;
	int ret = 0;

	if (fstatat(fd, o->base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	    st.st_dev == o->dev && st.st_ino == o->ino) {
		if (unlinkat(fd, o->base, 0) == 0)
			ret = 1;
		else if (errno != ENOENT)
			ret = kp_diag_errno(d, -errno, "--keep: cannot remove %s", o->path);
	}
	forget(k, 0);
	return ret;
}

int kp_keeplist_add(struct kp_keeplist *k, int dirfd, const char *base, const char *path,
		    struct kp_diag *d)
{
	struct stat ds, st;
	long folder;
	int removed = 0, err = 0;

	if (k->keep == 0)
		return 0;
	if (fstat(dirfd, &ds) < 0 || fstatat(dirfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return kp_diag_errno(d, -errno, "--keep: cannot follow %s", path);
	/* the same name again: it moves to the end (its file is the new one) */
	for (size_t i = 0; i < k->n; i++) {
		const struct folder *f = &k->folders[k->v[i].folder];

		if (f->dev == ds.st_dev && f->ino == ds.st_ino && strcmp(k->v[i].base, base) == 0) {
			forget(k, i);
			break;
		}
	}
	folder = take_folder(k, dirfd);
	if (folder < 0)
		return kp_diag_errno(d, (int)folder, "--keep: cannot follow %s", path);
	kp_xgrow(&k->v, &k->cap, k->n + 1, sizeof(*k->v));
	k->v[k->n++] = (struct name){(size_t)folder, kp_xstrdup(base), kp_xstrdup(path), st.st_dev,
				     st.st_ino};
	while (k->n > k->keep) {
		int r = remove_oldest(k, err ? NULL : d);

		if (r > 0)
			removed++;
		else if (r < 0 && !err)
			err = r;
	}
	return err ? err : removed;
}

const char *kp_keeplist_at(const struct kp_keeplist *k, size_t i)
{
	return i < k->n ? k->v[i].path : NULL;
}
