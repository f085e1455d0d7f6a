#include "symbolize/symidx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize/dwarf_index.h"
#include "util/cachefile.h"
#include "util/checksum.h"
#include "util/search.h"
#include "util/strtab.h"
#include "util/xalloc.h"

/* The file: a header, then the arrays in this order, each 8-aligned, then
 * the strings (offset 0 means "no string"). Native byte order: the index
 * is only ever read on the machine that wrote it, and the order mark
 * rejects anything else. The version is bumped when the layout changes,
 * or what goes in (which symbols, scopes, names): an index of another
 * version is then ignored and rewritten. Every byte of a file is either
 * compared with a constant (magic, version, order: its first 16) or
 * covered by the checksum (from file_size to the end), so damage anywhere
 * is caught before anything in it is read.
 *   1: the first format
 *   2: the checksum
 *   3: source lines: call sites in the scopes, the files, the line table
 *
 * The line table is the build's rows (kp_dwarf_flat_row) as points, each
 * holding from its address to the next point's: a row starts a point, a
 * gap between rows is a point of file 0 (none). The points go in blocks
 * of LINE_BLOCK: a block's first address is in blocks_addr (searched),
 * its bytes start at blocks_off in the line stream; there its first point
 * is LEB128 file then line, each next one LEB128 address delta (> 0),
 * then LEB128 of (zigzag(line delta) << 1 | file changed), then the file
 * when it changed. Two or three bytes a point where 16-byte rows would
 * take more than twice the index. */
#define SYMIDX_MAGIC   "KPSYMIDX"
#define SYMIDX_VERSION 3
#define LINE_BLOCK     32
#define SYMIDX_ORDER   0x01020304u

struct header {
	char magic[8];
	uint32_t version, order;
	uint64_t checksum; /* util/checksum.h of the file from file_size on */
	uint64_t file_size;
	uint8_t build_id[64];
	uint32_t build_id_len, reserved;
	uint64_t bias, dw_bias;
	uint64_t nsegs, nsyms, nscopes, npieces, strings_size;
	uint64_t nfiles, nblocks, lines_size;
};

struct scope {
	int32_t parent;
	uint32_t link, plain;
	uint32_t call_file, call_line; /* inlined: its call site (file an index in files) */
	uint8_t inlined, qualified, pad[2];
};

struct piece {
	uint64_t lo, hi;
	uint32_t scope, pad;
};

struct kp_symidx {
	const uint8_t *base; /* the block: mapped (mapped_size) or heap */
	size_t size, mapped_size;
	const struct header *h;
	const struct kp_symidx_seg *segs;
	const struct kp_symidx_sym *syms;
	const struct scope *scopes;
	const struct piece *pieces;
	const uint32_t *files;	     /* string offsets; files[0] is none */
	const uint64_t *blocks_addr; /* DWARF address of each block's first point */
	const uint32_t *blocks_off;  /* where its points start in lines */
	const uint8_t *lines;	     /* the points */
	const char *strings;
};

#define ALIGN8(n)   (((n) + 7) & ~(size_t)7)
#define SUMMED_FROM offsetof(struct header, file_size)

/* Where each array starts, from the counts; false when they overflow or
 * do not add up to size. */
static bool layout(struct kp_symidx *x, const struct header *h, size_t size)
{
	const uint64_t limit = (uint64_t)1 << 40;
	size_t at = ALIGN8(sizeof(*h));

	if (h->nsegs > 64 || h->nsyms > limit / sizeof(*x->syms) ||
	    h->nscopes > limit / sizeof(*x->scopes) || h->npieces > limit / sizeof(*x->pieces) ||
	    h->nfiles > limit / sizeof(*x->files) || h->nblocks > limit / sizeof(uint64_t) ||
	    h->lines_size > limit || h->strings_size > limit)
		return false;
	x->segs = (const void *)(x->base + at);
	at += ALIGN8(h->nsegs * sizeof(*x->segs));
	x->syms = (const void *)(x->base + at);
	at += ALIGN8(h->nsyms * sizeof(*x->syms));
	x->scopes = (const void *)(x->base + at);
	at += ALIGN8(h->nscopes * sizeof(*x->scopes));
	x->pieces = (const void *)(x->base + at);
	at += ALIGN8(h->npieces * sizeof(*x->pieces));
	x->files = (const void *)(x->base + at);
	at += ALIGN8(h->nfiles * sizeof(*x->files));
	x->blocks_addr = (const void *)(x->base + at);
	at += ALIGN8(h->nblocks * sizeof(*x->blocks_addr));
	x->blocks_off = (const void *)(x->base + at);
	at += ALIGN8(h->nblocks * sizeof(*x->blocks_off));
	x->lines = x->base + at;
	at += ALIGN8(h->lines_size);
	x->strings = (const char *)(x->base + at);
	at += h->strings_size;
	x->h = h;
	x->size = size;
	return at == size && h->file_size == size;
}

