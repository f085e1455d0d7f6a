/* kp_diff's gate: the functions whose growth passes the gate's test, and
 * each one's growth attributed to the callee that explains it (the pairs
 * diff.c kept); the tests and adjustment are diff_stats.c's. */
#include "diff/diffP.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/xalloc.h"

double kp_diff_gate_p(const struct kp_diff *df, enum kp_diff_measure measure, size_t i,
		      double *growth)
{
	const struct kp_diff_function *fn = &df->fns[i];

	if (measure == KP_DIFF_TIME) {
		*growth = 100 * fn->time.growth;
		return fn->time.tested ? fn->time.p : 1;
	}
	*growth = fn->col[KP_DIFF_TOTAL].change;
	return fn->col[KP_DIFF_TOTAL].tested
		       ? kp_diff_stats_upper_p(fn->col[KP_DIFF_TOTAL].z, fn->col[KP_DIFF_TOTAL].df)
		       : 1;
}

/* Function i's samples a run, both sides pooled. */
static double samples_a_run(const struct kp_diff *df, size_t i)
{
	const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];

	return (ch->count[0] + ch->count[1]) / (double)(df->runs[0] + df->runs[1]);
}

/* The samples a run a function needs for a growth of points percent of its
 * time to show at these runs, against the least noise a sampled time has
 * (Poisson: one sample's variance a sample): significant alone, above the
 * normal's one-sided quantile of alpha. Smaller functions cannot show such
 * a growth at these runs at all; the pooled count says nothing of the
 * direction. */
static double time_samples_needed(const struct kp_diff *df, double points)
{
	double kb = (double)df->runs[0], kn = (double)df->runs[1];
	double z = kp_diff_stats_upper_quantile(df->alpha, HUGE_VAL) * 100 / points;

	return z * z * (1 / kb + 1 / kn);
}

/* Whether function i is in the gate's family at points. */
static bool in_family(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		      size_t i)
{
	if (measure == KP_DIFF_TIME)
		return df->fns[i].time.tested &&
		       samples_a_run(df, i) > time_samples_needed(df, points);
	{
		const struct kp_diff_change *ch = &df->fns[i].col[KP_DIFF_TOTAL];
		double mean = (ch->share[0] + ch->share[1]) / 2;

		/* a growth above points needs NEW's share above points, and
		 * BASE's below 100 - points: the mean in between, with half
		 * of points each side. With one run a side the family stays
		 * the whole column: the binomial model cannot be checked
		 * against runs, and a function that varies more than it says
		 * gets through a small family more often (bench-gate: 6.5%
		 * false alarms against 2.5%) */
		return ch->tested &&
		       (!kp_diff_measured(df) || (mean > points / 2 && mean < 100 - points / 2));
	}
}

/* The growth of A's total (share or time) less the part of it under B
 * (pair ps): tested as A's own is, with A' = A - AB run by run. True when
 * that rest is itself a regression (grew by more than points, one-sided
 * p times the family's size at most alpha: Bonferroni, the strictest
 * step of Holm's). */
