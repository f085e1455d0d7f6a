/* The facade: object and JIT registration while recording, then one
 * resolution per distinct location, cached, with names interned so frames
 * can be handed out as plain pointers. */
#include "symbolize/symbolize.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symbolize/debuginfod.h"
#include "symbolize/elf_object.h"
#include "symbolize/fde_start.h"
#include "symbolize/jit.h"
#include "symbolize/kallsyms.h"
#include "symbolize/ksymcache.h"
#include "symbolize/objcache.h"
#include "symbolize/perfmap.h"
#include "procfs/kernel.h"
#include "procfs/maps.h"
#include "util/cachefile.h"
#include "util/hash.h"
#include "util/notes.h"
#include "util/strtab.h"
#include "util/xalloc.h"

struct cache_ent {
	uint64_t addr;
	uint32_t obj;
	uint32_t kind;
	uint32_t first, n; /* frames in the pool */
	bool ok;
};

struct kp_symbolizer {
	struct kp_elf_object_ctx elf;
	char *kallsyms_path;
	struct kp_kallsyms *kallsyms;
	bool kallsyms_tried;
	bool kallsyms_noted;	      /* its notes said (once, however often it is read) */
	struct kp_cachedir *cachedir; /* kprof's cache directory, NULL for none */
	struct kp_objcache *objs;
	struct kp_jittab *jits;
	struct kp_strtab *names;
	struct kp_sym_frame *pool;
	size_t npool, pool_cap;
	char *path; /* DIR/FILE while a source file is interned */
	size_t path_cap;
	struct cache_ent *cache;
	size_t ncache, cache_cap;
	uint32_t *slots; /* open addressing over cache indices + 1 */
	size_t nslots;
	struct kp_notes notes;
	struct kp_sym_stats stats;
	bool continuous;	   /* kp_sym_options.continuous */
	kp_sym_between_fn between; /* kp_sym_set_between */
	void *between_arg;
	kp_sym_stop_fn stop; /* kp_sym_set_stop */
	void *stop_arg;
	uint64_t nstopped; /* locations left unnamed by a stop */
	size_t stopped_slot;
};

/* The cache directory's one note, when it cannot be used. */
static void cache_note(void *arg, const char *msg)
{
	kp_notes_add(arg, "%s", msg);
}

/* A file kprof maps to run code: its own (kp_sym_options.quiet_own). */
static void own_file(void *arg, const struct kp_mapping *e)
{
	struct kp_elf_object_ctx *ctx = arg;

	if (!e->exec || e->path[0] != '/')
		return;
	for (size_t i = 0; i < ctx->nown; i++)
		if (strcmp(ctx->own[i], e->path) == 0)
			return;
	ctx->own = kp_xrealloc(ctx->own, (ctx->nown + 1) * sizeof(*ctx->own));
	ctx->own[ctx->nown++] = kp_xstrdup(e->path);
}

struct kp_symbolizer *kp_sym_new(const struct kp_sym_options *opts)
{
	struct kp_symbolizer *sym = kp_xcalloc(1, sizeof(*sym));
	struct kp_sym_options none = {0};

	if (!opts)
		opts = &none;
	if (opts->cache_dir && *opts->cache_dir)
		sym->cachedir = kp_cachedir_new(opts->cache_dir, cache_note, &sym->notes);
	kp_elf_object_ctx_init(&sym->elf, opts->debuginfo_dirs,
			       opts->debuginfo_dirs ? opts->n_debuginfo_dirs : 0, opts->no_inline,
			       opts->full_names, sym->cachedir);
	sym->elf.notes = &sym->notes;
	sym->elf.debuginfod = kp_debuginfod_new(&sym->notes);
	sym->elf.no_lines = opts->no_lines;
	if (opts->quiet_own)
		kp_maps_read_pid(getpid(), own_file, &sym->elf);
	sym->continuous = opts->continuous;
	sym->kallsyms_path = kp_xstrdup(KP_KERNEL_KALLSYMS);
	sym->objs = kp_objcache_new(&sym->notes);
	sym->jits = kp_jit_new(&sym->notes);
	sym->names = kp_strtab_new();
	sym->nslots = 1024;
	sym->slots = kp_xcalloc(sym->nslots, sizeof(*sym->slots));
	return sym;
}

