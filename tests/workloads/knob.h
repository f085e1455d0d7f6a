/* The arguments the benchmarks of fixed work share (cibench, reqpipe,
 * memchase, sysheavy, strparse, multicall; scripts/bench-gate):
 *   rounds=N       how many times the whole work is done
 *   dir=PATH       where a file a benchmark writes goes (default $TMPDIR or
 *                  /tmp)
 *   NAME=PERCENT   the stage NAME does PERCENT% more work, as a slower
 *                  change to its code would: its cost is linear in its work
 * A header of static functions, as each workload is a program of its own. */
#ifndef KP_KNOB_H
#define KP_KNOB_H

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A stage's function, kept out of line and unspecialized so that its name
 * in a profile is its own (not NAME.constprop.0). */
#if defined(__GNUC__) && !defined(__clang__)
#define KP_STAGE __attribute__((noinline, noclone))
#else
#define KP_STAGE __attribute__((noinline))
#endif

struct kp_knob {
	const char *name;   /* NAME in NAME=PERCENT */
	unsigned long base; /* the work of one call of the stage */
	unsigned long work; /* base plus PERCENT% of it: what the stage does */
};

static void kp_knob_usage(const char *prog, const struct kp_knob *knobs, size_t n)
{
	fprintf(stderr, "usage: %s [rounds=N] [dir=PATH] [", prog);
	for (size_t k = 0; k < n; k++)
		fprintf(stderr, "%s%s", k ? "|" : "", knobs[k].name);
	fputs("=PERCENT]...\n", stderr);
	exit(2);
}

/* Parses argv: *rounds and *dir where given (left alone otherwise), every
 * knob's work (its base unless NAME=PERCENT names it). A bad argument
 * prints the usage and exits 2. */
static void kp_knob_parse(int argc, char **argv, const char *prog, struct kp_knob *knobs, size_t n,
			  unsigned *rounds, const char **dir)
{
	for (size_t k = 0; k < n; k++)
		knobs[k].work = knobs[k].base;
	for (int a = 1; a < argc; a++) {
		const char *arg = argv[a], *eq = strchr(arg, '=');
		char *end;
		size_t k;

		if (!eq || eq[1] == '\0')
			kp_knob_usage(prog, knobs, n);
		if (strncmp(arg, "dir=", 4) == 0) {
			*dir = eq + 1;
			continue;
		}
		unsigned long v = strtoul(eq + 1, &end, 10);
		if (*end != '\0' || v > 100000)
			kp_knob_usage(prog, knobs, n);
		if (strncmp(arg, "rounds=", 7) == 0) {
			*rounds = (unsigned)v;
			continue;
		}
		for (k = 0; k < n; k++)
			if (strlen(knobs[k].name) == (size_t)(eq - arg) &&
			    strncmp(arg, knobs[k].name, (size_t)(eq - arg)) == 0)
				break;
		if (k == n)
			kp_knob_usage(prog, knobs, n);
		knobs[k].work = knobs[k].base + knobs[k].base * v / 100;
	}
	if (!*dir || !**dir)
		*dir = "/tmp";
}

#endif