/* Every check a damaged file could fail: string offsets inside the
 * strings (which end with a NUL), symbols and pieces sorted, pieces
 * disjoint, scopes pointing to earlier scopes and to files there are,
 * line blocks sorted and inside the line stream. The points inside a
 * block are checked as they are read (kp_symidx_line): reading all of
 * them here would cost more than a run's lookups. */
static bool valid(const struct kp_symidx *x)
{
	const struct header *h = x->h;
	uint64_t ns = h->strings_size;

	if (ns < 1 || x->strings[0] != '\0' || x->strings[ns - 1] != '\0')
		return false;
	for (size_t i = 0; i < h->nsyms; i++) {
		const struct kp_symidx_sym *s = &x->syms[i];

		if (s->name >= ns || (i && s->addr <= x->syms[i - 1].addr))
			return false;
	}
	for (size_t i = 0; i < h->nscopes; i++) {
		const struct scope *s = &x->scopes[i];

		if (s->link >= ns || s->plain >= ns || s->parent < -1 || s->parent >= (int64_t)i ||
		    (s->call_file && s->call_file >= h->nfiles))
			return false;
	}
	for (size_t i = 0; i < h->nfiles; i++)
		if (x->files[i] >= ns || (i == 0 && x->files[i] != 0))
			return false;
	if ((h->nblocks == 0) != (h->lines_size == 0))
		return false;
	for (size_t i = 0; i < h->nblocks; i++) {
		if (x->blocks_off[i] >= h->lines_size ||
		    (i ? x->blocks_addr[i] <= x->blocks_addr[i - 1] ||
				     x->blocks_off[i] <= x->blocks_off[i - 1]
		       : x->blocks_off[i] != 0))
			return false;
	}
	for (size_t i = 0; i < h->npieces; i++) {
		const struct piece *p = &x->pieces[i];

		if (p->lo >= p->hi || p->scope >= h->nscopes || (i && p->lo < x->pieces[i - 1].hi))
			return false;
	}
	return true;
}

/* The id of s among the index's strings, 0 for NULL. */
static uint32_t intern(struct kp_strtab *t, const char *s)
{
	return s ? kp_strtab_intern(t, s, strlen(s)) : 0;
}

struct bytes {
	uint8_t *v;
	size_t n, cap;
};

static void put_uleb(struct bytes *b, uint64_t v)
{
	kp_xgrow(&b->v, &b->cap, b->n + 10, 1);
	do {
		uint8_t byte = v & 0x7f;

		v >>= 7;
		b->v[b->n++] = byte | (v ? 0x80 : 0);
	} while (v);
}

/* Reads one LEB128 number of p[0..end), false when it runs past end or
 * past 64 bits (damaged). */
static inline bool get_uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;

	for (unsigned shift = 0; shift < 64 && *p < end; shift += 7) {
		uint8_t byte = *(*p)++;

		r |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			*v = r;
			return true;
		}
	}
	return false;
}

struct line_table {
	uint64_t *addr;
	uint32_t *off;
	size_t nblocks, cap;
	struct bytes stream;
	size_t npoints;
	uint64_t last_addr;
	uint32_t file, line; /* the last point's */
};

