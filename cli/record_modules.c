/* kprof record's summary, per module: for each file (and each process's
 * JIT code, and addresses in no mapping) whose frames were not all named
 * by symbols, what share of its frames each way named and what would
 * name the rest (docs/symbolize.md, "Unknown frames"). */
#include "cli/record_summary.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/messages.h"
#include "symbolize/fde_start.h"
#include "symbolize/symbolize.h"
#include "util/u64map.h"
#include "util/xalloc.h"

#define MAX_LINES 5

enum how { HOW_SYMBOL, HOW_START, HOW_UNKNOWN };

/* said once after the files' lines, not once per file (a build has
 * several stripped programs) */
static const char DEBUG_REMEDY[] = "debug symbols";

struct module {
	uint32_t kind, obj; /* the locations' mapping; KP_LOC_UNKNOWN: none */
	kp_count frames, by[3];
	const char *why; /* the reason of its heaviest unknown location */
	kp_count why_weight;
	/* a file's "MODULE+0x", the start of the names symbolize/ gives its
	 * stripped functions (symbolize/fde_start.h); NULL for the others */
	char *start_prefix;
};

static char *start_prefix(const struct kp_profile *p, uint32_t kind, uint32_t obj)
{
	const struct kp_profile_mapping *m =
		kind == KP_LOC_USER ? kp_profile_mapping_of(p, kind, obj) : NULL;
	const char *path = m ? kp_profile_str(p, m->path, NULL) : NULL;
	char *module, *prefix;

	if (!m)
		return NULL;
	module = kp_fde_start_module(path && *path ? path : "?");
	prefix = kp_xasprintf("%s+0x", module);
	free(module);
	return prefix;
}

/* How location loc of module m was named: by a symbol, by an
 * unwind-table start, or not at all. *name: its outermost frame's name. */
static enum how how_named(const struct kp_profile *p, const struct module *m, uint32_t loc,
			  const char **name)
{
	size_t n;
	bool resolved;
	const struct kp_profile_frame *f = kp_profile_frames(p, loc, &n, &resolved);

	*name = n ? kp_profile_str(p, kp_profile_function_at(p, f[0].function)->name, NULL) : "";
	if (!n || !resolved)
		return HOW_UNKNOWN;
	return m->start_prefix && strncmp(*name, m->start_prefix, strlen(m->start_prefix)) == 0
		       ? HOW_START
		       : HOW_SYMBOL;
}

/* The modules of p's frames, weighted by value v; *nmods of them. */
static struct module *count_modules(const struct kp_profile *p, size_t v, size_t *nmods)
{
	size_t nlocs = kp_profile_nlocations(p), cap = 0, n = 0;
	kp_count *weight = kp_xcalloc(nlocs ? nlocs : 1, sizeof(*weight));
	struct module *mods = NULL;
	struct kp_u64map index;

	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		size_t k;
		const kp_count *values;
		const uint32_t *locs = kp_profile_sample(p, i, NULL, &k, &values);

		for (size_t j = 0; j < k; j++)
			weight[locs[j]] += values[v];
	}
	kp_u64map_init(&index);
	for (uint32_t loc = 0; loc < nlocs; loc++) {
		const struct kp_loc *l = kp_profile_loc(p, loc);
		uint32_t kind = l->kind,
			 obj = kind == KP_LOC_USER || kind == KP_LOC_JIT ? l->obj : 0;
		uint64_t key = (uint64_t)kind << 32 | obj, at;
		const char *name;
		enum how how;
		struct module *m;

		if (!weight[loc] || (kind != KP_LOC_USER && kind != KP_LOC_JIT &&
				     kind != KP_LOC_KERNEL && kind != KP_LOC_UNKNOWN))
			continue;
		if (!kp_u64map_get(&index, key, &at)) {
			kp_xgrow(&mods, &cap, n + 1, sizeof(*mods));
			mods[n] = (struct module){.kind = kind,
						  .obj = obj,
						  .start_prefix = start_prefix(p, kind, obj)};
			at = n++;
			kp_u64map_put(&index, key, at);
		}
		m = &mods[at];
		how = how_named(p, m, loc, &name);
		m->frames += weight[loc];
		m->by[how] += weight[loc];
		if (how == HOW_UNKNOWN && weight[loc] > m->why_weight) {
			m->why = name;
			m->why_weight = weight[loc];
		}
	}
	kp_u64map_fini(&index);
	free(weight);
	*nmods = n;
	return mods;
}

static int by_unnamed_desc(const void *a, const void *b)
{
	const struct module *x = a, *y = b;
	kp_count ux = x->by[HOW_START] + x->by[HOW_UNKNOWN],
		 uy = y->by[HOW_START] + y->by[HOW_UNKNOWN];

	return ux < uy ? 1 : ux > uy ? -1 : 0;
}

/* What would name the rest of module m's frames, from why its heaviest
 * unknown frame is unknown. */
static const char *remedy(const struct module *m)
{
	const char *why = m->why ? m->why : "";

	if (m->kind == KP_LOC_UNKNOWN)
		return "stale frame pointers at a stack's end, most often (no code there)";
	if (m->kind == KP_LOC_KERNEL)
		return strcmp(why, KP_SYM_UNKNOWN_NO_KALLSYMS) == 0
			       ? "run as root to read /proc/kallsyms"
			       : "code outside kallsyms: BPF programs, or modules loaded later";
	if (m->kind == KP_LOC_JIT)
		return strcmp(why, KP_SYM_UNKNOWN_NOT_IN_MAP) == 0
			       ? "its perf map or jitdump lacks them (code made before the map was "
				 "started, freed, or still in the runtime's buffer)"
			       : "a perf map or jitdump would name them (node --perf-basic-prof or "
				 "--perf-prof, java -XX:+DumpPerfMapAtExit or an agent, python -X "
				 "perf)";
	if (strstr(why, " unreadable]"))
		return "the file could not be read (gone, or not the process's to read): a copy "
		       "under --debuginfo-dir, by build-id, would name them";
	return DEBUG_REMEDY;
}