void kp_sym_free(struct kp_symbolizer *sym)
{
	if (!sym)
		return;
	kp_objcache_free(sym->objs);
	kp_jit_free(sym->jits);
	kp_kallsyms_free(sym->kallsyms);
	kp_strtab_free(sym->names);
	kp_elf_object_ctx_fini(&sym->elf); /* before the cache handle its own is below */
	kp_cachedir_free(sym->cachedir);
	kp_notes_fini(&sym->notes);
	free(sym->kallsyms_path);
	free(sym->pool);
	free(sym->path);
	free(sym->cache);
	free(sym->slots);
	free(sym);
}

void kp_sym_set_kallsyms_path(struct kp_symbolizer *sym, const char *path)
{
	free(sym->kallsyms_path);
	sym->kallsyms_path = kp_xstrdup(path);
	kp_kallsyms_free(sym->kallsyms);
	sym->kallsyms = NULL;
	sym->kallsyms_tried = false;
}

uint32_t kp_sym_object_get(struct kp_symbolizer *sym, const struct kp_mapping *m)
{
	return kp_objcache_get(sym->objs, m);
}

uint32_t kp_sym_memfd_get(struct kp_symbolizer *sym, const struct kp_mapping *m)
{
	return kp_objcache_get_memfd(sym->objs, m);
}

int kp_sym_object_fd(struct kp_symbolizer *sym, uint32_t obj)
{
	return kp_objcache_fd(sym->objs, obj);
}

uint32_t kp_sym_jit_get(struct kp_symbolizer *sym, pid_t pid)
{
	return kp_jit_get(sym->jits, pid);
}

void kp_sym_object_done(struct kp_symbolizer *sym, uint32_t obj)
{
	kp_objcache_release(sym->objs, obj);
}

void kp_sym_process_exit(struct kp_symbolizer *sym, pid_t pid)
{
	kp_jit_exit(sym->jits, pid);
}

void kp_sym_jit_hint(struct kp_symbolizer *sym, uint32_t id, const uint64_t *addrs, size_t n)
{
	kp_jit_hint(sym->jits, id, addrs, n);
}

static uint64_t loc_hash(uint64_t addr, uint32_t obj, uint32_t kind)
{
	return kp_hash_u64(addr ^ kp_hash_u64((uint64_t)obj << 8 | kind));
}

/* The cache's slots, made again for nslots (a power of two). */
static void cache_rehash(struct kp_symbolizer *sym, size_t nslots)
{
	size_t mask = nslots - 1;
	uint32_t *slots = kp_xcalloc(nslots, sizeof(*slots));

	for (size_t i = 0; i < sym->ncache; i++) {
		const struct cache_ent *e = &sym->cache[i];
		size_t s = loc_hash(e->addr, e->obj, e->kind) & mask;

		while (slots[s])
			s = (s + 1) & mask;
		slots[s] = (uint32_t)(i + 1);
	}
	free(sym->slots);
	sym->slots = slots;
	sym->nslots = nslots;
}

static void cache_grow(struct kp_symbolizer *sym)
{
	cache_rehash(sym, sym->nslots * 2);
}

/* Longest frame name kept (C++ template names run to kilobytes). */
#define MAX_NAME (64 * 1024)

/* dir/file (dir may be NULL) interned, or NULL: source files are kept as
 * DWARF gives them, but not past MAX_NAME (a damaged string). */
static const char *intern_file(struct kp_symbolizer *sym, const char *dir, const char *file)
{
	size_t dlen = dir ? strlen(dir) + 1 : 0, len;

	if (!file)
		return NULL;
	len = dlen + strlen(file);
	if (len >= MAX_NAME)
		return NULL;
	kp_xgrow(&sym->path, &sym->path_cap, len + 1, 1);
	if (dir) {
		memcpy(sym->path, dir, dlen - 1);
		sym->path[dlen - 1] = '/';
	}
	memcpy(sym->path + dlen, file, len - dlen + 1);
	return kp_strtab_str(sym->names, kp_strtab_intern(sym->names, sym->path, len));
}