static bool rest_grew(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		      size_t m, uint32_t a, const struct pair_sums *ps)
{
	const struct sums *s = &df->sums[a];
	double dof, phi, growth, p;

	if (measure == KP_DIFF_TIME) {
		struct kp_diff_time tm = {0};
		double t[2], tsq[2];

		for (int side = 0; side < 2; side++) {
			t[side] = s->t[side] - ps->t[side];
			tsq[side] = s->tsq[side] - 2 * ps->tcross[side] + ps->tsq[side];
		}
		phi = kp_diff_stats_time_dispersion(df, t, tsq, &dof);
		kp_diff_stats_take_dispersion(df->time_prior, phi, dof, 0, &tm.dispersion, &tm.df);
		kp_diff_stats_time_test(df, t, &tm);
		/* of A's own time: would A's growth, B's part taken out, still
		 * pass points percent of A? */
		growth = s->t[0] > 0
				 ? 100 * (tm.mean[1] - tm.mean[0]) / (s->t[0] / (double)df->runs[0])
				 : HUGE_VAL;
		p = tm.p;
	} else {
		struct kp_diff_change ch = {0};
		double x[2], sq[2];

		for (int side = 0; side < 2; side++) {
			x[side] = s->count[KP_DIFF_TOTAL][side] - ps->x[side];
			sq[side] = s->sq[KP_DIFF_TOTAL][side] - 2 * ps->cross[side] + ps->sq[side];
		}
		if (kp_diff_measured(df)) {
			phi = kp_diff_stats_measured_dispersion(df, x, sq, &dof);
			kp_diff_stats_take_dispersion(df->prior[KP_DIFF_TOTAL], phi, dof,
						      df->dispersion, &ch.dispersion, &ch.df);
		} else {
			ch.dispersion = df->prior[KP_DIFF_TOTAL].var;
			ch.df = HUGE_VAL;
		}
		kp_diff_stats_share_test(df, x, &ch);
		growth = 100 * (x[1] / df->count_total[1] - x[0] / df->count_total[0]);
		p = kp_diff_stats_upper_p(ch.z, ch.df);
	}
	return growth > points && p * (double)m <= df->alpha;
}

/* The via of each of the gate's candidates cand[0..nc) (NONE: named):
 * a candidate whose growth the growth under another candidate below it
 * explains. A chain (A above B above C, C the change) resolves to a
 * descendant that is itself named where there is one. */
static void attribute(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		      size_t m, const uint32_t *cand, size_t nc, uint32_t *via)
{
	for (size_t i = 0; i < nc; i++) {
		double best = -HUGE_VAL;

		via[i] = NONE;
		for (size_t j = 0; df->attribute && j < nc; j++) {
			uint64_t key = (uint64_t)cand[i] << 32 | cand[j], idx;
			const struct pair_sums *ps;
			double under;

			if (j == i || !kp_u64map_get(&df->pair_index, key, &idx))
				continue;
			ps = &df->pairs[idx];
			if (rest_grew(df, measure, points, m, cand[i], ps))
				continue;
			/* the descendant whose part grew most */
			under = measure == KP_DIFF_TIME ? ps->t[1] / (double)df->runs[1] -
								  ps->t[0] / (double)df->runs[0]
							: ps->x[1] / df->count_total[1] -
								  ps->x[0] / df->count_total[0];
			if (under > best) {
				best = under;
				via[i] = (uint32_t)j;
			}
		}
	}
	/* follow each chain to a named one (at most nc steps: a cycle of
	 * functions each under the other names them all) */
	for (size_t i = 0; i < nc; i++) {
		uint32_t k = via[i];

		for (size_t step = 0; k != NONE && via[k] != NONE && step < nc; step++)
			k = via[k];
		if (k != NONE && via[k] != NONE)
			k = NONE;
		via[i] = k;
	}
	for (size_t i = 0; i < nc; i++)
		if (via[i] != NONE && via[via[i]] != NONE)
			via[i] = NONE;
}

/* Whether B's samples are A's (pair ps, B below A): every sample of B is
 * under A, in both builds (PRIVATE_SHARE of them: an unwinding glitch
 * aside), and B holds at least half of A's: A is B's driver, B A's
 * helper, and what a profile shows of A's change and of B's is the same
 * (samples cannot tell "A calls B more" from "B is slower a call"). */
#define PRIVATE_SHARE 0.99
static bool holds_privately(const struct kp_diff *df, const struct pair_sums *ps)
{
	const struct sums *a = &df->sums[ps->a], *b = &df->sums[ps->b];

	for (int side = 0; side < 2; side++)
		if (!(ps->x[side] >= PRIVATE_SHARE * b->count[KP_DIFF_TOTAL][side]))
			return false;
	return ps->x[0] + ps->x[1] >= (a->count[KP_DIFF_TOTAL][0] + a->count[KP_DIFF_TOTAL][1]) / 2;
}

static double pooled_total(const struct kp_diff *df, uint32_t f)
{
	return df->sums[f].count[KP_DIFF_TOTAL][0] + df->sums[f].count[KP_DIFF_TOTAL][1];
}

