/* A profile's frames by module (each file, each process's JIT code, the
 * kernel, addresses in no mapping): how many of each module's frames were
 * named by a symbol, by an unwind-table start (a stripped function's
 * "MODULE+0x..."), or not at all, and why its heaviest unknown frame is
 * unknown. What `kprof record`'s summary says of the names it could not
 * find (docs/symbolize.md, "Unknown frames"). */
#ifndef KP_PROFILE_MODULES_H
#define KP_PROFILE_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profile/profile.h"
#include "util/count.h"

enum kp_module_how { KP_MODULE_SYMBOL, KP_MODULE_START, KP_MODULE_UNKNOWN };

struct kp_module {
	uint32_t kind, obj; /* the locations' mapping; KP_LOC_UNKNOWN: none */
	kp_count frames;    /* weighted by the value counted */
	kp_count by[3];	    /* of frames, by enum kp_module_how */
	const char *why;    /* the name of its heaviest unknown location (p's) */
	kp_count why_weight;
	/* a file's "MODULE+0x", the start of the names an unwind-table start
	 * gives its stripped functions; NULL for the others (owned) */
	char *start_prefix;
};

/* The MODULE of a file's path, as the symbolizer names a stripped
 * function MODULE+0xOFFSET (symbolize/fde_start.h). A new string. */
typedef char *(*kp_module_name_fn)(const char *path);

/* The modules of p's frames, each frame weighted by value v of the
 * samples it is in, in the order of p's locations; *n of them. Free with
 * kp_modules_free. */
struct kp_module *kp_modules_count(const struct kp_profile *p, size_t v, kp_module_name_fn module,
				   size_t *n);
/* Sorts mods by their frames not named by a symbol, most first. */
void kp_modules_sort_by_unnamed(struct kp_module *mods, size_t n);
/* The modules worth a line of the summary: mods sorted so, and how many
 * of the first have frames not named by a symbol, at least half a percent
 * of all frames (*all, every module's), at most max. */
size_t kp_modules_to_say(struct kp_module *mods, size_t n, size_t max, kp_count *all);
void kp_modules_free(struct kp_module *mods, size_t n);

/* When an interpreter of Python 3 ran (its binary or libpython among p's
 * files) and no Python function was named (CPython's perf map names them
 * py::FUNC:FILE): "python3.N" into buf, true. */
bool kp_modules_python_unnamed(const struct kp_profile *p, char *buf, size_t size);

#endif