static void push_frame(struct kp_symbolizer *sym, const char *name, uint8_t kind)
{
	size_t len = strlen(name);
	uint32_t id;
	bool clean = len < MAX_NAME;

	/* names from binaries are untrusted too: same rules as perf maps */
	for (size_t i = 0; clean && i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		clean = c != ';' && c >= 0x20 && c != 0x7f;
	}
	if (clean) {
		id = kp_strtab_intern(sym->names, name, len);
	} else {
		size_t size = (len < MAX_NAME ? len : MAX_NAME) + 4;
		char *buf = kp_xmalloc(size);
		size_t n = kp_perfmap_sanitize_name(buf, size, name, len);

		id = n ? kp_strtab_intern(sym->names, buf, n)
		       : kp_strtab_intern(sym->names, "?", 1);
		free(buf);
	}

	kp_xgrow(&sym->pool, &sym->pool_cap, sym->npool + 1, sizeof(*sym->pool));
	sym->pool[sym->npool] =
		(struct kp_sym_frame){.name = kp_strtab_str(sym->names, id), .kind = kind};
	sym->npool++;
}

struct emit_ctx {
	struct kp_symbolizer *sym;
};

static void emit_elf(void *arg, const struct kp_elf_frame *f)
{
	struct emit_ctx *ec = arg;
	struct kp_sym_frame *last;

	push_frame(ec->sym, f->name, f->inlined ? KP_FRAME_INLINE : KP_FRAME_USER);
	last = &ec->sym->pool[ec->sym->npool - 1];
	last->file = intern_file(ec->sym, f->dir, f->file);
	last->line = f->line;
}

/* The sparse table for addrs from the per-boot copy of /proc/kallsyms when
 * there is one that can answer for all of them; else from the file itself,
 * leaving a copy for the next run. A damaged copy is said once and
 * counted. Returns 0 or a negative errno (d set). */
static int load_kallsyms_cached(struct kp_symbolizer *sym, const uint64_t *addrs, size_t n,
				struct kp_diag *d)
{
	struct kp_ksymcache *c = kp_ksymcache_new(sym->cachedir);
	struct kp_kallsyms_opts opts = {0};
	int err;

	if (!c)
		return kp_kallsyms_load_for(sym->kallsyms_path, addrs, n, &sym->kallsyms, d);
	err = kp_ksymcache_open(c, &opts);
	if (err == 0) {
		struct kp_diag ignored;
		size_t i = 0;
		bool loaded = kp_kallsyms_load_opts(sym->kallsyms_path, addrs, n, &opts,
						    &sym->kallsyms, &ignored) == 0;

		/* the table is trusted only once the whole copy is checked */
		err = kp_ksymcache_read_done(c);
		if (loaded && !err && !kp_kallsyms_restricted(sym->kallsyms))
			for (; i < n && kp_ksymcache_stable(c, sym->kallsyms, addrs[i]); i++)
				;
		if (sym->kallsyms && !err && i == n) {
			kp_ksymcache_free(c);
			return 0;
		}
		kp_kallsyms_free(sym->kallsyms);
		sym->kallsyms = NULL;
		memset(&opts, 0, sizeof(opts));
	}
	if (err == -EBADMSG && !sym->stats.kallsyms_copy_damaged) {
		sym->stats.kallsyms_copy_damaged = true;
		kp_notes_add(
			&sym->notes,
			"the copy of /proc/kallsyms in %s/%s was damaged (its size or checksum "
			"did not match): it was ignored and written anew",
			kp_cachedir_path(sym->cachedir), kp_ksymcache_name(c));
	}
	kp_ksymcache_begin(c, &opts);
	err = kp_kallsyms_load_opts(sym->kallsyms_path, addrs, n, &opts, &sym->kallsyms, d);
	kp_ksymcache_commit(c, !err && !kp_kallsyms_restricted(sym->kallsyms));
	kp_ksymcache_free(c);
	return err;
}

/* Loads kallsyms, all of it or (addrs given) only what lookups of addrs
 * need, and says once when it cannot be read or hides addresses. */