static void print_module(const struct kp_profile *p, const struct module *m, kp_count all)
{
	char what[160], start[128] = "";
	double f = (double)m->frames;

	if (m->kind == KP_LOC_UNKNOWN) {
		kp_say("%.1f%% of all frames were in no mapping: %s", 100.0 * f / (double)all,
		       remedy(m));
		return;
	}
	if (m->kind == KP_LOC_KERNEL) {
		snprintf(what, sizeof(what), "the kernel");
	} else if (m->kind == KP_LOC_JIT) {
		const struct kp_profile_mapping *map = kp_profile_mapping_of(p, m->kind, m->obj);

		snprintf(what, sizeof(what), "JIT code of pid %d", map ? (int)map->pid : 0);
	} else {
		const struct kp_profile_mapping *map = kp_profile_mapping_of(p, m->kind, m->obj);

		snprintf(what, sizeof(what), "%.150s",
			 map ? kp_profile_str(p, map->path, NULL) : "?");
	}
	if (m->kind == KP_LOC_USER) {
		char *module = kp_fde_start_module(what);

		snprintf(start, sizeof(start), ", %.1f%% by unwind-table start (%.60s+0x...)",
			 100.0 * (double)m->by[HOW_START] / f, module);
		free(module);
	}
	kp_say("%s: of its %" PRIu64 " frames %.1f%% named by symbols%s, %.1f%% unknown%s%s", what,
	       (uint64_t)m->frames, 100.0 * (double)m->by[HOW_SYMBOL] / f, start,
	       100.0 * (double)m->by[HOW_UNKNOWN] / f, remedy(m) == DEBUG_REMEDY ? "" : "; ",
	       remedy(m) == DEBUG_REMEDY ? "" : remedy(m));
}

/* "python3.N" from a file name holding it (python3.11, libpython3.12.so),
 * into buf; false when it holds none. */
static bool python_name(const char *path, char *buf, size_t size)
{
	const char *base = strrchr(path, '/'), *py;
	size_t n = 7;

	base = base ? base + 1 : path;
	if (strncmp(base, "python3", 7) != 0 && strncmp(base, "libpython3", 10) != 0)
		return false;
	py = strstr(base, "python3");
	while (py[n] == '.' || (py[n] >= '0' && py[n] <= '9'))
		n++;
	while (n > 7 && py[n - 1] == '.')
		n--;
	snprintf(buf, size, "%.*s", (int)n, py);
	return true;
}

/* A python ran, and no Python function was named (CPython's perf map
 * names them py::FUNC:FILE): says once what would name them. */
static void python_note(const struct kp_profile *p)
{
	char python[32] = "";

	for (uint32_t loc = 0; loc < kp_profile_nlocations(p); loc++) {
		const struct kp_loc *l = kp_profile_loc(p, loc);
		const struct kp_profile_mapping *m;
		size_t n;
		bool resolved;
		const struct kp_profile_frame *f;

		if (l->kind == KP_LOC_JIT) {
			f = kp_profile_frames(p, loc, &n, &resolved);
			for (size_t i = 0; i < n; i++)
				if (strncmp(kp_profile_str(
						    p,
						    kp_profile_function_at(p, f[i].function)->name,
						    NULL),
					    "py::", 4) == 0)
					return;
		} else if (l->kind == KP_LOC_USER && !python[0] &&
			   (m = kp_profile_mapping_of(p, l->kind, l->obj))) {
			python_name(kp_profile_str(p, m->path, NULL), python, sizeof(python));
		}
	}
	if (python[0])
		kp_say("%s: no Python function named, only the interpreter's C frames: run it with "
		       "-X perf (python 3.12 and later; or PYTHONPERFSUPPORT=1) to name them, "
		       "whole stacks (3.11 and older have no -X perf)",
		       python);
}

void kp_record_modules_print(const struct kp_profile *p)
{
	int v = kp_profile_find_value(p, "samples");
	size_t n, shown = 0, need_debug = 0;
	struct module *mods;
	kp_count all = 0;

	if (v < 0)
		return;
	mods = count_modules(p, (size_t)v, &n);
	for (size_t i = 0; i < n; i++)
		all += mods[i].frames;
	if (n) /* qsort's array may not be NULL, even empty */
		qsort(mods, n, sizeof(*mods), by_unnamed_desc);
	/* the modules with the most frames not named by a symbol, down to a
	 * half percent of all frames */
	for (size_t i = 0; i < n && shown < MAX_LINES; i++) {
		kp_count un = mods[i].by[HOW_START] + mods[i].by[HOW_UNKNOWN];

		if (!un || (double)un < 0.005 * (double)all)
			break;
		print_module(p, &mods[i], all);
		need_debug += remedy(&mods[i]) == DEBUG_REMEDY;
		shown++;
	}
	if (need_debug)
		kp_say("debug symbols would name the rest of %s (the package's -dbgsym from "
		       "Debian's debug archive, --debuginfo-dir, or DEBUGINFOD_URLS)",
		       need_debug == 1 ? "that file's frames" : "those files' frames");
	for (size_t i = 0; i < n; i++)
		free(mods[i].start_prefix);
	free(mods);
	python_note(p);
}
