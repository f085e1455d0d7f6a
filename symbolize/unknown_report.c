/* What named a profile's frames, per module (symbolize/unknown_report.h):
 * for each file (and each process's JIT code, and addresses in no
 * mapping) whose frames were not all named by symbols, what share of its
 * frames each way named (counted by profile/modules.c) and what would name
 * the rest, from why the symbolizer left them unknown (docs/symbolize.md,
 * "Unknown frames"). */
#include "symbolize/unknown_report.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/modules.h"
#include "symbolize/fde_start.h"
#include "symbolize/symbolize.h"

#define MAX_LINES 5

/* said once after the files' lines, not once per file (a build has
 * several stripped programs) */
static const char DEBUG_REMEDY[] = "debug symbols";

/* Formats the line (short: kprof's words, a path cut at 150 bytes) and
 * hands it to fn. */
static void say(kp_sym_say_fn fn, void *arg, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void say(kp_sym_say_fn fn, void *arg, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fn(arg, line);
}

/* What would name the rest of module m's frames, from why its heaviest
 * unknown frame is unknown. */
static const char *remedy(const struct kp_module *m)
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

static void print_module(const struct kp_profile *p, const struct kp_module *m, kp_count all,
			 kp_sym_say_fn fn, void *arg)
{
	char what[160], start[128] = "";
	double f = (double)m->frames;

	if (m->kind == KP_LOC_UNKNOWN) {
		say(fn, arg, "%.1f%% of all frames were in no mapping: %s", 100.0 * f / (double)all,
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
			 100.0 * (double)m->by[KP_MODULE_START] / f, module);
		free(module);
	}
	say(fn, arg, "%s: of its %" PRIu64 " frames %.1f%% named by symbols%s, %.1f%% unknown%s%s",
	    what, (uint64_t)m->frames, 100.0 * (double)m->by[KP_MODULE_SYMBOL] / f, start,
	    100.0 * (double)m->by[KP_MODULE_UNKNOWN] / f, remedy(m) == DEBUG_REMEDY ? "" : "; ",
	    remedy(m) == DEBUG_REMEDY ? "" : remedy(m));
}

/* A python ran, and no Python function was named: says once what would
 * name them. */
static void python_note(const struct kp_profile *p, kp_sym_say_fn fn, void *arg)
{
	char python[32];

	if (kp_modules_python_unnamed(p, python, sizeof(python)))
		say(fn, arg,
		    "%s: no Python function named, only the interpreter's C frames: run it with "
		    "-X perf (python 3.12 and later; or PYTHONPERFSUPPORT=1) to name them, "
		    "whole stacks (3.11 and older have no -X perf)",
		    python);
}

void kp_sym_unknown_report(const struct kp_profile *p, kp_sym_say_fn fn, void *arg)
{
	int v = kp_profile_find_value(p, "samples");
	size_t n, shown, need_debug = 0;
	struct kp_module *mods;
	kp_count all;

	if (v < 0)
		return;
	mods = kp_modules_count(p, (size_t)v, kp_fde_start_module, &n);
	shown = kp_modules_to_say(mods, n, MAX_LINES, &all);
	for (size_t i = 0; i < shown; i++) {
		print_module(p, &mods[i], all, fn, arg);
		need_debug += remedy(&mods[i]) == DEBUG_REMEDY;
	}
	if (need_debug)
		say(fn, arg,
		    "debug symbols would name the rest of %s (the package's -dbgsym from "
		    "Debian's debug archive, --debuginfo-dir, or DEBUGINFOD_URLS)",
		    need_debug == 1 ? "that file's frames" : "those files' frames");
	kp_modules_free(mods, n);
	python_note(p, fn, arg);
}
