/* A profile's frames by module (see modules.h). */
#include "profile/modules.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/u64map.h"
#include "util/xalloc.h"

static char *start_prefix(const struct kp_profile *p, uint32_t kind, uint32_t obj,
			  kp_module_name_fn module_of)
{
	const struct kp_profile_mapping *m =
		kind == KP_LOC_USER ? kp_profile_mapping_of(p, kind, obj) : NULL;
	const char *path = m ? kp_profile_str(p, m->path, NULL) : NULL;
	char *module, *prefix;

	if (!m)
		return NULL;
	module = module_of(path && *path ? path : "?");
	prefix = kp_xasprintf("%s+0x", module);
	free(module);
	return prefix;
}

/* How location loc of module m was named: by a symbol, by an
 * unwind-table start, or not at all. *name: its outermost frame's name. */
static enum kp_module_how how_named(const struct kp_profile *p, const struct kp_module *m,
				    uint32_t loc, const char **name)
{
	size_t n;
	bool resolved;
	const struct kp_profile_frame *f = kp_profile_frames(p, loc, &n, &resolved);

	*name = n ? kp_profile_str(p, kp_profile_function_at(p, f[0].function)->name, NULL) : "";
	if (!n || !resolved)
		return KP_MODULE_UNKNOWN;
	return m->start_prefix && strncmp(*name, m->start_prefix, strlen(m->start_prefix)) == 0
		       ? KP_MODULE_START
		       : KP_MODULE_SYMBOL;
}

/* Each location's weight: value v of the samples it is in. */
static kp_count *location_weights(const struct kp_profile *p, size_t v)
{
	size_t nlocs = kp_profile_nlocations(p);
	kp_count *weight = kp_xcalloc(nlocs ? nlocs : 1, sizeof(*weight));

	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		size_t k;
		const kp_count *values;
		const uint32_t *locs = kp_profile_sample(p, i, NULL, &k, &values);

		for (size_t j = 0; j < k; j++)
			weight[locs[j]] += values[v];
	}
	return weight;
}

struct kp_module *kp_modules_count(const struct kp_profile *p, size_t v, kp_module_name_fn module,
				   size_t *nmods)
{
	size_t nlocs = kp_profile_nlocations(p), cap = 0, n = 0;
	kp_count *weight = location_weights(p, v);
	struct kp_module *mods = NULL;
	struct kp_u64map index;

	kp_u64map_init(&index);
	for (uint32_t loc = 0; loc < nlocs; loc++) {
		const struct kp_loc *l = kp_profile_loc(p, loc);
		uint32_t kind = l->kind,
			 obj = kind == KP_LOC_USER || kind == KP_LOC_JIT ? l->obj : 0;
		uint64_t key = (uint64_t)kind << 32 | obj, at;
		const char *name;
		enum kp_module_how how;
		struct kp_module *m;

		if (!weight[loc] || (kind != KP_LOC_USER && kind != KP_LOC_JIT &&
				     kind != KP_LOC_KERNEL && kind != KP_LOC_UNKNOWN))
			continue;
		if (!kp_u64map_get(&index, key, &at)) {
			kp_xgrow(&mods, &cap, n + 1, sizeof(*mods));
			mods[n] = (struct kp_module){.kind = kind,
						     .obj = obj,
						     .start_prefix =
							     start_prefix(p, kind, obj, module)};
			at = n++;
			kp_u64map_put(&index, key, at);
		}
		m = &mods[at];
		how = how_named(p, m, loc, &name);
		m->frames += weight[loc];
		m->by[how] += weight[loc];
		if (how == KP_MODULE_UNKNOWN && weight[loc] > m->why_weight) {
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
	const struct kp_module *x = a, *y = b;
	kp_count ux = x->by[KP_MODULE_START] + x->by[KP_MODULE_UNKNOWN],
		 uy = y->by[KP_MODULE_START] + y->by[KP_MODULE_UNKNOWN];

	return ux < uy ? 1 : ux > uy ? -1 : 0;
}

void kp_modules_sort_by_unnamed(struct kp_module *mods, size_t n)
{
	if (n) /* qsort's array may not be NULL, even empty */
		qsort(mods, n, sizeof(*mods), by_unnamed_desc);
}

size_t kp_modules_to_say(struct kp_module *mods, size_t n, size_t max, kp_count *all)
{
	size_t shown = 0;

	*all = 0;
	for (size_t i = 0; i < n; i++)
		*all += mods[i].frames;
	kp_modules_sort_by_unnamed(mods, n);
	/* down to a half percent of all frames */
	while (shown < n && shown < max) {
		kp_count un = mods[shown].by[KP_MODULE_START] + mods[shown].by[KP_MODULE_UNKNOWN];

		if (!un || (double)un < 0.005 * (double)*all)
			break;
		shown++;
	}
	return shown;
}

void kp_modules_free(struct kp_module *mods, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(mods[i].start_prefix);
	free(mods);
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

/* True when a frame of JIT location loc is a Python function. */
static bool python_function(const struct kp_profile *p, uint32_t loc)
{
	size_t n;
	bool resolved;
	const struct kp_profile_frame *f = kp_profile_frames(p, loc, &n, &resolved);

	for (size_t i = 0; i < n; i++)
		if (strncmp(kp_profile_str(p, kp_profile_function_at(p, f[i].function)->name, NULL),
			    "py::", 4) == 0)
			return true;
	return false;
}

bool kp_modules_python_unnamed(const struct kp_profile *p, char *buf, size_t size)
{
	buf[0] = '\0';
	for (uint32_t loc = 0; loc < kp_profile_nlocations(p); loc++) {
		const struct kp_loc *l = kp_profile_loc(p, loc);
		const struct kp_profile_mapping *m;

		if (l->kind == KP_LOC_JIT) {
			if (python_function(p, loc)) {
				buf[0] = '\0';
				return false;
			}
		} else if (l->kind == KP_LOC_USER && !buf[0] &&
			   (m = kp_profile_mapping_of(p, l->kind, l->obj))) {
			python_name(kp_profile_str(p, m->path, NULL), buf, size);
		}
	}
	return buf[0] != '\0';
}