static void load_kallsyms(struct kp_symbolizer *sym, const uint64_t *addrs, size_t n)
{
	struct kp_diag d;
	bool first = !sym->kallsyms_noted;
	int err;

	sym->kallsyms_tried = true;
	sym->kallsyms_noted = true;
	kp_kallsyms_free(sym->kallsyms);
	sym->kallsyms = NULL;
	/* only the running kernel's own file has a per-boot copy */
	if (addrs && sym->cachedir && strcmp(sym->kallsyms_path, KP_KERNEL_KALLSYMS) == 0)
		err = load_kallsyms_cached(sym, addrs, n, &d);
	else
		err = addrs ? kp_kallsyms_load_for(sym->kallsyms_path, addrs, n, &sym->kallsyms, &d)
			    : kp_kallsyms_load(sym->kallsyms_path, &sym->kallsyms, &d);
	if (!first)
		return;
	if (err < 0) {
		kp_notes_add(&sym->notes, "%s; kernel frames are shown as [unknown]", d.msg);
	} else if (kp_kallsyms_restricted(sym->kallsyms)) {
		sym->stats.kptr_restricted = true;
		kp_notes_add(&sym->notes,
			     "%s hides kernel addresses (kernel.kptr_restrict); kernel frames are "
			     "shown as [kernel]",
			     sym->kallsyms_path);
	}
}

void kp_sym_set_between(struct kp_symbolizer *sym, kp_sym_between_fn fn, void *arg)
{
	sym->between = fn;
	sym->between_arg = arg;
}

void kp_sym_load_kernel(struct kp_symbolizer *sym)
{
	if (!sym->kallsyms_tried)
		load_kallsyms(sym, NULL, 0);
}

void kp_sym_kernel_hint(struct kp_symbolizer *sym, const uint64_t *addrs, size_t n)
{
	/* a continuous recording names window after window: the whole
	 * table, once, rather than a part and then the whole */
	if (!sym->kallsyms_tried && n && !sym->continuous)
		load_kallsyms(sym, addrs, n);
}

bool kp_sym_kernel_name(struct kp_symbolizer *sym, uint64_t addr, char *buf, size_t size)
{
	const char *name;
	bool own = false;

	if (!size)
		return false;
	buf[0] = 0;
	/* a table already read that covers it; else one read for it alone,
	 * from the per-boot copy, and let go, so that naming the profile
	 * later reads what it needs as it would have */
	if (!sym->kallsyms_tried || (sym->kallsyms && !kp_kallsyms_covers(sym->kallsyms, addr))) {
		if (sym->kallsyms_tried)
			return false; /* a table for other addresses: kept as it is */
		load_kallsyms(sym, &addr, 1);
		own = true;
	}
	name = sym->kallsyms && !kp_kallsyms_restricted(sym->kallsyms)
		       ? kp_kallsyms_lookup(sym->kallsyms, addr, NULL)
		       : NULL;
	if (name)
		snprintf(buf, size, "%s", name);
	if (own) {
		kp_kallsyms_free(sym->kallsyms);
		sym->kallsyms = NULL;
		sym->kallsyms_tried = false;
	}
	return name != NULL;
}

static bool resolve_kernel(struct kp_symbolizer *sym, uint64_t addr)
{
	const char *name;

	/* no table yet, or a table loaded for other addresses: the full one */
	if (!sym->kallsyms_tried || (sym->kallsyms && !kp_kallsyms_covers(sym->kallsyms, addr)))
		load_kallsyms(sym, NULL, 0);
	if (sym->kallsyms && kp_kallsyms_restricted(sym->kallsyms)) {
		push_frame(sym, "[kernel]", KP_FRAME_KERNEL);
		return false;
	}
	name = sym->kallsyms ? kp_kallsyms_lookup(sym->kallsyms, addr, NULL) : NULL;
	if (!name)
		name = sym->kallsyms ? KP_SYM_UNKNOWN_KERNEL_OUTSIDE : KP_SYM_UNKNOWN_NO_KALLSYMS;
	push_frame(sym, name, KP_FRAME_KERNEL);
	return name[0] != '[';
}

/* The placeholder of a user frame nothing names, saying why: the file
 * could not be read, or the address is outside every symbol and unwind
 * table of it (docs/symbolize.md, "Unknown frames"). */