static void add_point(struct line_table *t, uint64_t addr, uint32_t file, uint32_t line)
{
	if (t->npoints % LINE_BLOCK == 0) {
		kp_xgrow(&t->addr, &t->cap, t->nblocks + 1, sizeof(*t->addr));
		t->off = kp_xrealloc(t->off, t->cap * sizeof(*t->off));
		t->addr[t->nblocks] = addr;
		t->off[t->nblocks++] = (uint32_t)t->stream.n;
		put_uleb(&t->stream, file);
		put_uleb(&t->stream, line);
	} else {
		/* the difference, signed, zigzagged: small either way */
		uint64_t d = (uint64_t)((int64_t)line - (int64_t)t->line);
		uint64_t zz = (d << 1) ^ (0 - (d >> 63));

		put_uleb(&t->stream, addr - t->last_addr);
		put_uleb(&t->stream, zz << 1 | (file != t->file));
		if (file != t->file)
			put_uleb(&t->stream, file);
	}
	t->npoints++;
	t->last_addr = addr;
	t->file = file;
	t->line = line;
}

/* The rows as points: each row starts one, a gap after a row is one of
 * file 0 (its line kept, so the next row's difference stays small). */
static void encode_lines(struct line_table *t, const struct kp_dwarf_flat_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (i && rows[i].lo != rows[i - 1].hi)
			add_point(t, rows[i - 1].hi, 0, t->line);
		add_point(t, rows[i].lo, rows[i].file, rows[i].line);
	}
	if (n)
		add_point(t, rows[n - 1].hi, 0, t->line);
	if (t->stream.n > UINT32_MAX) {
		/* past what the offsets hold (no build comes near): no lines */
		t->nblocks = t->stream.n = 0;
	}
}

/* Where each part of an index goes in its block (the strings last, their
 * size known only once every array is written), and how many scopes,
 * pieces and files it holds. */
struct block_plan {
	size_t nscopes, npieces, nfiles;
	size_t segs_at, syms_at, scopes_at, pieces_at, files_at, baddr_at, boff_at, lines_at;
	size_t strings_at;
};

static void plan_block(struct block_plan *bp, const struct kp_symidx_input *in,
		       const struct line_table *lt)
{
	bp->segs_at = ALIGN8(sizeof(struct header));
	bp->syms_at = bp->segs_at + ALIGN8(in->nsegs * sizeof(struct kp_symidx_seg));
	bp->scopes_at = bp->syms_at + ALIGN8(in->nsyms * sizeof(struct kp_symidx_sym));
	bp->pieces_at = bp->scopes_at + ALIGN8(bp->nscopes * sizeof(struct scope));
	bp->files_at = bp->pieces_at + ALIGN8(bp->npieces * sizeof(struct piece));
	bp->baddr_at = bp->files_at + ALIGN8(bp->nfiles * sizeof(uint32_t));
	bp->boff_at = bp->baddr_at + ALIGN8(lt->nblocks * sizeof(uint64_t));
	bp->lines_at = bp->boff_at + ALIGN8(lt->nblocks * sizeof(uint32_t));
	bp->strings_at = bp->lines_at + ALIGN8(lt->stream.n);
}

/* Writes the arrays into block, with ids of ids where string offsets go. */
static void write_arrays(uint8_t *block, const struct block_plan *bp,
			 const struct kp_symidx_input *in, const struct line_table *lt,
			 struct kp_strtab *ids)
{
	const struct kp_dwarf_flat *dw = in->dwarf;
	struct kp_symidx_sym *syms = (void *)(block + bp->syms_at);
	struct scope *scopes = (void *)(block + bp->scopes_at);
	struct piece *pieces = (void *)(block + bp->pieces_at);
	uint32_t *files = (void *)(block + bp->files_at);

