/* The raw DIE reader (symbolize/dwarf_raw.c) against libdw.
 *
 * On real files (the inline fixture built by gcc and clang with DWARF 2, 4,
 * 5 and 64-bit DWARF, the built workloads, this test program, libc's
 * debuginfo when installed): every DIE of every unit is visited in the
 * same order at the same offset with the same tag, every function and
 * inlined instance has the ranges dwarf_ranges gives, skipping a subtree
 * lands where walking it ends, and kp_dwidx_chain gives the chain
 * dwarf_getscopes gives. On hand-built hostile bytes: no crash, no loop,
 * no read out of bounds (the CI runs this under ASan). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/dwarf_index.h"
#include "symbolize/dwarf_raw.h"

static char src[PATH_MAX], tmp[64];

/* One visited DIE: its offset and tag, and for functions and inlined
 * instances their ranges (as a hash: order and values). */
struct seen {
	uint64_t off;
	uint32_t tag;
	int nranges;
	uint64_t rhash;
};

struct seenv {
	struct seen *v;
	size_t n, cap;
};

static void seen_add(struct seenv *s, struct seen e)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n++] = e;
}

static bool is_code(uint32_t tag)
{
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull + (h >> 29);
}

/* Depth-first over every DIE below die through libdw. */
static void walk_libdw(Dwarf_Die *die, struct seenv *out, int depth)
{
	Dwarf_Die child;

	if (depth > 200 || dwarf_child(die, &child) != 0)
		return;
	do {
		struct seen e = {dwarf_dieoffset(&child), (uint32_t)dwarf_tag(&child), 0, 0};

		if (is_code(e.tag)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t off = 0;

			while ((off = dwarf_ranges(&child, off, &base, &lo, &hi)) > 0) {
				e.nranges++;
				e.rhash = mix(mix(e.rhash, lo), hi);
			}
			if (off < 0)
				e.nranges = -1 - e.nranges;
		}
		seen_add(out, e);
		if (dwarf_haschildren(&child))
			walk_libdw(&child, out, depth + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

struct rctx {
	int n;
	uint64_t h;
};

static bool on_range(void *arg, uint64_t lo, uint64_t hi)
{
	struct rctx *r = arg;

	r->n++;
	r->h = mix(mix(r->h, lo), hi);
	return true;
}

static int nskip_bad;

/* The same through the raw reader, from pos (a first child) to the end of
 * the sibling list; checks kp_dwraw_skip against the walk. */
static int walk_raw(const struct kp_dwraw_unit *u, uint64_t pos, struct seenv *out, int depth,
		    uint64_t *after)
{
	for (;;) {
		struct kp_dwraw_die d;
		struct seen e;
		int rc = kp_dwraw_die(u, pos, &d);

		if (rc < 0)
			return rc;
		if (rc == 0) {
			*after = d.next;
			return 0;
		}
		e = (struct seen){d.off, d.tag, 0, 0};
		if (is_code(d.tag)) {
			struct rctx r = {0, 0};
			int n = kp_dwraw_ranges(u, &d, on_range, &r);

			e.nranges = n < 0 ? -1 - r.n : r.n;
			e.rhash = r.h;
		}
		seen_add(out, e);
		if (d.children && depth <= 200) {
			uint64_t skipped = 0;

			rc = walk_raw(u, d.next, out, depth + 1, &pos);
			if (rc < 0)
				return rc;
			if (kp_dwraw_skip(u, &d, &skipped) != 0 || skipped != pos)
				nskip_bad++;
		} else if ((rc = kp_dwraw_skip(u, &d, &pos)) < 0) {
			return rc;
		}
	}
}

/* Addresses to ask kp_dwidx_chain about: ends and middles of the ranges. */
struct addrs {
	uint64_t *v;
	size_t n, cap;
};

static bool collect_addr(void *arg, uint64_t lo, uint64_t hi)
{
	struct addrs *a = arg;

	if (hi <= lo)
		return true;
	if (a->n + 3 > a->cap) {
		a->cap = a->cap ? 2 * a->cap : 1024;
		a->v = realloc(a->v, a->cap * sizeof(*a->v));
		if (!a->v)
			abort();
	}
	a->v[a->n++] = lo;
	a->v[a->n++] = lo + (hi - lo) / 2;
	a->v[a->n++] = hi - 1;
	return true;
}

/* The path of functions and inlined instances containing addr below die,
 * outermost first, found the plain way: libdw's dwarf_haspc on every
 * function, every other DIE searched through. Of siblings with the same
 * range (glibc's asm aliases: __finitel, finitel, __GI___finitel) the
 * index names the last, as it always did. */
static bool libdw_path(Dwarf_Die *die, Dwarf_Addr addr, uint64_t *offs, bool *inl, size_t *n,
		       size_t max, int depth)
{
	Dwarf_Die child, hit;
	bool found = false;

	if (depth > 200 || *n >= max || dwarf_child(die, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			if (dwarf_haspc(&child, addr) == 1) {
				hit = child;
				found = true;
			}
		} else if (!found && dwarf_haschildren(&child) &&
			   libdw_path(&child, addr, offs, inl, n, max, depth + 1)) {
			return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	if (!found)
		return false;
	offs[*n] = dwarf_dieoffset(&hit);
	inl[(*n)++] = dwarf_tag(&hit) == DW_TAG_inlined_subroutine;
	libdw_path(&hit, addr, offs, inl, n, max, depth + 1);
	return true;
}

/* What kp_dwidx_chain should give: innermost first, to the first function. */
static size_t libdw_chain(Dwarf *dw, Dwarf_Addr addr, uint64_t *offs, bool *inl, size_t max)
{
	uint64_t po[64];
	bool pi[64];
	Dwarf_Die cudie;
	size_t np = 0, n = 0;

	if (!dwarf_addrdie(dw, addr, &cudie))
		return 0;
	libdw_path(&cudie, addr, po, pi, &np, 64, 0);
	while (np > 0 && n < max) {
		np--;
		offs[n] = po[np];
		inl[n++] = pi[np];
		if (!pi[np])
			break;
	}
	return n;
}

static double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Compares everything on one file. max_chain bounds the chain checks
 * (dwarf_getscopes is slow on large files). */
static void compare_file(const char *path, size_t max_chain)
{
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct kp_dwraw *r = NULL;
	struct seenv a = {0}, b = {0};
	struct addrs ad = {0};
	Dwarf_Off off = 0, next;
	size_t hsize, units = 0, units_bad = 0, mismatch = 0, chain_bad = 0, nchains = 0;
	size_t aranges_bad = 0, names_bad = 0, nnames = 0;
	double t_libdw = 0, t_raw = 0;
	uint16_t version;
	uint8_t unit_type;
	int rc;

	if (!dw) {
		fprintf(stderr, "%s: no DWARF\n", path);
		CHECK(dw != NULL);
		if (fd >= 0)
			close(fd);
		return;
	}
	CHECK_EQ_INT(kp_dwraw_open(dwarf_getelf(dw), &r), 0);
	if (!r)
		goto out;
	nskip_bad = 0;
	while (dwarf_next_unit(dw, off, &next, &hsize, &version, NULL, NULL, NULL, NULL, NULL) ==
	       0) {
		Dwarf_Die cudie;
		struct kp_dwraw_unit u;
		struct kp_dwraw_die d;
		uint64_t end;
		double t0;

		if (!dwarf_offdie(dw, off + hsize, &cudie)) {
			off = next;
			continue;
		}
		unit_type = 0;
		dwarf_cu_info(cudie.cu, NULL, &unit_type, NULL, NULL, NULL, NULL, NULL);
		a.n = b.n = 0;
		t0 = cpu_ms();
		walk_libdw(&cudie, &a, 0);
		t_libdw += cpu_ms() - t0;
		t0 = cpu_ms();
		rc = kp_dwraw_unit(r, off, &u);
		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type) {
			CHECK_EQ_INT(rc, -ENOENT);
			off = next;
			continue;
		}
		units++;
		if (rc != 0 || u.die_off != off + hsize || u.end != next) {
			units_bad++;
			off = next;
			continue;
		}
		if (kp_dwraw_die(&u, u.die_off, &d) == 1 && d.children)
			rc = walk_raw(&u, d.next, &b, 1, &end);
		t_raw += cpu_ms() - t0;
		if (rc != 0 || a.n != b.n || memcmp(a.v, b.v, a.n * sizeof(*a.v)) != 0) {
			if (mismatch++ < 3) {
				size_t i = 0;

				while (i < a.n && i < b.n &&
				       memcmp(&a.v[i], &b.v[i], sizeof(a.v[i])) == 0)
					i++;
				fprintf(stderr,
					"%s: unit at %#lx: rc %d, %zu DIEs by libdw, %zu raw, "
					"first "
					"difference at #%zu (libdw %#lx tag %#x ranges %d, raw "
					"%#lx "
					"tag %#x ranges %d)\n",
					path, (unsigned long)off, rc, a.n, b.n, i,
					i < a.n ? (unsigned long)a.v[i].off : 0UL,
					i < a.n ? a.v[i].tag : 0, i < a.n ? a.v[i].nranges : 0,
					i < b.n ? (unsigned long)b.v[i].off : 0UL,
					i < b.n ? b.v[i].tag : 0, i < b.n ? b.v[i].nranges : 0);
			}
		}
		/* addresses for the chain check */
		for (size_t i = 0; i < b.n && ad.n < 3 * max_chain; i++) {
			struct kp_dwraw_die f;

			if (is_code(b.v[i].tag) && kp_dwraw_die(&u, b.v[i].off, &f) == 1)
				kp_dwraw_ranges(&u, &f, collect_addr, &ad);
		}
		off = next;
	}
	CHECK(units > 0);
	CHECK_EQ_INT(units_bad, 0);
	CHECK_EQ_INT(mismatch, 0);
	CHECK_EQ_INT(nskip_bad, 0);
	/* the index gives libdw's chains */
	{
		struct kp_dwidx *x = kp_dwidx_new();

		for (size_t i = 0; i < ad.n; i += 1 + ad.n / (max_chain ? max_chain : 1)) {
			uint64_t offs[64];
			bool inl[64];
			size_t n = libdw_chain(dw, ad.v[i], offs, inl, 64), m;
			struct kp_dwscope **chain;

			m = kp_dwidx_chain(x, dw, ad.v[i], &chain);
			nchains++;
			/* the unit from .debug_aranges, as libdw finds it */
			{
				Dwarf_Die cudie;
				uint64_t uo = 0;
				bool lib = dwarf_addrdie(dw, ad.v[i], &cudie) != NULL;
				bool raw = kp_dwraw_unit_at(r, ad.v[i], &uo) == 0;

				if (lib != raw ||
				    (lib && uo != dwarf_dieoffset(&cudie) - dwarf_cuoffset(&cudie)))
					aranges_bad++;
			}
			/* names: the raw reader's and libdw's */
			for (size_t k = 0; k < m; k++) {
				const char *rn = kp_dwscope_name(chain[k], false);
				char *ln = kp_dwscope_name_libdw(chain[k], false);

				nnames++;
				if ((rn == NULL) != (ln == NULL) || (rn && strcmp(rn, ln) != 0)) {
					if (names_bad++ < 3)
						fprintf(stderr,
							"%s: DIE %#lx named \"%s\", libdw \"%s\"\n",
							path, (unsigned long)chain[k]->off,
							rn ? rn : "(null)", ln ? ln : "(null)");
				}
				free(ln);
			}
			bool same = n == m;

			for (size_t k = 0; same && k < n; k++)
				same = chain[k]->off == offs[k] && chain[k]->inlined == inl[k];
			if (!same && chain_bad++ < 3)
				fprintf(stderr,
					"%s: chain of %#lx: libdw %zu scopes (innermost %#lx), "
					"index "
					"%zu (innermost %#lx)\n",
					path, (unsigned long)ad.v[i], n,
					n ? (unsigned long)offs[0] : 0UL, m,
					m ? (unsigned long)chain[0]->off : 0UL);
		}
		kp_dwidx_free(x);
	}
	CHECK(nchains > 0);
	CHECK_EQ_INT(chain_bad, 0);
	CHECK_EQ_INT(aranges_bad, 0);
	CHECK_EQ_INT(names_bad, 0);
	printf("%s: %zu units, %zu DIEs in the last, whole-tree walk libdw %.1f ms, raw %.1f "
	       "ms; %zu chains, %zu names checked\n",
	       path, units, b.n, t_libdw, t_raw, nchains, nnames);
out:
	kp_dwraw_free(r);
	free(a.v);
	free(b.v);
	free(ad.v);
	dwarf_end(dw);
	close(fd);
}

static void test_compilers(void)
{
	static const struct {
		const char *cc, *flags, *name;
	} v[] = {
		{"gcc", "-gdwarf-2 -O2", "gcc-dwarf2"},
		{"gcc", "-gdwarf-4 -O2", "gcc-dwarf4"},
		{"gcc", "-gdwarf-5 -O2", "gcc-dwarf5"},
		{"gcc", "-gdwarf-5 -gdwarf64 -O2", "gcc-dwarf5-64"},
		{"gcc", "-gdwarf-4 -O0", "gcc-dwarf4-O0"},
		{"clang", "-gdwarf-5 -O2", "clang-dwarf5"},
		{"clang", "-gdwarf-4 -O2", "clang-dwarf4"},
		{"g++", "-gdwarf-5 -O2", "gxx-dwarf5"},
		{"clang++", "-gdwarf-5 -O2", "clangxx-dwarf5"},
	};

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		char out[PATH_MAX];
		bool cxx = v[i].cc[strlen(v[i].cc) - 1] == '+';

		if (kp_test_sh("command -v %s >/dev/null", v[i].cc) != 0) {
			printf("skipped %s: no %s\n", v[i].name, v[i].cc);
			continue;
		}
		snprintf(out, sizeof(out), "%s/%s", tmp, v[i].name);
		if (kp_test_sh("%s %s -DKP_VARIANT=1 -I%s -o %s %s/%s", v[i].cc, v[i].flags, src,
			       out, src, cxx ? "cxx.cpp" : "inline.c") != 0) {
			printf("skipped %s: does not build\n", v[i].name);
			continue;
		}
		compare_file(out, 2000);
	}
}

/* The built workloads (next to this test's directory) and this program. */
static void test_workloads(void)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0) {
		CHECK(n > 0);
		return;
	}
	self[n] = '\0';
	compare_file(self, 3000);
	snprintf(path, sizeof(path), "%s/workloads/inline_nofp", dirname(self));
	if (access(path, R_OK) == 0)
		compare_file(path, 2000);
	else
		printf("skipped %s: not built\n", path);
}

static void test_libc_debuginfo(void)
{
	char path[PATH_MAX];

	if (kp_test_sh("f=$(readelf -n $(ldd /bin/sh | awk '/libc.so/ {print $3}') | "
		       "awk '/Build ID/ {print $3}'); "
		       "test -n \"$f\" && p=/usr/lib/debug/.build-id/$(echo $f | cut -c1-2)/"
		       "$(echo $f | cut -c3-).debug && test -r $p && echo $p > %s/libcdbg",
		       tmp) != 0) {
		printf("skipped libc: no debuginfo in /usr/lib/debug/.build-id (libc6-dbg)\n");
		return;
	}
	snprintf(path, sizeof(path), "%s/libcdbg", tmp);
	{
		FILE *f = fopen(path, "r");

		if (!f || !fgets(path, sizeof(path), f)) {
			CHECK(false);
			if (f)
				fclose(f);
			return;
		}
		fclose(f);
		path[strcspn(path, "\n")] = '\0';
	}
	compare_file(path, 3000);
}

/* --- hostile bytes --- */

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n <= sizeof(b->b)) {
		memcpy(b->b + b->n, p, n);
		b->n += n;
	}
}