static void push_unknown_user(struct kp_symbolizer *sym, uint32_t obj,
			      const struct kp_elf_object *o)
{
	const char *path = kp_objcache_path(sym->objs, obj);
	char *module = kp_fde_start_module(path && *path ? path : "?");
	char buf[256];

	if (!o || kp_elf_object_unreadable(o))
		snprintf(buf, sizeof(buf), "[unknown: %.200s unreadable]", module);
	else
		snprintf(buf, sizeof(buf), "[unknown: in %.200s, outside every symbol]", module);
	free(module);
	push_frame(sym, buf, KP_FRAME_USER);
}

/* Names the code of object obj at file offset addr, or (by_vaddr) at ELF
 * virtual address addr; pushes its frames, or [unknown]. */
static bool resolve_user(struct kp_symbolizer *sym, uint32_t obj, uint64_t addr, bool by_vaddr)
{
	struct kp_elf_object *o = kp_objcache_elf(sym->objs, obj);
	struct emit_ctx ec = {sym};

	if (o && (by_vaddr ? kp_elf_object_lookup_vaddr(o, &sym->elf, addr, emit_elf, &ec)
			   : kp_elf_object_lookup(o, &sym->elf, addr, emit_elf, &ec)))
		return true;
	push_unknown_user(sym, obj, o);
	return false;
}

static bool resolve_uncached(struct kp_symbolizer *sym, const struct kp_loc *loc)
{
	switch (loc->kind) {
	case KP_LOC_KERNEL:
		return resolve_kernel(sym, loc->addr);
	case KP_LOC_USER:
		return resolve_user(sym, loc->obj, loc->addr, false);
	case KP_LOC_JIT: {
		const char *name = kp_jit_lookup(sym->jits, loc->obj, loc->addr);

		if (!name)
			name = kp_jit_had_map(sym->jits, loc->obj) ? KP_SYM_UNKNOWN_NOT_IN_MAP
								   : KP_SYM_UNKNOWN_NO_MAP;
		push_frame(sym, name, KP_FRAME_JIT);
		return name[0] != '[';
	}
	case KP_LOC_TRUNCATED:
		/* not a failure to name: the unwinder said where it stopped */
		push_frame(sym, "[truncated]", KP_FRAME_USER);
		return true;
	default:
		push_frame(sym, KP_SYM_UNKNOWN_NO_MAPPING, KP_FRAME_USER);
		return false;
	}
}

static void count(struct kp_symbolizer *sym, uint32_t kind, bool ok)
{
	if (kind > KP_LOC_JIT)
		return;
	if (ok)
		sym->stats.resolved[kind]++;
	else
		sym->stats.unresolved[kind]++;
}

/* out = the n frames of the pool from first on */
static void copy_frames(const struct kp_symbolizer *sym, size_t first, size_t n,
			struct kp_sym_frames *out)
{
	kp_xgrow(&out->frames, &out->cap, n, sizeof(*out->frames));
	memcpy(out->frames, sym->pool + first, n * sizeof(*out->frames));
	out->n = n;
}

bool kp_sym_resolve(struct kp_symbolizer *sym, const struct kp_loc *loc, struct kp_sym_frames *out)
{
	uint32_t kind = loc->kind < KP_LOC_NKINDS ? loc->kind : KP_LOC_UNKNOWN;
	uint32_t obj = kind == KP_LOC_USER || kind == KP_LOC_JIT ? loc->obj : 0;
	size_t mask = sym->nslots - 1, s = loc_hash(loc->addr, obj, kind) & mask;
	struct cache_ent *e;

	if (kind == KP_LOC_USER)
		kp_objcache_touch(sym->objs, obj);
	for (; sym->slots[s]; s = (s + 1) & mask) {
		e = &sym->cache[sym->slots[s] - 1];
		if (e->addr == loc->addr && e->obj == obj && e->kind == kind)
			goto found;
	}
	kp_xgrow(&sym->cache, &sym->cache_cap, sym->ncache + 1, sizeof(*sym->cache));
	e = &sym->cache[sym->ncache++];
	e->addr = loc->addr;
	e->obj = obj;
	e->kind = kind;
	e->first = (uint32_t)sym->npool;
	{
		struct kp_loc l = {loc->addr, obj, kind};

		e->ok = resolve_uncached(sym, &l);
	}
	e->n = (uint32_t)(sym->npool - e->first);
	count(sym, kind, e->ok);
	sym->slots[s] = (uint32_t)sym->ncache;
	if (sym->ncache * 2 > sym->nslots)
		cache_grow(sym);
found:
	copy_frames(sym, e->first, e->n, out);
	return e->ok;
}