	if (in->nsegs)
		memcpy(block + bp->segs_at, in->segs, in->nsegs * sizeof(*in->segs));
	for (size_t i = 0; i < in->nsyms; i++) {
		syms[i] = in->syms[i];
		syms[i].name = intern(ids, in->sym_strings + in->syms[i].name);
		syms[i].reserved = 0;
	}
	for (size_t i = 0; i < bp->nscopes; i++) {
		const struct kp_dwarf_flat_scope *sc = &dw->scopes[i];

		scopes[i] =
			(struct scope){.parent = sc->parent,
				       .link = intern(ids, sc->link),
				       .plain = intern(ids, sc->plain),
				       .call_file = sc->call_file < bp->nfiles ? sc->call_file : 0,
				       .call_line = sc->call_line,
				       .inlined = sc->inlined,
				       .qualified = sc->qualified};
	}
	for (size_t i = 0; i < bp->npieces; i++) {
		const struct kp_dwarf_flat_piece *p = &dw->pieces[i];

		pieces[i] = (struct piece){.lo = p->lo, .hi = p->hi, .scope = p->scope};
	}
	for (size_t i = 1; i < bp->nfiles; i++)
		files[i] = intern(ids, kp_strtab_str(dw->files, (uint32_t)i));
	if (lt->nblocks) {
		memcpy(block + bp->baddr_at, lt->addr, lt->nblocks * sizeof(uint64_t));
		memcpy(block + bp->boff_at, lt->off, lt->nblocks * sizeof(uint32_t));
		memcpy(block + bp->lines_at, lt->stream.v, lt->stream.n);
	}
}

/* Appends the strings of ids to block in id order and turns the arrays'
 * ids into their offsets. Returns the grown block; *len is the strings'
 * size (offset 0: the empty string that means "none"). */
static uint8_t *append_strings(uint8_t *block, const struct block_plan *bp, size_t nsyms,
			       struct kp_strtab *ids, size_t *len)
{
	uint32_t nstrings = kp_strtab_count(ids), *offs, *files;
	struct kp_symidx_sym *syms;
	struct scope *scopes;

	*len = 1;
	offs = kp_xmalloc((nstrings + 1) * sizeof(*offs));
	offs[0] = 0;
	for (uint32_t id = 1; id <= nstrings; id++) {
		offs[id] = (uint32_t)*len;
		*len += kp_strtab_len(ids, id) + 1;
	}
	block = kp_xrealloc(block, bp->strings_at + *len);
	syms = (void *)(block + bp->syms_at);
	scopes = (void *)(block + bp->scopes_at);
	files = (void *)(block + bp->files_at);
	block[bp->strings_at] = '\0';
	for (uint32_t id = 1; id <= nstrings; id++)
		memcpy(block + bp->strings_at + offs[id], kp_strtab_str(ids, id),
		       kp_strtab_len(ids, id) + 1);
	for (size_t i = 0; i < nsyms; i++)
		syms[i].name = offs[syms[i].name];
	for (size_t i = 0; i < bp->nscopes; i++) {
		scopes[i].link = offs[scopes[i].link];
		scopes[i].plain = offs[scopes[i].plain];
	}
	for (size_t i = 0; i < bp->nfiles; i++)
		files[i] = offs[files[i]];
	free(offs);
	return block;
}

/* Fills the header of the index in block, its checksum last. */
static void write_header(uint8_t *block, const struct block_plan *bp,
			 const struct kp_symidx_input *in, const struct line_table *lt, size_t len)
{
	struct header *h = (void *)block;

	memcpy(h->magic, SYMIDX_MAGIC, 8);
	h->version = SYMIDX_VERSION;
	h->order = SYMIDX_ORDER;
	h->build_id_len = (uint32_t)(in->build_id_len < 64 ? in->build_id_len : 64);
	memcpy(h->build_id, in->build_id, h->build_id_len);
	h->bias = in->bias;
	h->dw_bias = in->dw_bias;
	h->nsegs = in->nsegs;
	h->nsyms = in->nsyms;
	h->nscopes = bp->nscopes;
	h->npieces = bp->npieces;
	h->nfiles = bp->nfiles;
	h->nblocks = lt->nblocks;
	h->lines_size = lt->stream.n;
	h->strings_size = len;
	h->file_size = bp->strings_at + len;
	h->checksum = kp_checksum(block + SUMMED_FROM, h->file_size - SUMMED_FROM);
}

/* The arrays are written in place with string ids where offsets go; the
 * strings, known only then, are appended in id order and the ids turned
 * into their offsets. */
