/* profile/timeline.c: slices keep each sample's share of its events (the
 * count exactly, a period in proportion; a wait the part inside), joins put profiles on the
 * first's axis and give a clashing object an id of its own, times parse
 * as seconds or UTC wall-clock times; and the recorder's events survive
 * merging locations. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kp_test.h"
#include "profile/profile.h"
#include "profile/timeline.h"

/* 2026-12-06T01:00:00Z */
#define ORIGIN 1796518800000000000ull

/* Two samples, A (user object 1, /bin/a) and B (kernel); A at 0-999 ms
 * each ms, B at 1000-1499; values: 1 a sample, 10 each period. */
static struct kp_profile *two_phases(uint64_t origin, const char *path)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_loc la = {.addr = 0x10, .obj = 1, .kind = KP_LOC_USER},
		      lb = {.addr = 0xffffffff81000000ull, .kind = KP_LOC_KERNEL};
	struct kp_profile_mapping m = {.kind = KP_LOC_USER, .obj = 1};
	struct kp_profile_root r = {.comm = kp_profile_intern(p, "prog", 4)};
	uint32_t a, b, ida, idb;
	kp_count v[2] = {1, 10};
	struct kp_profile_frame f = {0, 3, KP_FRAME_USER};

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_value_type(p, "cpu", "nanoseconds", 0);
	a = kp_profile_location(p, &la);
	b = kp_profile_location(p, &lb);
	f.function = kp_profile_function(p, kp_profile_intern(p, "fa", 2), 0);
	kp_profile_set_frames(p, a, &f, 1, true);
	m.path = kp_profile_intern(p, path, strlen(path));
	kp_profile_set_mapping(p, &m);
	kp_profile_time_start(p, origin);
	for (uint32_t ms = 0; ms < 1500; ms++) {
		uint32_t id;

		kp_profile_add_id(p, &r, ms < 1000 ? &a : &b, 1, v, &id);
		kp_profile_add_event(p, id, ms, 77);
	}
	kp_profile_add_id(p, &r, &a, 1, v, &ida);
	kp_profile_add_id(p, &r, &b, 1, v, &idb);
	CHECK_EQ_INT(ida, 0);
	CHECK_EQ_INT(idb, 1);
	kp_profile_set_meta(p, KP_META_DURATION, "1.5");
	return p;
}

static kp_count value_of(const struct kp_profile *p, uint32_t kind, size_t v)
{
	kp_count s = 0;

	for (size_t i = 0; i < kp_profile_nsamples(p); i++) {
		size_t n;
		const kp_count *vals;
		const uint32_t *locs = kp_profile_sample(p, i, NULL, &n, &vals);

		if (n && kp_profile_loc(p, locs[0])->kind == kind)
			s += vals[v];
	}
	return s;
}

static void test_slice(void)
{
	struct kp_profile *p = two_phases(ORIGIN, "/bin/a"), *q;
	size_t n;

	/* A's samples: 1001 (one without time), 1000 events */
	q = kp_timeline_slice(p, 500, 1200);
	CHECK(value_of(q, KP_LOC_USER, 0) == 500 * 1001 / 1000);
	CHECK(value_of(q, KP_LOC_KERNEL, 0) == 200 * 501 / 500);
	kp_profile_events(q, &n);
	CHECK_EQ_INT(n, 700);
	CHECK_EQ_INT(kp_timeline_count(q, 0, 1000), 500);
	CHECK_EQ_STR(kp_profile_meta(q, KP_META_RANGE), "0.500-1.200");
	CHECK_EQ_INT(kp_profile_time_origin(q) == ORIGIN, 1);
	kp_profile_free(q);
	/* nothing in B's phase of A */
	q = kp_timeline_slice(p, 1000, 1500);
	CHECK(value_of(q, KP_LOC_USER, 0) == 0);
	CHECK(value_of(q, KP_LOC_KERNEL, 1) == 10 * 501);
	kp_profile_free(q);
	kp_profile_free(p);
}