void kp_sym_frames_fini(struct kp_sym_frames *f)
{
	free(f->frames);
	f->frames = NULL;
	f->n = f->cap = 0;
}

void kp_sym_stats(const struct kp_symbolizer *sym, struct kp_sym_stats *st)
{
	*st = sym->stats;
	st->jit_bad_lines = kp_jit_bad_lines(sym->jits);
	st->jit_map_reads = kp_jit_reads(sym->jits);
	{
		struct kp_jit_dump_stats ds;

		kp_jit_dump_stats(sym->jits, &ds);
		st->jitdump_loads = ds.loads;
		st->jitdump_ignored = ds.ignored;
		st->jitdump_opens = ds.opens;
		st->jitdump_cut = ds.cut;
		st->jitdump_bytes = ds.bytes;
	}
	st->objects_held = kp_objcache_held(sym->objs);
	st->indexes_loaded = sym->elf.nindexes_loaded;
	st->indexes_saved = sym->elf.nindexes_saved;
	st->indexes_damaged = sym->elf.nindexes_damaged;
}

const char *const *kp_sym_notes(const struct kp_symbolizer *sym, size_t *n)
{
	return kp_notes_list(&sym->notes, n);
}

const char *const *kp_sym_jitdump_cut_notes(const struct kp_symbolizer *sym, size_t *n)
{
	return kp_jit_cut_notes(sym->jits, n);
}

bool kp_sym_resolve_vaddr(struct kp_symbolizer *sym, uint32_t obj, uint64_t vaddr,
			  struct kp_sym_frames *out)
{
	size_t first = sym->npool;
	bool ok = resolve_user(sym, obj, vaddr, true);

	count(sym, KP_LOC_USER, ok);
	copy_frames(sym, first, sym->npool - first, out);
	sym->npool = first; /* not cached: the names stay interned */
	return ok;
}

bool kp_sym_is_elf(int fd)
{
	return kp_elf_object_is_elf(fd);
}

/* ---- naming a profile ---- */

/* Orders location ids by (kind, object). */
static int cmp_loc_object(const void *a, const void *b, void *arg)
{
	const struct kp_loc *x = kp_profile_loc(arg, *(const uint32_t *)a);
	const struct kp_loc *y = kp_profile_loc(arg, *(const uint32_t *)b);

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* Hands over the sampled kernel addresses and each JIT map's addresses (a
 * run of order), so kallsyms and maps of gigabytes are read once for them. */
static void hint_sources(struct kp_symbolizer *sym, const struct kp_profile *p,
			 const uint32_t *order, size_t nlocs)
{
	uint64_t *addrs = kp_xmalloc((nlocs ? nlocs : 1) * sizeof(*addrs));
	size_t n = 0;

	for (size_t i = 0; i < nlocs; i++)
		if (kp_profile_loc(p, (uint32_t)i)->kind == KP_LOC_KERNEL)
			addrs[n++] = kp_profile_loc(p, (uint32_t)i)->addr;
	kp_sym_kernel_hint(sym, addrs, n);
	n = 0;
	for (size_t k = 0; k < nlocs; k++) {
		const struct kp_loc *loc = kp_profile_loc(p, order[k]);

		if (loc->kind != KP_LOC_JIT)
			continue;
		addrs[n++] = loc->addr;
		if (k + 1 == nlocs || cmp_loc_object(&order[k], &order[k + 1], (void *)p) != 0) {
			kp_sym_jit_hint(sym, loc->obj, addrs, n);
			n = 0;
		}
	}
	free(addrs);
}

