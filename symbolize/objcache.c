#include "symbolize/objcache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "procfs/maps.h"
#include "procfs/root.h"
#include "procfs/tasks.h"
#include "symbolize/elf_object.h"
#include "symbolize/idmap.h"
#include "util/hash.h"
#include "util/xalloc.h"

struct object {
	char *path;
	uint8_t build_id[KP_BUILD_ID_MAX];
	size_t build_id_len;
	/* A build-id is a claim, not a proof: one build-id may have an object
	 * of files kprof trusts (kp_elf_object_file_trusted), one of the other
	 * files claiming it, and one without a file (named only from the
	 * build's index, which only trusted files write). */
	enum trust { NOFILE, OTHER, TRUSTED } trust;
	struct kp_elf_object *elf; /* without a file until one is found; NULL once released */
	uint32_t last_used;	   /* the window it was last asked for in (kp_objcache_touch) */
};

/* One name under which an object was seen. */
struct filekey {
	uint64_t ino;
	uint32_t maj, min;
	char *path;
	uint32_t obj;
};

struct kp_objcache {
	struct object *objs; /* id = index + 1 */
	size_t nobjs, cap;
	struct filekey *keys; /* id = index + 1 */
	size_t nkeys, keys_cap;
	struct kp_idmap by_build_id; /* -> object id */
	struct kp_idmap by_file;     /* -> filekey id */
	struct kp_notes *notes;
	unsigned failed_notes;
	uint32_t window; /* the current window of a continuous recording (0: one run) */
};

/* Only the first few unreadable files are named; the stats count them all. */
#define MAX_FAILED_NOTES 8

struct kp_objcache *kp_objcache_new(struct kp_notes *notes)
{
	struct kp_objcache *oc = kp_xcalloc(1, sizeof(*oc));

	oc->notes = notes;
	return oc;
}

void kp_objcache_free(struct kp_objcache *oc)
{
	if (!oc)
		return;
	for (size_t i = 0; i < oc->nobjs; i++) {
		kp_elf_object_free(oc->objs[i].elf);
		free(oc->objs[i].path);
	}
	for (size_t i = 0; i < oc->nkeys; i++)
		free(oc->keys[i].path);
	free(oc->objs);
	free(oc->keys);
	kp_idmap_fini(&oc->by_build_id);
	kp_idmap_fini(&oc->by_file);
	free(oc);
}

struct bid_query {
	const struct kp_objcache *oc;
	const uint8_t *id;
	size_t len;
	enum trust trust;
};

static bool bid_eq(void *ctx, uint32_t id)
{
	const struct bid_query *q = ctx;
	const struct object *o = &q->oc->objs[id - 1];

	return o->build_id_len == q->len && memcmp(o->build_id, q->id, q->len) == 0 &&
	       o->trust == q->trust;
}

/* The object of build-id id[0..len) and trust. */
static uint32_t find_build_id(struct kp_objcache *oc, const uint8_t *id, size_t len,
			      enum trust trust)
{
	struct bid_query q = {oc, id, len, trust};

	return kp_idmap_find(&oc->by_build_id, kp_hash_bytes(id, len, 0x6b70), bid_eq, &q);
}

struct file_query {
	const struct kp_objcache *oc;
	const struct filekey *k;
};

static bool file_eq(void *ctx, uint32_t id)
{
	const struct file_query *q = ctx;
	const struct filekey *a = &q->oc->keys[id - 1], *b = q->k;

	return a->ino == b->ino && a->maj == b->maj && a->min == b->min &&
	       strcmp(a->path, b->path) == 0;
}

static uint64_t file_hash(const struct filekey *k)
{
	uint64_t h = kp_hash_bytes(k->path, strlen(k->path), k->ino);

	return h ^ kp_hash_u64((uint64_t)k->maj << 32 | k->min);
}

/* The object first seen under file key k, unless its build-id and the
 * mapping's (both known) differ: MMAP2 records that carry a build-id carry
 * no inode, so a key is then a path alone, and a path (a program rebuilt
 * in place, a memfd name every run of a launcher reuses) can hold another
 * build from one mapping to the next. */
static uint32_t find_file(struct kp_objcache *oc, const struct filekey *k, const uint8_t *bid,
			  size_t bid_len)
{
	struct file_query q = {oc, k};
	uint32_t kid = kp_idmap_find(&oc->by_file, file_hash(k), file_eq, &q), id;
	const struct object *o;

	if (!kid)
		return 0;
	id = oc->keys[kid - 1].obj;
	o = &oc->objs[id - 1];
	if (bid_len && o->build_id_len &&
	    (o->build_id_len != bid_len || memcmp(o->build_id, bid, bid_len) != 0))
		return 0;
	return id;
}