/* Each named candidate (via NONE) but JIT code climbs to the outermost
 * candidate that holds it privately (holds_privately), step by step (a
 * library call in a function, the system call in the library call, ...):
 * the change is named there. What was explained by the named one, and the named one,
 * are then listed under the holder: within[] set for those below it. */
static void name_holders(const struct kp_diff *df, const uint32_t *cand, size_t nc, uint32_t *via,
			 uint8_t *within)
{
	for (size_t b = 0; b < nc; b++) {
		size_t top = b;

		/* JIT code is the program's own (JavaScript, Java): what holds
		 * it is the runtime's entry, module loader and trampolines, no
		 * driver of it (a node script's CRC, 52% of the script's entry,
		 * climbed to node::NodeMainInstance::Run) */
		if (via[b] != NONE || df->fns[cand[b]].kind == KP_FRAME_JIT)
			continue;
		for (size_t step = 0; step < nc; step++) {
			size_t best = SIZE_MAX;
			double most = pooled_total(df, cand[top]);

			for (size_t a = 0; a < nc; a++) {
				uint64_t key = (uint64_t)cand[a] << 32 | cand[top], idx;

				if (a == top || pooled_total(df, cand[a]) <= most ||
				    !kp_u64map_get(&df->pair_index, key, &idx) ||
				    !holds_privately(df, &df->pairs[idx]))
					continue;
				most = pooled_total(df, cand[a]);
				best = a;
			}
			if (best == SIZE_MAX)
				break;
			top = best;
		}
		if (top == b)
			continue;
		for (size_t i = 0; i < nc; i++)
			if (i != top && (via[i] == b || i == b)) {
				uint64_t key = (uint64_t)cand[top] << 32 | cand[i], idx;

				via[i] = (uint32_t)top;
				within[i] = kp_u64map_get(&df->pair_index, key, &idx);
			}
		via[top] = NONE;
		within[top] = 0;
	}
}

/* The gate's family at points: each member's raw p-value into p[m] and
 * its position + 1 into pos (0: out), member[function] set for those it can
 * name (interrupt work passed over is not); the time gate's functions left
 * out for their size that grew past points anyway counted as unseen in g.
 * Returns the family's size m. */
static size_t family(const struct kp_diff *df, enum kp_diff_measure measure, double points,
		     struct kp_diff_gate *g, double *p, uint32_t *pos, uint8_t *member)
{
	bool pass_over = !df->gate_interrupts;
	size_t m = 0, nsmall = 0;

	g->small_fn = NONE;
	for (size_t i = 0; i < df->nfns; i++) {
		double growth;

		pos[i] = 0;
		if (measure == KP_DIFF_TIME && !kp_diff_time_tested(df))
			continue;
		if (in_family(df, measure, points, i)) {
			p[m++] = kp_diff_gate_p(df, measure, i, &growth);
			pos[i] = (uint32_t)m;
			member[i] = !(pass_over && df->fns[i].interrupt);
		} else if (measure == KP_DIFF_TIME && df->fns[i].time.tested &&
			   !(pass_over && df->fns[i].interrupt)) {
			member[i] = 2; /* left out for its size */
			nsmall++;
		}
	}
	/* which of those left out for their size grew past points, and
	 * significantly, Bonferroni over them (the family must not look at
	 * the labels, but what it could not see is said): unseen */
	for (size_t i = 0; i < df->nfns && nsmall; i++) {
		if (member[i] != 2)
			continue;
		member[i] = 0;
		if (!(100 * df->fns[i].time.growth > points) ||
		    !(df->fns[i].time.p * (double)nsmall <= df->alpha))
			continue;
		g->small_grew++;
		if (g->small_fn == NONE || samples_a_run(df, i) > g->small_has) {
			g->small_fn = (uint32_t)i;
			g->small_has = samples_a_run(df, i);
		}
	}
	g->small_needs = measure == KP_DIFF_TIME ? time_samples_needed(df, points) : 0;
	return m;
}