/* Describes the mapping of a user or JIT location, once per object. */
static void describe_mapping(struct kp_symbolizer *sym, struct kp_profile *p,
			     const struct kp_loc *loc)
{
	struct kp_profile_mapping m = {.kind = loc->kind, .obj = loc->obj};
	const char *path;

	if (kp_profile_mapping_of(p, loc->kind, loc->obj))
		return;
	if (loc->kind == KP_LOC_USER) {
		size_t len;
		const uint8_t *bid = kp_objcache_build_id(sym->objs, loc->obj, &len);

		path = kp_objcache_path(sym->objs, loc->obj);
		if (bid && len <= sizeof(m.build_id)) {
			memcpy(m.build_id, bid, len);
			m.build_id_len = (uint8_t)len;
		}
	} else {
		path = "[jit]";
		m.pid = kp_jit_pid(sym->jits, loc->obj);
	}
	m.path = path ? kp_profile_intern(p, path, strlen(path)) : 0;
	kp_profile_set_mapping(p, &m);
}

void kp_sym_set_stop(struct kp_symbolizer *sym, kp_sym_stop_fn fn, void *arg)
{
	sym->stop = fn;
	sym->stop_arg = arg;
	kp_debuginfod_set_stop(sym->elf.debuginfod, fn, arg);
}

void kp_sym_no_downloads(struct kp_symbolizer *sym)
{
	kp_debuginfod_off(sym->elf.debuginfod);
}

/* Naming was stopped: loc is left "[unknown: naming stopped]", counted. */
static void leave_unnamed(struct kp_symbolizer *sym, struct kp_profile *p, uint32_t i)
{
	const struct kp_loc *loc = kp_profile_loc(p, i);
	uint32_t id = kp_profile_intern(p, KP_SYM_UNKNOWN_STOPPED, strlen(KP_SYM_UNKNOWN_STOPPED));
	struct kp_profile_frame f = {
		.function = kp_profile_function(p, id, 0),
		.kind = loc->kind == KP_LOC_KERNEL ? KP_FRAME_KERNEL
			: loc->kind == KP_LOC_JIT  ? KP_FRAME_JIT
						   : KP_FRAME_USER,
	};

	kp_profile_set_frames(p, i, &f, 1, false);
	if (loc->kind == KP_LOC_USER || loc->kind == KP_LOC_JIT)
		describe_mapping(sym, p, loc);
	count(sym, loc->kind, false);
	sym->nstopped++;
}

/* Whether the user asked kprof to stop: the rest of the profile is left
 * unnamed, and no download starts any more. */
static bool stop_asked(struct kp_symbolizer *sym)
{
	if (!sym->stop || !sym->stop(sym->stop_arg))
		return false;
	kp_debuginfod_off(sym->elf.debuginfod);
	return true;
}

void kp_sym_name_profile(struct kp_symbolizer *sym, struct kp_profile *p)
{
	size_t nlocs = kp_profile_nlocations(p);
	uint32_t *order = kp_xmalloc((nlocs ? nlocs : 1) * sizeof(*order));
	struct kp_profile_frame *frames = NULL;
	size_t frames_cap = 0;
	struct kp_sym_frames sf = {0};
	bool stopped;

	for (size_t i = 0; i < nlocs; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, nlocs, sizeof(*order), cmp_loc_object, p);
	stopped = stop_asked(sym);
	hint_sources(sym, p, order, nlocs);
	for (size_t k = 0; k < nlocs; k++) {
		const struct kp_loc *loc = kp_profile_loc(p, order[k]);
		bool ok;

		if (loc->kind == KP_LOC_NAMED)
			continue; /* named already (folded text): no address */
		/* at each object's first location (the stop is checked in
		 * downloads too) */
		if (!stopped && k && cmp_loc_object(&order[k - 1], &order[k], p) != 0)
			stopped = stop_asked(sym);
		if (stopped) {
			leave_unnamed(sym, p, order[k]);
			continue;
		}
		ok = kp_sym_resolve(sym, loc, &sf);
		kp_xgrow(&frames, &frames_cap, sf.n, sizeof(*frames));
		for (size_t j = 0; j < sf.n; j++) {
			const char *name = sf.frames[j].name;
			uint32_t id = kp_profile_intern(p, name, strlen(name));

			const char *file = sf.frames[j].file;

			frames[j] = (struct kp_profile_frame){
				.function = kp_profile_function(
					p, id, file ? kp_profile_intern(p, file, strlen(file)) : 0),
				.line = sf.frames[j].line,
				.kind = sf.frames[j].kind,
			};
		}
		kp_profile_set_frames(p, order[k], frames, sf.n, ok);
		if (loc->kind == KP_LOC_USER || loc->kind == KP_LOC_JIT)
			describe_mapping(sym, p, loc);
		if (k + 1 < nlocs && cmp_loc_object(&order[k], &order[k + 1], p) == 0)
			continue; /* more of this object's locations follow */
		if (loc->kind == KP_LOC_USER && !sym->continuous)
			kp_sym_object_done(sym, loc->obj);
		if (k + 1 < nlocs && sym->between)
			sym->between(sym->between_arg);
	}
	if (sym->nstopped)
		kp_notes_update(&sym->notes, &sym->stopped_slot,
				"kprof was asked to stop while naming: %llu locations left %s",
				(unsigned long long)sym->nstopped, KP_SYM_UNKNOWN_STOPPED);
	kp_sym_frames_fini(&sf);
	free(frames);
	free(order);
}