static void add_file(struct kp_objcache *oc, const struct filekey *k, uint32_t obj)
{
	struct filekey *nk;

	kp_xgrow(&oc->keys, &oc->keys_cap, oc->nkeys + 1, sizeof(*oc->keys));
	nk = &oc->keys[oc->nkeys++];
	*nk = *k;
	nk->path = kp_xstrdup(k->path);
	nk->obj = obj;
	kp_idmap_put(&oc->by_file, file_hash(k), (uint32_t)oc->nkeys);
}

/* Copies len bytes into a sealed-off anonymous file so the vDSO image can
 * go through the same fd-based path as every other object. */
static int memfd_with(const void *data, size_t len)
{
	int fd = memfd_create("kprof-vdso", MFD_CLOEXEC);
	const char *p = data;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n <= 0) {
			close(fd);
			return n < 0 ? -errno : -EIO;
		}
		p += n;
		len -= (size_t)n;
	}
	return fd;
}

/* The vDSO is the same image in every process of the same ABI: use ours
 * when the sizes agree (no need for the target to be alive), else read the
 * target's through /proc/PID/mem (a 32-bit process, say). */
static int vdso_fd(const struct kp_mapping *m)
{
	uint64_t s, e, len = m->end - m->start;
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	void *buf;
	ssize_t n;
	int memfd;

	if (base && kp_maps_find_self("[vdso]", &s, &e) == 0 && s == base && e - s == len)
		return memfd_with((const void *)base, len);
	if (m->pid <= 0 || !len || len > (64u << 20))
		return -ENOENT;
	buf = kp_xmalloc(len);
	n = kp_tasks_read_mem(m->pid, m->start, buf, len);
	if (n < 0) {
		free(buf);
		return (int)n;
	}
	memfd = n == (ssize_t)len ? memfd_with(buf, len) : -EIO;
	free(buf);
	return memfd;
}

static void note_failure(struct kp_objcache *oc, const char *path, int err)
{
	oc->failed_notes++;
	if (oc->failed_notes == MAX_FAILED_NOTES + 1)
		kp_notes_add(oc->notes, "more binaries could not be opened (not listed)");
	if (oc->failed_notes > MAX_FAILED_NOTES)
		return;
	if (err == -ESTALE)
		kp_notes_add(oc->notes,
			     "%s was replaced after it was mapped and the mapped file could not be "
			     "reached; its frames are shown as [unknown]",
			     path);
	else
		kp_notes_add(oc->notes, "cannot open %s: %s; its frames are shown as [unknown]",
			     path, strerror(-err));
}

/* Opens the file behind m; fills *debug_path (heap or NULL). Returns an fd
 * or a negative errno. */
static int open_mapping(const struct kp_mapping *m, bool vdso, char **debug_path)
{
	*debug_path = NULL;
	if (vdso)
		return vdso_fd(m);
	if (!m->path || m->path[0] != '/')
		return -ENOENT; /* "[heap]", "//anon", "anon_inode:...": no file */
	return kp_root_open_mapping(m, debug_path);
}

/* Gives an object that has no file yet the one behind m, if m's file has
 * the object's identity (for a build, only a trusted file: another's
 * would give the build's other mappings its names). Until then only its
 * saved index, if any, names it (the process gone, the file deleted, the
 * container stopped). */
static void retry_open(struct kp_objcache *oc, uint32_t id, const struct kp_mapping *m, bool vdso)
{
	struct object *o = &oc->objs[id - 1];
	uint8_t bid[KP_BUILD_ID_MAX];
	size_t len;
	char *dpath;
	int fd;

	if (!o->elf || !kp_elf_object_wants_file(o->elf))
		return;
	fd = open_mapping(m, vdso, &dpath);
	if (fd < 0)
		return;
	len = kp_elf_object_read_build_id(fd, bid, sizeof(bid));
	if ((o->build_id_len && (len != o->build_id_len || memcmp(bid, o->build_id, len) != 0 ||
				 !kp_elf_object_file_trusted(fd))) ||
	    !kp_elf_object_give_file(o->elf, fd, dpath))
		close(fd);
	else
		o->trust = o->build_id_len || kp_elf_object_file_trusted(fd) ? TRUSTED : OTHER;
	free(dpath);
}

/* Checks the file open as fd against the mapping's build-id bid: a
 * mapping without one takes the file's; when the path now holds another
 * build (not the mapped code) the file is closed and -ESTALE comes back.
 * Returns fd otherwise. */