static void put8(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

static void put16(struct buf *b, uint16_t v)
{
	put(b, &v, 2);
}

static void put32(struct buf *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void uleb(struct buf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;

		v >>= 7;
		put8(b, c | (v ? 0x80 : 0));
	} while (v);
}

/* Walks every unit of info/abbrev as kp_dwidx would, plus every DIE: the
 * result does not matter, only that it ends without a fault. Returns the
 * number of DIEs read. */
static size_t walk_all(const struct buf *info, const struct buf *abbrev, const struct buf *rng)
{
	struct kp_dwraw_secs s = {
		.info = {info->b, info->n},
		.abbrev = {abbrev->b, abbrev->n},
		.ranges = {rng ? rng->b : NULL, rng ? rng->n : 0},
		.rnglists = {rng ? rng->b : NULL, rng ? rng->n : 0},
		.addr = {rng ? rng->b : NULL, rng ? rng->n : 0},
	};
	struct kp_dwraw *r = kp_dwraw_new(&s);
	uint64_t off = 0;
	size_t dies = 0;

	for (int units = 0; units < 100; units++) {
		struct kp_dwraw_unit u;
		int rc = kp_dwraw_unit(r, off, &u);
		uint64_t pos;

		if (rc == 0) {
			struct seenv sv = {0};
			uint64_t end;

			pos = u.die_off;
			/* flat: every entry in order */
			for (int i = 0; i < 10000; i++) {
				struct kp_dwraw_die d;
				struct rctx rr = {0, 0};

				rc = kp_dwraw_die(&u, pos, &d);
				if (rc < 0 || d.next <= pos)
					break;
				dies += rc == 1;
				kp_dwraw_ranges(&u, &d, on_range, &rr);
				pos = d.next;
			}
			/* nested, with skips */
			walk_raw(&u, u.die_off, &sv, 0, &end);
			/* scans stopping at functions and blocks, every stop read
			 * through: ends since every step moves forward */
			pos = u.die_off;
			for (int i = 0; i < 10000; i++) {
				struct kp_dwraw_die d;
				/* odd rounds stop at functions; even ones mostly
				 * pass over everything, siblings included */
				uint64_t stop = i % 2 ? (1ull << DW_TAG_subprogram) |
								(1ull << DW_TAG_lexical_block)
						      : 1ull << (i % 64);

				rc = kp_dwraw_scan(&u, pos, stop, &d);
				if (rc < 0 || d.next <= pos)
					break;
				pos = d.next;
			}
			free(sv.v);
		}
		if (!u.end || u.end <= off)
			break;
		off = u.end;
	}
	kp_dwraw_free(r);
	return dies;
}

/* A DWARF 4 unit header (32-bit) for a unit of body_len bytes. */
static void header4(struct buf *b, uint32_t body_len)
{
	put32(b, body_len + 7);
	put16(b, 4);
	put32(b, 0); /* abbrev offset */
	put8(b, 8);
}

/* Abbrev 1: compile_unit with children, low_pc addr, high_pc data4,
 * language data1; 2: subprogram with children, low_pc, high_pc data4,
 * sibling ref4; 3: lexical block, no children, one attribute of form F
 * (set by the caller at byte abbrev_form_at). */
static size_t std_abbrev(struct buf *a, uint64_t form3)
{
	size_t at;

	uleb(a, 1), uleb(a, DW_TAG_compile_unit), put8(a, 1);
	uleb(a, DW_AT_low_pc), uleb(a, DW_FORM_addr);
	uleb(a, DW_AT_high_pc), uleb(a, DW_FORM_data4);
	uleb(a, DW_AT_language), uleb(a, DW_FORM_data1);
	uleb(a, 0), uleb(a, 0);
	uleb(a, 2), uleb(a, DW_TAG_subprogram), put8(a, 1);
	uleb(a, DW_AT_low_pc), uleb(a, DW_FORM_addr);
	uleb(a, DW_AT_high_pc), uleb(a, DW_FORM_data4);
	uleb(a, DW_AT_sibling), uleb(a, DW_FORM_ref4);
	uleb(a, 0), uleb(a, 0);
	uleb(a, 3), uleb(a, DW_TAG_lexical_block), put8(a, 0);
	at = a->n;
	uleb(a, DW_AT_name), uleb(a, form3);
	uleb(a, 0), uleb(a, 0);
	uleb(a, 0);
	return at;
}

/* A sane unit: CU { subprogram (sibling -> end) { block } } */
static void std_unit(struct buf *info, uint32_t sibling, const void *block_val, size_t nval)
{
	struct buf body = {.n = 0};

	uleb(&body, 1), put64(&body, 0x1000), put32(&body, 0x100), put8(&body, DW_LANG_C99);
	uleb(&body, 2), put64(&body, 0x1000), put32(&body, 0x10), put32(&body, sibling);
	uleb(&body, 3), put(&body, block_val, nval);
	put8(&body, 0); /* end of subprogram's children */
	put8(&body, 0); /* end of CU's children */
	header4(info, (uint32_t)body.n);
	put(info, body.b, body.n);
}

static void test_hostile(void)
{
	struct buf info = {.n = 0}, abbrev = {.n = 0};
	uint8_t strval[] = {'f', 0};
	size_t dies;

	/* sane first: the reader reads it all, the sibling is used */
	std_abbrev(&abbrev, DW_FORM_string);
	std_unit(&info, 46, strval, 2); /* the CU's closing null entry */
	dies = walk_all(&info, &abbrev, NULL);
	CHECK_EQ_INT(dies, 3);
	{
		struct kp_dwraw_secs s = {.info = {info.b, info.n}, .abbrev = {abbrev.b, abbrev.n}};
		struct kp_dwraw *r = kp_dwraw_new(&s);
		struct kp_dwraw_unit u;
		struct kp_dwraw_die d;
		struct rctx rr = {0, 0};
		uint64_t after = 0;

		CHECK_EQ_INT(kp_dwraw_unit(r, 0, &u), 0);
		CHECK_EQ_INT(u.lang, DW_LANG_C99);
		CHECK_EQ_INT(u.base, 0x1000);
		CHECK_EQ_INT(kp_dwraw_die(&u, u.die_off, &d), 1);
		CHECK_EQ_INT(kp_dwraw_die(&u, d.next, &d), 1);
		CHECK_EQ_INT(d.tag, DW_TAG_subprogram);
		CHECK_EQ_INT(kp_dwraw_ranges(&u, &d, on_range, &rr), 1);
		CHECK_EQ_INT(kp_dwraw_skip(&u, &d, &after), 0);
		CHECK_EQ_INT(after, info.n - 1);
		kp_dwraw_free(r);
	}

	/* truncated unit: every prefix of the sane bytes */
	for (size_t n = 0; n < info.n; n++) {
		struct buf cut = info;

		cut.n = n;
		walk_all(&cut, &abbrev, NULL);
	}
	/* unit length beyond the section, and reserved lengths */
	{
		struct buf b = info;

		memcpy(b.b, &(uint32_t){0x7fffffff}, 4);
		CHECK_EQ_INT(walk_all(&b, &abbrev, NULL), 0);
		memcpy(b.b, &(uint32_t){0xfffffff5}, 4);
		CHECK_EQ_INT(walk_all(&b, &abbrev, NULL), 0);
		memcpy(b.b, &(uint32_t){0xffffffff}, 4); /* 64-bit: then a garbage length */
		walk_all(&b, &abbrev, NULL);
	}
	/* abbreviation code unknown; abbrev offset outside the section */
	{
		struct buf b = info;

		b.b[11] = 9;
		CHECK_EQ_INT(walk_all(&b, &abbrev, NULL), 0);
		b = info;
		memcpy(b.b + 6, &(uint32_t){0x100000}, 4);
		CHECK_EQ_INT(walk_all(&b, &abbrev, NULL), 0);
	}
	/* every form code, known or not, for the block's attribute */
	for (uint64_t form = 0; form < 0x30; form++) {
		struct buf a = {.n = 0};

		std_abbrev(&a, form);
		walk_all(&info, &a, NULL);
	}
	{
		uint64_t forms[] = {DW_FORM_GNU_addr_index,
				    DW_FORM_GNU_str_index,
				    DW_FORM_GNU_ref_alt,
				    DW_FORM_GNU_strp_alt,
				    0x7fff,
				    UINT32_MAX,
				    (uint64_t)1 << 40};

		for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
			struct buf a = {.n = 0};

			std_abbrev(&a, forms[i]);
			walk_all(&info, &a, NULL);
		}
	}
	/* DW_FORM_indirect chains: indirect -> indirect -> ... in the DIE */
	{
		struct buf a = {.n = 0}, b = {.n = 0}, body = {.n = 0};

		std_abbrev(&a, DW_FORM_indirect);
		uleb(&body, 1), put64(&body, 0x1000), put32(&body, 0x100), put8(&body, 1);
		uleb(&body, 3);
		for (int i = 0; i < 100; i++)
			uleb(&body, DW_FORM_indirect);
		uleb(&body, DW_FORM_data1), put8(&body, 0);
		put8(&body, 0);
		header4(&b, (uint32_t)body.n);
		put(&b, body.b, body.n);
		CHECK_EQ_INT(walk_all(&b, &a, NULL), 1); /* the CU DIE only */
		/* indirect to implicit_const: its value is in the abbreviation */
		b.n = 0, body.n = 0;
		uleb(&body, 1), put64(&body, 0x1000), put32(&body, 0x100), put8(&body, 1);
		uleb(&body, 3), uleb(&body, DW_FORM_implicit_const);
		put8(&body, 0);
		header4(&b, (uint32_t)body.n);
		put(&b, body.b, body.n);
		CHECK_EQ_INT(walk_all(&b, &a, NULL), 1);
	}
	/* siblings backwards, onto themselves, outside the unit, at 0 */
	{
		uint32_t sibs[] = {0, 11, 12, 24, 0x7fffffff, 0xffffffff};

		for (size_t i = 0; i < sizeof(sibs) / sizeof(sibs[0]); i++) {
			struct buf b = {.n = 0};

			std_unit(&b, sibs[i], strval, 2);
			CHECK_EQ_INT(walk_all(&b, &abbrev, NULL), 3);
		}
	}
	/* huge ULEB128s: codes, forms, block lengths */
	{
		struct buf a = {.n = 0}, b = {.n = 0}, body = {.n = 0};

		std_abbrev(&a, DW_FORM_block);
		uleb(&body, 1), put64(&body, 0x1000), put32(&body, 0x100), put8(&body, 1);
		uleb(&body, 3);
		for (int i = 0; i < 40; i++)
			put8(&body, 0xff);
		put8(&body, 0x7f);
		put8(&body, 0);
		header4(&b, (uint32_t)body.n);
		put(&b, body.b, body.n);
		CHECK_EQ_INT(walk_all(&b, &a, NULL), 1);
		/* a huge abbreviation code */
		b.n = 0, body.n = 0;
		for (int i = 0; i < 20; i++)
			put8(&body, 0x80);
		put8(&body, 0x01);
		header4(&b, (uint32_t)body.n);
		put(&b, body.b, body.n);
		CHECK_EQ_INT(walk_all(&b, &a, NULL), 0);
		/* an abbreviation table of ULEBs that never end */
		a.n = 0;
		for (int i = 0; i < 200; i++)
			put8(&a, 0x80);
		CHECK_EQ_INT(walk_all(&info, &a, NULL), 0);
	}
	/* sparse abbreviation codes beyond the dense table */
	{
		struct buf a = {.n = 0}, b = {.n = 0}, body = {.n = 0};

		uleb(&a, 1000000), uleb(&a, DW_TAG_compile_unit), put8(&a, 1);
		uleb(&a, DW_AT_language), uleb(&a, DW_FORM_implicit_const), put8(&a, 0x0c);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 5000), uleb(&a, DW_TAG_subprogram), put8(&a, 0);
		uleb(&a, DW_AT_low_pc), uleb(&a, DW_FORM_addr);
		uleb(&a, DW_AT_high_pc), uleb(&a, DW_FORM_udata);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 0);
		uleb(&body, 1000000);
		uleb(&body, 5000), put64(&body, 0x2000), uleb(&body, 0x20);
		put8(&body, 0);
		put32(&b, (uint32_t)body.n + 8), put16(&b, 5), put8(&b, DW_UT_compile);
		put8(&b, 8), put32(&b, 0);
		put(&b, body.b, body.n);
		CHECK_EQ_INT(walk_all(&b, &a, NULL), 2);
		{
			struct kp_dwraw_secs s = {.info = {b.b, b.n}, .abbrev = {a.b, a.n}};
			struct kp_dwraw *r = kp_dwraw_new(&s);
			struct kp_dwraw_unit u;

			CHECK_EQ_INT(kp_dwraw_unit(r, 0, &u), 0);
			CHECK_EQ_INT(u.lang, DW_LANG_C99);
			kp_dwraw_free(r);
		}
	}
	/* range lists: garbage, unknown entry kinds, lists that run off */
	{
		struct buf a = {.n = 0}, b = {.n = 0}, body = {.n = 0}, rng = {.n = 0};

		uleb(&a, 1), uleb(&a, DW_TAG_compile_unit), put8(&a, 1);
		uleb(&a, DW_AT_addr_base), uleb(&a, DW_FORM_sec_offset);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 2), uleb(&a, DW_TAG_subprogram), put8(&a, 0);
		uleb(&a, DW_AT_ranges), uleb(&a, DW_FORM_sec_offset);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 3), uleb(&a, DW_TAG_subprogram), put8(&a, 0);
		uleb(&a, DW_AT_ranges), uleb(&a, DW_FORM_rnglistx);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 0);
		uleb(&body, 1), put32(&body, 0);
		for (uint32_t o = 0; o < 64; o += 3)
			uleb(&body, 2), put32(&body, o);
		for (uint32_t o = 0; o < 64; o += 5)
			uleb(&body, 3), uleb(&body, o);
		uleb(&body, 3), uleb(&body, UINT64_MAX);
		put8(&body, 0);
		put32(&b, (uint32_t)body.n + 8), put16(&b, 5), put8(&b, DW_UT_compile);
		put8(&b, 8), put32(&b, 0);
		put(&b, body.b, body.n);
		for (int i = 0; i < 8; i++) {
			/* each kind with short or absent operands */
			rng.n = 0;
			for (uint8_t k = 0; k < 12; k++) {
				put8(&rng, (uint8_t)((k + i) % 9));
				for (int j = 0; j < i; j++)
					put8(&rng, 0xff);
			}
			walk_all(&b, &a, &rng);
		}
	}
	/* random damage to the sane unit, its abbreviations and a range list
	 * (a fixed seed: a failure reproduces) */
	{
		struct buf rng = {.n = 0};
		uint64_t seed = 0x9e3779b97f4a7c15ull;

		for (int i = 0; i < 64; i++)
			put8(&rng, (uint8_t)(i * 37));
		for (int i = 0; i < 20000; i++) {
			struct buf b = info, a = abbrev, rg = rng;
			struct buf *t = i % 3 == 0 ? &a : i % 3 == 1 ? &b : &rg;

			for (int k = 0; k < 1 + i % 4; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				t->b[(seed >> 33) % t->n] = (uint8_t)(seed >> 20);
			}
			walk_all(&b, &a, &rg);
		}
	}
	/* deep nesting: kp_dwidx stops at its limit, the reader just goes on */
	{
		struct buf a = {.n = 0}, b = {.n = 0}, body = {.n = 0};

		uleb(&a, 1), uleb(&a, DW_TAG_compile_unit), put8(&a, 1);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 2), uleb(&a, DW_TAG_lexical_block), put8(&a, 1);
		uleb(&a, 0), uleb(&a, 0);
		uleb(&a, 0);
		uleb(&body, 1);
		for (int i = 0; i < 1500; i++)
			uleb(&body, 2);
		header4(&b, (uint32_t)body.n); /* no null entries at all */
		put(&b, body.b, body.n);
		CHECK(walk_all(&b, &a, NULL) >= 1);
	}
}

static void setup(void)
{
	const char *fx = getenv("KP_FIXTURES");

	alarm(600);
	snprintf(src, sizeof(src), "%s/sym", fx ? fx : "tests/fixtures");
	snprintf(tmp, sizeof(tmp), "/tmp/kp-dwraw-XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void cleanup(void)
{
	kp_test_sh("rm -rf %s", tmp);
}

KP_TEST_MAIN(setup, test_hostile, test_compilers, test_workloads, test_libc_debuginfo, cleanup)