struct kp_symidx *kp_symidx_build(const struct kp_symidx_input *in)
{
	struct kp_symidx *x = kp_xcalloc(1, sizeof(*x));
	struct kp_strtab *ids = kp_strtab_new();
	const struct kp_dwarf_flat *dw = in->dwarf;
	struct line_table lt = {0};
	struct block_plan bp = {
		.nscopes = dw ? dw->nscopes : 0,
		.npieces = dw ? dw->npieces : 0,
		.nfiles = dw && dw->files ? kp_strtab_count(dw->files) + 1 : 0,
	};
	uint8_t *block;
	size_t len;

	if (dw && bp.nfiles)
		encode_lines(&lt, dw->rows, dw->nrows);
	plan_block(&bp, in, &lt);
	block = kp_xcalloc(1, bp.strings_at);
	write_arrays(block, &bp, in, &lt, ids);
	block = append_strings(block, &bp, in->nsyms, ids, &len);
	write_header(block, &bp, in, &lt, len);
	x->base = block;
	layout(x, (void *)block, bp.strings_at + len);
	free(lt.addr);
	free(lt.off);
	free(lt.stream.v);
	kp_strtab_free(ids);
	return x;
}

/* HEX-OF-BUILD-ID + suffix (".seen" at most), the file's name in dir. */
#define NAME_MAX_LEN (2 * 64 + 8)

static void index_name(char out[NAME_MAX_LEN], const uint8_t *id, size_t len, const char *suffix)
{
	size_t n = len < 64 ? len : 64;

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = "0123456789abcdef"[id[i] >> 4];
		out[2 * i + 1] = "0123456789abcdef"[id[i] & 15];
	}
	snprintf(out + 2 * n, NAME_MAX_LEN - 2 * n, "%s", suffix);
}

/* Is the mapped file x (size bytes) an index of build_id[0..len) that may
 * be used? 0, -ESTALE or -EBADMSG. */
static int check(struct kp_symidx *x, size_t size, const uint8_t *build_id, size_t len)
{
	const struct header *h = (const void *)x->base;

	if (memcmp(h->magic, SYMIDX_MAGIC, 8) != 0)
		return -EBADMSG;
	if (h->version != SYMIDX_VERSION || h->order != SYMIDX_ORDER)
		return -ESTALE; /* another kprof's, or another machine's */
	/* before anything else in it is read */
	if (kp_checksum(x->base + SUMMED_FROM, size - SUMMED_FROM) != h->checksum)
		return -EBADMSG;
	if (h->build_id_len != len || memcmp(h->build_id, build_id, len) != 0 ||
	    !layout(x, h, size) || !valid(x))
		return -EBADMSG;
	return 0;
}

int kp_symidx_load(struct kp_cachedir *dir, const uint8_t *build_id, size_t len,
		   struct kp_symidx **out)
{
	char name[NAME_MAX_LEN];
	struct kp_symidx *x;
	struct stat st;
	void *p;
	int fd, err;

	*out = NULL;
	if (!dir || !len || len > 64)
		return -ENOENT;
	index_name(name, build_id, len, "");
	fd = kp_cachefile_open(dir, name, &st);
	if (fd < 0)
		return -ENOENT;
	if ((uint64_t)st.st_size < sizeof(struct header) ||
	    (uint64_t)st.st_size > ((uint64_t)1 << 40)) {
		err = -EBADMSG;
		goto out_fd;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		err = -ENOENT; /* no memory for it: not the file's fault */
		goto out_fd;
	}
	x = kp_xcalloc(1, sizeof(*x));
	x->base = p;
	x->mapped_size = (size_t)st.st_size;
	err = check(x, (size_t)st.st_size, build_id, len);
	if (err) {
		kp_symidx_free(x);
		goto out_fd;
	}
	if (time(NULL) - st.st_mtime > 24 * 3600)
		futimens(fd, NULL); /* used: the last to be pruned */
	*out = x;
out_fd:
	close(fd);
	if (err == -EBADMSG || err == -ESTALE)
		kp_cachefile_remove(dir, name);
	return err;
}

/* The directory is kept under a size: when a new index takes it over, the
 * indexes used least recently (by mtime, refreshed when read on a later
 * day) are removed until it is under three quarters of it. */
#define SYMIDX_DIR_MAX ((uint64_t)512 << 20)