static int check_build(int fd, uint8_t *bid, size_t *bid_len)
{
	uint8_t fbid[KP_BUILD_ID_MAX];
	size_t flen = kp_elf_object_read_build_id(fd, fbid, sizeof(fbid));

	if (!*bid_len) {
		*bid_len = flen;
		memcpy(bid, fbid, flen);
	} else if (flen && (flen != *bid_len || memcmp(fbid, bid, flen) != 0)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/* The build's object of the same trust; else a trusted file goes to the
 * build's object without a file (which it names if still in time; else
 * the object is named from the build's index, which only trusted files
 * write). The file k (open as fd, or fd < 0) joins it and the object takes
 * fd when it wants a file (else fd is closed). Returns the object's id, or
 * 0 when the build has no such object (fd untouched). */
static uint32_t join_build(struct kp_objcache *oc, const struct filekey *k, const uint8_t *bid,
			   size_t bid_len, enum trust trust, int fd, const char *dpath)
{
	struct object *o;
	uint32_t id;

	if (!bid_len || !((id = find_build_id(oc, bid, bid_len, trust)) ||
			  (trust == TRUSTED && (id = find_build_id(oc, bid, bid_len, NOFILE)))))
		return 0;
	add_file(oc, k, id);
	o = &oc->objs[id - 1];
	if (fd >= 0 && !(o->elf && kp_elf_object_give_file(o->elf, fd, dpath)))
		close(fd);
	else if (fd >= 0)
		o->trust = trust;
	return id;
}

/* A new object for the file k, open as fd (or not, fd < 0) and found at
 * dpath, of build bid; returns its id. */
static uint32_t add_object(struct kp_objcache *oc, const struct filekey *k, const uint8_t *bid,
			   size_t bid_len, enum trust trust, int fd, const char *dpath)
{
	struct object *o;
	uint32_t id;

	kp_xgrow(&oc->objs, &oc->cap, oc->nobjs + 1, sizeof(*oc->objs));
	o = &oc->objs[oc->nobjs++];
	memset(o, 0, sizeof(*o));
	id = (uint32_t)oc->nobjs;
	o->path = kp_xstrdup(k->path);
	o->trust = trust;
	o->build_id_len = bid_len;
	memcpy(o->build_id, bid, bid_len);
	o->elf = kp_elf_object_new(fd >= 0 ? fd : -1, o->path, dpath, o->build_id, o->build_id_len);
	if (bid_len)
		kp_idmap_put(&oc->by_build_id, kp_hash_bytes(bid, bid_len, 0x6b70), id);
	add_file(oc, k, id);
	return id;
}

/* kp_objcache_get, and kp_objcache_get_memfd when want_elf: then a file
 * that is not ELF (or, out of reach, has no build-id from the record) gets
 * no object and 0 comes back. */
static uint32_t find_or_add(struct kp_objcache *oc, const struct kp_mapping *m, bool want_elf)
{
	bool vdso = m->path && strcmp(m->path, "[vdso]") == 0;
	struct filekey k = {.ino = m->ino,
			    .maj = m->maj,
			    .min = m->min,
			    .path = (char *)(m->path ? m->path : "")};
	uint8_t bid[KP_BUILD_ID_MAX];
	size_t bid_len = 0;
	char *dpath = NULL;
	enum trust trust;
	uint32_t id, nofile;
	int fd;

	if (vdso)
		k.ino = m->end - m->start; /* one vDSO per image size (ABI) */
	if (m->build_id_size && m->build_id_size <= KP_MAPPING_BUILD_ID_MAX) {
		bid_len = m->build_id_size;
		memcpy(bid, m->build_id, bid_len);
		/* Another user's program may claim the build-id of root's. The
		 * build's trusted object answers for every mapping claiming it
		 * unopened (the others' code takes its names, which they could
		 * have given their code anyway); when the build has been seen
		 * only in other files, or in none, this mapping's file is
		 * opened to tell which it is: root's code must never take
		 * another user's names. */
		id = find_build_id(oc, bid, bid_len, TRUSTED);
		if (id)
			return id;
		nofile = find_build_id(oc, bid, bid_len, NOFILE);
		if (nofile || find_build_id(oc, bid, bid_len, OTHER)) {
			fd = open_mapping(m, vdso, &dpath);
			if (fd < 0 && nofile) {
				/* out of reach again: said when first seen */
				free(dpath);
				return nofile;
			}
			goto opened;
		}
	}
	id = find_file(oc, &k, bid, bid_len);
	if (id) {
		retry_open(oc, id, m, vdso);
		return id;
	}

	fd = open_mapping(m, vdso, &dpath);
opened:
	/* A memfd holds a program (fexecve) or code a JIT wrote: only an ELF
	 * file is an object. The kernel gives a build-id only from ELF notes,
	 * so one out of reach but with a build-id is a program too. */
	if (want_elf && (fd >= 0 ? !kp_elf_object_is_elf(fd) : !bid_len)) {
		if (fd >= 0)
			close(fd);
		free(dpath);
		return 0;
	}
	if (fd >= 0)
		fd = check_build(fd, bid, &bid_len);
	if (fd < 0 && m->path && m->path[0] == '/')
		note_failure(oc, m->path, fd);
	trust = fd < 0 ? NOFILE : kp_elf_object_file_trusted(fd) ? TRUSTED : OTHER;
	id = join_build(oc, &k, bid, bid_len, trust, fd, dpath);
	if (!id)
		id = add_object(oc, &k, bid, bid_len, trust, fd, dpath);
	free(dpath);
	return id;
}

/* A released object (kp_objcache_release_idle) mapped again: its file is
 * opened anew from m, and taken only when it is still the object's build
 * and as trusted as the file it had; else the object is named from its
 * build's index alone, as one out of reach. */
static void revive(struct kp_objcache *oc, uint32_t id, const struct kp_mapping *m)
{
	struct object *o = &oc->objs[id - 1];
	bool vdso = m->path && strcmp(m->path, "[vdso]") == 0;
	uint8_t bid[KP_BUILD_ID_MAX];
	size_t len;
	char *dpath = NULL;
	int fd = open_mapping(m, vdso, &dpath);

	if (fd >= 0) {
		len = kp_elf_object_read_build_id(fd, bid, sizeof(bid));
		if ((o->build_id_len &&
		     (len != o->build_id_len || memcmp(bid, o->build_id, len) != 0)) ||
		    (o->trust == TRUSTED && !kp_elf_object_file_trusted(fd))) {
			close(fd);
			fd = -1;
		}
	}
	o->elf = kp_elf_object_new(fd, o->path, dpath, o->build_id, o->build_id_len);
	free(dpath);
}

static uint32_t get(struct kp_objcache *oc, const struct kp_mapping *m, bool want_elf)
{
	uint32_t id = find_or_add(oc, m, want_elf);

	if (id && !oc->objs[id - 1].elf)
		revive(oc, id, m);
	if (id)
		oc->objs[id - 1].last_used = oc->window;
	return id;
}

uint32_t kp_objcache_get(struct kp_objcache *oc, const struct kp_mapping *m)
{
	return get(oc, m, false);
}

uint32_t kp_objcache_get_memfd(struct kp_objcache *oc, const struct kp_mapping *m)
{
	return get(oc, m, true);
}

void kp_objcache_touch(struct kp_objcache *oc, uint32_t id)
{
	if (id >= 1 && id <= oc->nobjs)
		oc->objs[id - 1].last_used = oc->window;
}

unsigned kp_objcache_held(const struct kp_objcache *oc)
{
	unsigned n = 0;

	for (size_t i = 0; i < oc->nobjs; i++)
		n += oc->objs[i].elf != NULL;
	return n;
}

size_t kp_objcache_release_idle(struct kp_objcache *oc, uint32_t idle, uint32_t **out)
{
	uint32_t *ids = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < oc->nobjs; i++) {
		struct object *o = &oc->objs[i];

		if (!o->elf || oc->window - o->last_used < idle)
			continue;
		kp_elf_object_free(o->elf);
		o->elf = NULL;
		kp_xgrow(&ids, &cap, n + 1, sizeof(*ids));
		ids[n++] = (uint32_t)(i + 1);
	}
	oc->window++;
	*out = ids;
	return n;
}

struct kp_elf_object *kp_objcache_elf(struct kp_objcache *oc, uint32_t id)
{
	struct object *o;

	if (id < 1 || id > oc->nobjs)
		return NULL;
	o = &oc->objs[id - 1];
	return o->elf;
}

const char *kp_objcache_path(const struct kp_objcache *oc, uint32_t id)
{
	return id >= 1 && id <= oc->nobjs ? oc->objs[id - 1].path : NULL;
}

const uint8_t *kp_objcache_build_id(const struct kp_objcache *oc, uint32_t id, size_t *len)
{
	*len = 0;
	if (id < 1 || id > oc->nobjs)
		return NULL;
	*len = oc->objs[id - 1].build_id_len;
	return oc->objs[id - 1].build_id;
}

int kp_objcache_fd(struct kp_objcache *oc, uint32_t id)
{
	struct kp_elf_object *e = kp_objcache_elf(oc, id);

	return e ? kp_elf_object_fd(e) : -1;
}

void kp_objcache_release(struct kp_objcache *oc, uint32_t id)
{
	if (id < 1 || id > oc->nobjs)
		return;
	kp_elf_object_free(oc->objs[id - 1].elf);
	oc->objs[id - 1].elf = NULL;
}