/* Resolved locations a continuous recording keeps from window to window
 * (the same code is sampled again and again); past this many, the cache
 * and its names start over. */
#define WINDOW_CACHE_MAX (1u << 16)

/* Between windows: the cache keeps what stays true, a file's code or the
 * kernel's, named; JIT code (a perf map or jitdump may name an address
 * otherwise later) and placeholders (the file may be readable again, the
 * map may cover it) are resolved again. Past WINDOW_CACHE_MAX entries
 * everything goes, the names too. */
static void cache_next_window(struct kp_symbolizer *sym)
{
	struct kp_sym_frame *pool = NULL;
	size_t k = 0, npool = 0, pool_cap = 0;

	if (sym->ncache > WINDOW_CACHE_MAX) {
		kp_strtab_free(sym->names);
		sym->names = kp_strtab_new();
		sym->npool = sym->ncache = 0;
		memset(sym->slots, 0, sym->nslots * sizeof(*sym->slots));
		return;
	}
	for (size_t i = 0; i < sym->ncache; i++) {
		struct cache_ent e = sym->cache[i];

		if (!e.ok || e.kind == KP_LOC_JIT)
			continue;
		kp_xgrow(&pool, &pool_cap, npool + e.n, sizeof(*pool));
		memcpy(pool + npool, sym->pool + e.first, e.n * sizeof(*pool));
		e.first = (uint32_t)npool;
		npool += e.n;
		sym->cache[k++] = e;
	}
	free(sym->pool);
	sym->pool = pool;
	sym->npool = npool;
	sym->pool_cap = pool_cap;
	sym->ncache = k;
	cache_rehash(sym, sym->nslots);
}

size_t kp_sym_next_window(struct kp_symbolizer *sym, uint32_t idle, uint32_t **released)
{
	cache_next_window(sym);
	kp_jit_next_window(sym->jits);
	return kp_objcache_release_idle(sym->objs, idle, released);
}

/* Jitdumps: jit.c's, through the JIT table. */

bool kp_sym_path_is_jitdump(const char *path)
{
	return kp_jit_is_dump_path(path);
}

void kp_sym_jitdump_mapped(struct kp_symbolizer *sym, const struct kp_mapping *m)
{
	kp_jit_dump_mapped(sym->jits, m);
}

void kp_sym_jit_poll(struct kp_symbolizer *sym)
{
	kp_jit_poll(sym->jits);
}

void kp_sym_set_jit_code_check(struct kp_symbolizer *sym, kp_sym_jit_code_fn fn, void *arg)
{
	kp_jit_set_code_check(sym->jits, fn, arg);
}

bool kp_sym_jit_unwind_info(struct kp_symbolizer *sym, pid_t pid, uint64_t addr,
			    struct kp_sym_jit_unwind *out)
{
	struct kp_jit_unwind ju;

	if (!kp_jit_unwind_info(sym->jits, pid, addr, &ju))
		return false;
	*out = (struct kp_sym_jit_unwind){ju.start, ju.end,	     ju.key,	ju.eh_frame,
					  ju.hdr,   ju.eh_frame_len, ju.hdr_len};
	return true;
}