struct dirent_age {
	time_t mtime;
	uint64_t size;
	char name[2 * 64 + 1];
};

static int age_cmp(const void *pa, const void *pb)
{
	const struct dirent_age *a = pa, *b = pb;

	return a->mtime < b->mtime ? -1 : a->mtime > b->mtime;
}

static void prune(struct kp_cachedir *dir, const char *keep)
{
	DIR *d = kp_cachedir_list(dir);
	struct dirent *e;
	struct dirent_age *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t total = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		struct stat st;
		size_t len = strlen(e->d_name);

		size_t hex = strspn(e->d_name, "0123456789abcdef");

		/* only indexes (hex names) and markers (hex.seen), never a
		 * file being written (.symidx-XXXXXX) */
		if (hex < 2 || hex > 128 || (hex != len && strcmp(e->d_name + hex, ".seen") != 0) ||
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		if (hex != len) {
			/* a build seen once and not since in 30 days */
			if (time(NULL) - st.st_mtime > 30 * 24 * 3600)
				unlinkat(dirfd(d), e->d_name, 0);
			continue;
		}
		total += (uint64_t)st.st_size;
		if (strcmp(e->d_name, keep) == 0)
			continue;
		kp_xgrow(&v, &cap, n + 1, sizeof(*v));
		v[n].mtime = st.st_mtime;
		v[n].size = (uint64_t)st.st_size;
		memcpy(v[n].name, e->d_name, len + 1);
		n++;
	}
	if (total > SYMIDX_DIR_MAX) {
		qsort(v, n, sizeof(*v), age_cmp);
		for (size_t i = 0; i < n && total > SYMIDX_DIR_MAX / 4 * 3; i++)
			if (unlinkat(dirfd(d), v[i].name, 0) == 0)
				total -= v[i].size;
	}
	free(v);
	closedir(d);
}

bool kp_symidx_save(const struct kp_symidx *x, struct kp_cachedir *dir)
{
	char *tmp, name[NAME_MAX_LEN];
	size_t done = 0;
	bool ok = true;
	int fd = kp_cachefile_begin(dir, "symidx", &tmp);

	if (fd < 0)
		return false;
	while (done < x->size) {
		ssize_t n = write(fd, x->base + done, x->size - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ok = false;
			break;
		}
		done += (size_t)n;
	}
	index_name(name, x->h->build_id, x->h->build_id_len, "");
	ok = kp_cachefile_commit(dir, &tmp, fd, ok, name);
	if (ok) {
		char seen[NAME_MAX_LEN];

		index_name(seen, x->h->build_id, x->h->build_id_len, ".seen");
		kp_cachefile_remove(dir, seen);
		prune(dir, name);
	}
	return ok;
}

bool kp_symidx_seen(struct kp_cachedir *dir, const uint8_t *build_id, size_t len)
{
	char name[NAME_MAX_LEN];
	struct stat st;

	if (!dir || !len || len > 64)
		return false;
	index_name(name, build_id, len, ".seen");
	return kp_cachefile_exists(dir, name, &st);
}

void kp_symidx_mark_seen(struct kp_cachedir *dir, const uint8_t *build_id, size_t len)
{
	char *tmp, name[NAME_MAX_LEN];
	int fd;

	if (!dir || !len || len > 64)
		return;
	fd = kp_cachefile_begin(dir, "symidx", &tmp);
	if (fd < 0)
		return;
	index_name(name, build_id, len, ".seen");
	if (kp_cachefile_commit(dir, &tmp, fd, true, name))
		prune(dir, "");
}

void kp_symidx_free(struct kp_symidx *x)
{
	if (!x)
		return;
	if (x->mapped_size)
		munmap((void *)x->base, x->mapped_size);
	else
		free((void *)x->base);
	free(x);
}

size_t kp_symidx_size(const struct kp_symidx *x)
{
	return x->size;
}

uint64_t kp_symidx_bias(const struct kp_symidx *x)
{
	return x->h->bias;
}

bool kp_symidx_addr(const struct kp_symidx *x, uint64_t off, uint64_t *addr)
{
	for (size_t i = 0; i < x->h->nsegs; i++) {
		const struct kp_symidx_seg *s = &x->segs[i];

		if (off >= s->off && off - s->off < s->filesz) {
			*addr = s->vaddr + (off - s->off) + x->h->bias;
			return true;
		}
	}
	return false;
}