static void test_slice_spec(void)
{
	struct kp_profile *p = two_phases(ORIGIN, "/bin/a");
	struct kp_diag d = {{0}};
	uint64_t ms;

	CHECK_EQ_INT(kp_timeline_parse("1.25", ORIGIN, &ms, &d), 0);
	CHECK_EQ_INT(ms, 1250);
	CHECK_EQ_INT(kp_timeline_parse("2026-12-06T01:00:01.5Z", ORIGIN, &ms, &d), 0);
	CHECK_EQ_INT(ms, 1500);
	CHECK_EQ_INT(kp_timeline_parse("2026-12-06 01:00:02", ORIGIN, &ms, &d), 0);
	CHECK_EQ_INT(ms, 2000);
	CHECK_EQ_INT(kp_timeline_parse("01:02", ORIGIN, &ms, &d), 0);
	CHECK_EQ_INT(ms, 120000);
	CHECK_EQ_INT(kp_timeline_parse("01:00:00.250", ORIGIN, &ms, &d), 0);
	CHECK_EQ_INT(ms, 250);
	/* before the origin: 0; just past midnight of a run that started before it */
	CHECK_EQ_INT(kp_timeline_parse("00:59:00", ORIGIN, &ms, &d), 0);
	CHECK_EQ_INT(ms, 0);
	CHECK_EQ_INT(kp_timeline_parse("00:00:01", ORIGIN + 22ull * 3600 * 1000000000u, &ms, &d),
		     0);
	CHECK_EQ_INT(ms, 3600000u + 1000u);
	for (const char *
		     bad[] = {"", "x", "-1", "1e", "0x10", "25:00:00", "2026-13-01T00:00:00",
			      "2026-12-06T01", "01:00:00 tomorrow", "1:2:", "01:60", "nan", "inf"},
		    *const *b = bad;
	     b < bad + sizeof(bad) / sizeof(bad[0]); b++) {
		CHECK_EQ_INT(kp_timeline_parse(*b, ORIGIN, &ms, &d), -EINVAL);
		CHECK(strstr(d.msg, "is no time") != NULL);
	}
	CHECK_EQ_INT(kp_timeline_slice_spec(&p, "2", "1", &d), -EINVAL);
	CHECK(strstr(d.msg, "is not before") != NULL);
	CHECK_EQ_INT(kp_timeline_slice_spec(&p, "5", NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "no samples from 5.000 s on (they run from 0.000 s to 1.499 s)") !=
	      NULL);
	CHECK_EQ_INT(kp_timeline_slice_spec(&p, "1", NULL, &d), 0);
	CHECK(value_of(p, KP_LOC_USER, 0) == 0);
	CHECK_EQ_STR(kp_profile_meta(p, KP_META_RANGE), "1.000-1.500");
	kp_profile_free(p);
	p = kp_profile_new();
	CHECK_EQ_INT(kp_timeline_slice_spec(&p, "1", NULL, &d), -EINVAL);
	CHECK(strstr(d.msg, "keeps no time") != NULL);
	kp_profile_free(p);
}

static void test_join(void)
{
	/* the second 2 s later, its object 1 another file */
	struct kp_profile *a = two_phases(ORIGIN, "/bin/a"),
			  *b = two_phases(ORIGIN + 2000000000ull, "/bin/b"),
			  *c = two_phases(ORIGIN + 4000000000ull, "/bin/a"),
			  *q = kp_timeline_new_like(a);
	struct kp_diag d = {{0}};
	size_t n;
	const struct kp_profile_event *ev;

	CHECK_EQ_INT(kp_timeline_join(q, a, &d), 0);
	CHECK_EQ_INT(kp_timeline_join(q, b, &d), 0);
	CHECK_EQ_INT(kp_timeline_join(q, c, &d), 0);
	ev = kp_profile_events(q, &n);
	CHECK_EQ_INT(n, 4500);
	CHECK_EQ_INT(ev[1500].ms, 2000);
	CHECK_EQ_INT(ev[4499].ms, 5499);
	CHECK(kp_profile_total(q, 0) == 3 * 1502);
	/* /bin/b got an object of its own, /bin/a's twice the same */
	CHECK_EQ_INT(kp_profile_nmappings(q), 2);
	CHECK(kp_profile_mapping_of(q, KP_LOC_USER, 2) != NULL);
	/* a slice of B's time in the joined profile names /bin/b */
	{
		struct kp_profile *s = kp_timeline_slice(q, 2000, 3000);
		const struct kp_profile_mapping *m = kp_profile_mapping_of(s, KP_LOC_USER, 2);

		CHECK(m && strcmp(kp_profile_str(s, m->path, NULL), "/bin/b") == 0);
		CHECK(value_of(s, KP_LOC_USER, 0) == 1001);
		kp_profile_free(s);
	}
	/* before the first: refused */
	CHECK_EQ_INT(kp_timeline_join(b, a, &d), -EINVAL);
	CHECK(strstr(d.msg, "starts before") != NULL);
	kp_profile_free(q);
	kp_profile_free(a);
	kp_profile_free(b);
	kp_profile_free(c);
}

