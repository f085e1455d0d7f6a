/* kp_layout: the frames of a flame graph, before any drawing: steps 1-3
 * of flamegraph.pl (flamegraph/svg.c says them). The stacks of a folded
 * table, in line order (or input order for a flame chart), are walked; a
 * frame that differs from the previous stack's at the same depth closes
 * and a new one opens; frames narrower than minwidth are dropped. What is
 * left are nodes spanning [start, end) in cumulative counts, with their
 * exact counts, their off-CPU part and, for differential tables, their
 * changes. Private to flamegraph/: the SVG writer draws them.
 *
 * Off-CPU time is the count of the stacks whose leaf is a marker frame
 * ("[off-cpu: sleeping]", profile/wait.h), told by its name alone, so
 * that folded text drawn by `kprof flamegraph` is seen as a recording is. */
#ifndef KP_FLAMEGRAPH_LAYOUT_H
#define KP_FLAMEGRAPH_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flamegraph/svg_opts.h"
#include "profile/folded.h"
#include "util/count.h"

/* The left and right margins, px. */
#define KP_LAYOUT_XPAD 10.0

/* A closed frame that survived the minwidth cut. */
struct kp_layout_node {
	uint32_t fid;
	uint32_t depth;	   /* 0 is the "all" root */
	bool waker;	   /* chain palette: after a "--" separator frame */
	bool has_delta;	   /* differential: opened by a stack with a BEFORE */
	double start, end; /* as flamegraph.pl sums them: positions */
	kp_count samples;  /* exact: the title's count */
	kp_count before;   /* differential: BEFORE summed over the frame */
	kp_count offcpu;   /* of samples, the stacks whose leaf is a marker frame */
	double delta;	   /* differential: its self delta */
};

struct kp_layout {
	/* in: the table and the options, and whether separators ("--")
	 * split chain graphs' stacks */
	const struct kp_folded *f;
	const struct kp_svg_opts *o;
	bool chain;
	/* out: the frames, in the order they closed */
	struct kp_layout_node *nodes;
	size_t nnodes, nodes_cap;
	double time, timemax, widthpertime, minwidth_time;
	double maxdelta;    /* differential: the largest |stack delta|, at least 1 */
	double scale;	    /* differential: what BEFORE counts are multiplied by */
	double time_before; /* differential: the sum of BEFORE */
	uint32_t depthmax;
	bool offcpu; /* some stack's leaf is a marker frame */
};

/* Fills l's out part from its in part (zero the out part first). */
void kp_layout_flow(struct kp_layout *l);
/* Frees the nodes. */
void kp_layout_fini(struct kp_layout *l);

/* v as Perl prints a number: an integer-valued one as an integer, any
 * other as %.15g; flamegraph.pl's frame keys and y values go through
 * that. Returns snprintf's length. */
int kp_layout_perl_num(char *buf, size_t size, double v);

#endif