const struct kp_symidx_sym *kp_symidx_find_symbol(const struct kp_symidx_sym *syms, size_t n,
						  uint64_t addr)
{
	size_t lo = KP_FIRST_ABOVE(syms, n, addr, addr);

	if (lo == 0)
		return NULL;
	for (size_t i = lo, steps = 0; i-- > 0 && steps < 16; steps++) {
		const struct kp_symidx_sym *s = &syms[i];

		if (addr - s->addr < s->size)
			return s;
		if (s->size == 0 && i == lo - 1 && addr < s->limit)
			return s; /* sizeless: up to the next symbol, in its section */
	}
	return NULL;
}

const char *kp_symidx_symbol(const struct kp_symidx *x, uint64_t addr)
{
	const struct kp_symidx_sym *s = kp_symidx_find_symbol(x->syms, x->h->nsyms, addr);

	return s ? x->strings + s->name : NULL;
}

size_t kp_symidx_chain(const struct kp_symidx *x, uint64_t addr, uint32_t *chain, size_t cap)
{
	uint64_t dwaddr = addr - x->h->dw_bias;
	size_t lo = KP_FIRST_ABOVE(x->pieces, x->h->npieces, lo, dwaddr), n = 0;
	int64_t s;

	if (lo == 0 || dwaddr >= x->pieces[lo - 1].hi)
		return 0;
	for (s = x->pieces[lo - 1].scope; s >= 0; s = x->scopes[s].parent) {
		if (n < cap)
			chain[n] = (uint32_t)s;
		n++;
		if (!x->scopes[s].inlined)
			break; /* the function holding the inlined instances */
	}
	return n;
}

bool kp_symidx_inlined(const struct kp_symidx *x, uint32_t scope)
{
	return x->scopes[scope].inlined;
}

const char *kp_symidx_call_site(const struct kp_symidx *x, uint32_t scope, uint32_t *line)
{
	const struct scope *s = &x->scopes[scope];

	*line = s->call_line;
	return s->call_file ? x->strings + x->files[s->call_file] : NULL;
}

const char *kp_symidx_line(const struct kp_symidx *x, uint64_t addr, uint32_t *line)
{
	const struct header *h = x->h;
	uint64_t dwaddr = addr - h->dw_bias, at, file, v, d;
	size_t b = kp_first_above(x->blocks_addr, h->nblocks, sizeof(*x->blocks_addr), 0, dwaddr);
	const uint8_t *p, *end;
	uint32_t l;

	*line = 0;
	if (b == 0)
		return NULL;
	b--;
	/* the last point at or before dwaddr, in the last block starting there */
	p = x->lines + x->blocks_off[b];
	end = x->lines + (b + 1 < h->nblocks ? x->blocks_off[b + 1] : h->lines_size);
	at = x->blocks_addr[b];
	if (!get_uleb(&p, end, &file) || !get_uleb(&p, end, &v))
		return NULL;
	l = (uint32_t)v;
	while (p < end) {
		if (!get_uleb(&p, end, &d) || d == 0 || !get_uleb(&p, end, &v))
			return NULL; /* damaged */
		if (at + d > dwaddr || at + d < at)
			break;
		at += d;
		l += (uint32_t)((v >> 2) ^ (0 - ((v >> 1) & 1)));
		if ((v & 1) && !get_uleb(&p, end, &file))
			return NULL;
	}
	if (file == 0 || file >= h->nfiles)
		return NULL;
	*line = l;
	return x->strings + x->files[file];
}

static char *copy_qualified(void *arg, const char *plain)
{
	(void)arg;
	return kp_xstrdup(plain);
}

char *kp_symidx_scope_name(const struct kp_symidx *x, uint32_t scope, bool full_names)
{
	const struct scope *s = &x->scopes[scope];

	return kp_dwarf_index_pick_name(s->link ? x->strings + s->link : NULL,
					s->plain ? x->strings + s->plain : NULL,
					s->qualified ? copy_qualified : NULL, NULL, full_names);
}