void kp_diff_gate(const struct kp_diff *df, double points, struct kp_diff_gate *g)
{
	kp_diff_gate_measure(df, KP_DIFF_SHARE, points, g);
}

void kp_diff_gate_measure(const struct kp_diff *df, enum kp_diff_measure measure, double points,
			  struct kp_diff_gate *g)
{
	size_t nf = df->nfns ? df->nfns : 1, m = 0, nc = 0;
	double *p = kp_xmalloc(nf * sizeof(*p));
	uint32_t *pos = kp_xmalloc(nf * sizeof(*pos)); /* family position + 1, 0: out */
	uint8_t *member = kp_xcalloc(nf, 1);
	uint32_t *cand = kp_xmalloc(nf * sizeof(*cand)), *via = kp_xmalloc(nf * sizeof(*via));
	double *cand_p = kp_xmalloc(nf * sizeof(*cand_p));
	uint8_t *within = kp_xcalloc(nf, 1);
	bool pass_over = !df->gate_interrupts;

	memset(g, 0, sizeof(*g));
	g->measure = measure;
	g->points = points;
	g->fn = kp_xmalloc(nf * sizeof(*g->fn));
	g->p = kp_xmalloc(nf * sizeof(*g->p));
	g->via = kp_xmalloc(nf * sizeof(*g->via));
	g->within = kp_xcalloc(nf, 1);
	m = family(df, measure, points, g, p, pos, member);
	g->family = m;
	g->level = df->alpha / (double)(m ? m : 1);
	g->relabellings = kp_diff_stats_gate_adjust(df, measure, points, pos, member, m, p,
						    &g->family, &g->level);
	g->resolution = kp_diff_stats_resolution(df, m);
	/* the candidates in the total column's order (by |change|) for
	 * shares, by growth for time */
	for (size_t k = 0; k < df->nfns; k++) {
		uint32_t i = df->order[KP_DIFF_TOTAL][k];
		double adj = pos[i] ? p[pos[i] - 1] : 1, growth;

		kp_diff_gate_p(df, measure, i, &growth);
		if (!(growth > points) || adj > df->alpha)
			continue;
		cand_p[nc] = adj;
		cand[nc++] = i;
	}
	if (measure == KP_DIFF_TIME)
		for (size_t a = 1; a < nc; a++) /* insertion: tens at most */
			for (size_t b = a; b > 0 && df->fns[cand[b]].time.growth >
							    df->fns[cand[b - 1]].time.growth;
			     b--) {
				uint32_t t = cand[b];
				double tp = cand_p[b];

				cand[b] = cand[b - 1];
				cand[b - 1] = t;
				cand_p[b] = cand_p[b - 1];
				cand_p[b - 1] = tp;
			}
	attribute(df, measure, points, g->family, cand, nc, via);
	name_holders(df, cand, nc, via, within);
	/* named, then what is passed over (interrupt work, one run a side),
	 * then what a descendant explains */
	for (int part = 0; part < 3; part++)
		for (size_t c = 0; c < nc; c++) {
			uint32_t i = cand[c];
			bool skip = pass_over && df->fns[i].interrupt;
			int is = skip ? 1 : via[c] != NONE ? 2 : 0;
			size_t at = g->n + g->nskipped + g->nvia;

			if (is != part)
				continue;
			g->fn[at] = i;
			g->p[at] = cand_p[c];
			g->via[at] = is == 2 ? cand[via[c]] : i;
			g->within[at] = within[c];
			if (is == 0)
				g->n++;
			else if (is == 1)
				g->nskipped++;
			else
				g->nvia++;
		}
	kp_diff_stats_detectability(df, g, member);
	free(p);
	free(pos);
	free(member);
	free(cand);
	free(via);
	free(cand_p);
	free(within);
}

void kp_diff_gate_fini(struct kp_diff_gate *g)
{
	free(g->fn);
	free(g->p);
	free(g->via);
	free(g->within);
	memset(g, 0, sizeof(*g));
}