static void test_merge_keeps_time(void)
{
	struct kp_profile *p = two_phases(ORIGIN, "/bin/a"), *q = kp_profile_merge_locations(p);
	size_t n;
	const struct kp_profile_event *ev = kp_profile_events(q, &n);

	CHECK_EQ_INT(n, 1500);
	CHECK_EQ_INT(ev[1499].ms, 1499);
	CHECK_EQ_INT(ev[0].tid, 77);
	CHECK_EQ_INT(kp_profile_time_origin(q) == ORIGIN, 1);
	kp_profile_free(q);
	kp_profile_free(p);
}

static void test_bound(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_root r = {0};
	uint32_t id;
	kp_count v = 1;
	size_t n;

	kp_profile_add_value_type(p, "samples", "count", 0);
	kp_profile_add_id(p, &r, NULL, 0, &v, &id);
	CHECK(!kp_profile_add_event(p, id, 0, 0)); /* not timed */
	kp_profile_time_start(p, 1);
	CHECK(kp_profile_add_event(p, id, 10, 0));
	CHECK(kp_profile_add_event(p, id, 5, 0)); /* earlier: at the last's time */
	kp_profile_events(p, &n);
	CHECK_EQ_INT(kp_profile_events(p, &n)[1].ms, 10);
	CHECK_EQ_INT(kp_profile_events_dropped(p), 1);
	kp_profile_free(p);
}

/* Waits keep their time: a wait of 2 s (1000-2999 ms) and a sample taken
 * at 1500 ms; a slice counts the part of the wait inside it, and holds
 * that part as its event, so a slice of the slice counts in proportion. */
static void test_wait_slices(void)
{
	struct kp_profile *p = kp_profile_new(), *q, *q2;
	struct kp_loc la = {.addr = 0x10, .obj = 1, .kind = KP_LOC_USER},
		      lb = {.addr = 0xffffffff81000000ull, .kind = KP_LOC_KERNEL};
	struct kp_profile_root r = {0};
	uint32_t a, b, wid, sid;
	kp_count vw[2] = {2000000000, 1}, vs[2] = {1000000, 1};
	size_t n;
	const struct kp_profile_event *ev;

	kp_profile_add_value_type(p, "off-cpu", "nanoseconds", 0);
	kp_profile_add_value_type(p, "samples", "count", 0);
	a = kp_profile_location(p, &la);
	b = kp_profile_location(p, &lb);
	kp_profile_time_start(p, ORIGIN);
	kp_profile_add_id(p, &r, &b, 1, vs, &sid);
	CHECK(kp_profile_add_event(p, sid, 1500, 9));
	kp_profile_add_id(p, &r, &a, 1, vw, &wid);
	CHECK(kp_profile_add_span(p, wid, 2999, 2000, 9));
	q = kp_timeline_slice(p, 1500, 2000);
	CHECK(value_of(q, KP_LOC_USER, 0) == 500000000);
	CHECK(value_of(q, KP_LOC_KERNEL, 0) == 1000000);
	ev = kp_profile_events(q, &n);
	CHECK_EQ_INT(n, 2);
	CHECK_EQ_INT(ev[1].ms, 1999);
	CHECK_EQ_INT(ev[1].span, 500);
	q2 = kp_timeline_slice(q, 1750, 1800);
	CHECK(value_of(q2, KP_LOC_USER, 0) == 50000000);
	CHECK(value_of(q2, KP_LOC_KERNEL, 0) == 0);
	/* slices that split the wait sum to it */
	kp_profile_free(q2);
	q2 = kp_timeline_slice(p, 0, 1234);
	kp_profile_free(q);
	q = kp_timeline_slice(p, 1234, 5000);
	CHECK(value_of(q, KP_LOC_USER, 0) + value_of(q2, KP_LOC_USER, 0) == 2000000000);
	CHECK_EQ_INT(kp_timeline_count(p, 0, 1000), 0);
	CHECK_EQ_INT(kp_timeline_count(p, 2999, 3000), 1);
	/* a span from before the origin is cut at it */
	CHECK(kp_profile_add_span(p, wid, 3000, 5000, 9));
	ev = kp_profile_events(p, &n);
	CHECK_EQ_INT(ev[n - 1].span, 3001);
	kp_profile_free(q2);
	kp_profile_free(q);
	kp_profile_free(p);
}

KP_TEST_MAIN(test_slice, test_slice_spec, test_join, test_merge_keeps_time, test_bound,
	     test_wait_slices)
