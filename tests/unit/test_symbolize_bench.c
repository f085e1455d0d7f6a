/* Symbolizer speed and agreement with binutils.
 *
 * By default (ctest): builds the inline fixture and checks that, for every
 * instruction address inside its functions, kprof's frames (function, then
 * inlined callees) are exactly what `addr2line -f -i` prints.
 *
 * With KP_BENCH=1 (scripts/bench-symbolize): times the symbolization of N
 * distinct addresses (KP_BENCH_N, default 5000) spread over the functions
 * of KP_BENCH_BIN (default: libc.so.6 when its debuginfo is installed,
 * else this executable), with inline frames, against `addr2line -f -i -e
 * BIN` and `eu-addr2line -f -i -e BIN` given the same addresses. */
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/symbolize.h"

static char tmp[64];

struct fn {
	uint64_t vaddr, size;
};

struct seg {
	uint64_t vaddr, off, filesz;
};

/* Function symbols (symtab of path, else of its debug file dbg) and the
 * PT_LOAD segments of path. Returns the number of functions. */
static size_t read_elf(const char *path, const char *dbg, struct fn **fns, struct seg *segs,
		       size_t *nsegs)
{
	size_t n = 0, cap = 0, phnum;
	const char *files[2] = {path, dbg};

	*fns = NULL;
	*nsegs = 0;
	elf_version(EV_CURRENT);
	for (int f = 0; f < 2 && files[f]; f++) {
		int fd = open(files[f], O_RDONLY);
		Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
		Elf_Scn *scn = NULL;

		/* .symtab, else .dynsym (a stripped library) */
		for (int pass = 0; elf && !n && pass < (f == 0 && dbg ? 1 : 2); pass++, scn = NULL)
			while (!n && (scn = elf_nextscn(elf, scn))) {
				GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
				Elf_Data *data;

				if (!sh || sh->sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
				    !(data = elf_getdata(scn, NULL)))
					continue;
				for (size_t i = 0; i < sh->sh_size / sh->sh_entsize; i++) {
					GElf_Sym s;

					if (!gelf_getsym(data, (int)i, &s) ||
					    GELF_ST_TYPE(s.st_info) != STT_FUNC || s.st_size < 4 ||
					    s.st_shndx == SHN_UNDEF)
						continue;
					if (n == cap) {
						cap = cap ? 2 * cap : 1024;
						*fns = realloc(*fns, cap * sizeof(**fns));
					}
					(*fns)[n++] = (struct fn){s.st_value, s.st_size};
				}
			}
		if (elf && f == 0 && elf_getphdrnum(elf, &phnum) == 0) {
			for (size_t i = 0; i < phnum && *nsegs < 16; i++) {
				GElf_Phdr ph;

				if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
					segs[(*nsegs)++] =
						(struct seg){ph.p_vaddr, ph.p_offset, ph.p_filesz};
			}
		}
		if (elf)
			elf_end(elf);
		if (fd >= 0)
			close(fd);
	}
	return n;
}

static bool to_off(const struct seg *segs, size_t nsegs, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < nsegs; i++) {
		if (vaddr >= segs[i].vaddr && vaddr - segs[i].vaddr < segs[i].filesz) {
			*off = vaddr - segs[i].vaddr + segs[i].off;
			return true;
		}
	}
	return false;
}

/* Our chain for one address as addr2line prints it: innermost first,
 * one name per line. */
static void our_chain(struct kp_symbolizer *sym, uint32_t obj, uint64_t off, char *buf, size_t size)
{
	static struct kp_sym_frames f;
	struct kp_loc loc = {.addr = off, .obj = obj, .kind = KP_LOC_USER};
	size_t len = 0;

	kp_sym_resolve(sym, &loc, &f);
	buf[0] = '\0';
	for (size_t i = f.n; i-- > 0 && len < size;)
		len += (size_t)snprintf(buf + len, size - len, "%s\n", f.frames[i].name);
}

/* Compares kprof's chain with addr2line's output (file out, for the
 * addresses list) at every address; counts the equal ones and those with
 * inline frames. */
static void compare_with_addr2line(const struct kp_sym_options *opts, const char *bin,
				   const struct seg *segs, size_t nsegs, const uint64_t *list,
				   const char *out, size_t *nsame, size_t *ninline,
				   struct kp_sym_stats *st)
{
	char line[1024], expect[4096], got[4096];
	struct kp_sym_mapping m = {.path = bin};
	struct kp_symbolizer *sym = kp_sym_new(opts);
	uint32_t obj = kp_sym_object_get(sym, &m);
	FILE *fp = fopen(out, "r");

	*nsame = *ninline = 0;
	expect[0] = '\0';
	for (size_t i = 0; fp;) {
		bool eof = !fgets(line, sizeof(line), fp);

		if (eof || strncmp(line, "0x", 2) == 0) {
			if (i > 0) {
				uint64_t off = 0;

				to_off(segs, nsegs, list[i - 1], &off);
				our_chain(sym, obj, off, got, sizeof(got));
				if (strcmp(got, expect) == 0)
					(*nsame)++;
				else if (i - *nsame <= 10)
					fprintf(stderr, "at %#llx:\n  addr2line: %s  kprof: %s\n",
						(unsigned long long)list[i - 1], expect, got);
				if (strchr(expect, '\n') != strrchr(expect, '\n'))
					(*ninline)++;
			}
			if (eof)
				break;
			expect[0] = '\0';
			i++;
			continue;
		}
		/* function names are every other line: name, file:line */
		if (strncmp(line, "??:", 3) == 0 || (line[0] == '/' && strchr(line, ':')))
			continue;
		strncat(expect, line, sizeof(expect) - strlen(expect) - 1);
	}
	if (fp)
		fclose(fp);
	kp_sym_stats(sym, st);
	kp_sym_free(sym);
}

/* Every instruction-ish address in the fixture's functions: kprof's chain
 * equals addr2line's, without the cache, with it on the build's first run
 * (DWARF read lazily), its second (the build indexed) and a later one
 * (from the saved index). */
static void test_agreement(void)
{
	static const char *const modes[] = {"no cache", "first run of the build",
					    "second run (indexing it)", "later runs (its index)"};
	char bin[256], addrs[256], out[256], cache[256];
	struct fn *fns;
	struct seg segs[16];
	size_t nfns, nsegs, naddr = 0, ninline = 0, nsame = 0;
	uint64_t *list = NULL;
	FILE *fp;

	snprintf(bin, sizeof(bin), "%s/inl", tmp);
	snprintf(addrs, sizeof(addrs), "%s/addrs", tmp);
	snprintf(out, sizeof(out), "%s/a2l", tmp);
	snprintf(cache, sizeof(cache), "%s/agree-cache", tmp);
	if (kp_test_sh("command -v addr2line >/dev/null") != 0) {
		printf("skip test_agreement: no addr2line\n");
		return;
	}
	if (kp_test_sh("cc -g -O2 -DKP_VARIANT=1 -I%s/sym -o %s %s/sym/inline.c",
		       getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures", bin,
		       getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures") != 0) {
		CHECK(!"fixture built");
		return;
	}
	nfns = read_elf(bin, NULL, &fns, segs, &nsegs);
	fp = fopen(addrs, "w");
	for (size_t i = 0; fp && i < nfns; i++) {
		for (uint64_t a = fns[i].vaddr; a < fns[i].vaddr + fns[i].size; a++) {
			fprintf(fp, "%llx\n", (unsigned long long)a);
			list = realloc(list, (naddr + 1) * sizeof(*list));
			list[naddr++] = a;
		}
	}
	if (fp)
		fclose(fp);
	CHECK(naddr > 100);
	CHECK_EQ_INT(kp_test_sh("addr2line -a -f -i -e %s < %s > %s", bin, addrs, out), 0);
	for (int mode = 0; mode < 4; mode++) {
		struct kp_sym_options opts = {.cache_dir = mode ? cache : NULL};
		struct kp_sym_stats st;

		compare_with_addr2line(&opts, bin, segs, nsegs, list, out, &nsame, &ninline, &st);
		printf("agreement with addr2line, %s: %zu of %zu addresses (%zu with inline "
		       "frames)\n",
		       modes[mode], nsame, naddr, ninline);
		CHECK_EQ_INT(nsame, naddr);
		CHECK(ninline > 10);
		CHECK_EQ_INT(st.indexes_saved, mode == 2);
		CHECK_EQ_INT(st.indexes_loaded, mode == 3);
	}
	free(list);
	free(fns);
}

/* All frames of one location as "name/kind;...". */
static void frames_text(struct kp_symbolizer *sym, uint32_t obj, uint64_t off, char *buf,
			size_t size)
{
	static struct kp_sym_frames f;
	struct kp_loc loc = {.addr = off, .obj = obj, .kind = KP_LOC_USER};
	size_t len = 0;

	kp_sym_resolve(sym, &loc, &f);
	buf[0] = '\0';
	for (size_t i = 0; i < f.n && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s/%d;", f.frames[i].name,
					(int)f.frames[i].kind);
}

/* The saved index names every address of bin as reading its DWARF does:
 * up to 48 addresses in each function, with and without --full-names. */
static void check_index_equivalence(const char *bin, const char *dbg)
{
	struct fn *fns;
	struct seg segs[16];
	size_t nfns, nsegs, naddr = 0, nsame = 0, nframes = 0;
	char cache[256], a[8192], b[8192];

	nfns = read_elf(bin, dbg, &fns, segs, &nsegs);
	snprintf(cache, sizeof(cache), "%s/equiv-cache", tmp);
	kp_test_sh("rm -rf %s", cache);
	/* the build's first run marks it, the second indexes it */
	for (int run = 0; run < 2 && nfns; run++) {
		struct kp_sym_options opts = {.cache_dir = cache};
		struct kp_sym_mapping m = {.path = bin};
		struct kp_symbolizer *sym = kp_sym_new(&opts);
		uint32_t obj = kp_sym_object_get(sym, &m);
		struct kp_sym_stats st;
		uint64_t off;

		for (size_t i = 0; i < nfns; i++)
			if (to_off(segs, nsegs, fns[i].vaddr, &off))
				frames_text(sym, obj, off, a, sizeof(a));
		kp_sym_stats(sym, &st);
		CHECK_EQ_INT(st.indexes_saved, run == 1);
		kp_sym_free(sym);
	}
	for (int full = 0; full < 2; full++) {
		struct kp_sym_options lazy_opts = {.full_names = full};
		struct kp_sym_options idx_opts = {.full_names = full, .cache_dir = cache};
		struct kp_sym_mapping m = {.path = bin};
		struct kp_symbolizer *lazy = kp_sym_new(&lazy_opts), *idx = kp_sym_new(&idx_opts);
		uint32_t lobj = kp_sym_object_get(lazy, &m), iobj = kp_sym_object_get(idx, &m);
		struct kp_sym_stats st;

		for (size_t i = 0; i < nfns; i++) {
			uint64_t step = fns[i].size / 48 ? fns[i].size / 48 : 1;

			for (uint64_t v = fns[i].vaddr; v < fns[i].vaddr + fns[i].size; v += step) {
				uint64_t off;

				if (!to_off(segs, nsegs, v, &off))
					continue;
				frames_text(lazy, lobj, off, a, sizeof(a));
				frames_text(idx, iobj, off, b, sizeof(b));
				naddr++;
				nframes += (size_t)(strchr(a, ';') ? 1 : 0);
				if (strcmp(a, b) == 0)
					nsame++;
				else if (naddr - nsame <= 5)
					fprintf(stderr, "%s at %#llx:\n  DWARF: %s\n  index: %s\n",
						bin, (unsigned long long)v, a, b);
			}
		}
		kp_sym_stats(idx, &st);
		CHECK_EQ_INT(st.indexes_loaded, 1);
		kp_sym_free(lazy);
		kp_sym_free(idx);
	}
	printf("index equivalence, %s: %zu of %zu addresses alike\n", bin, nsame, naddr);
	CHECK(naddr > 100);
	CHECK_EQ_INT(nsame, naddr);
	free(fns);
}

/* The index against libdw on binaries of each language with inlining: C
 * (the fixture and this test), C++ and Rust, and libc when libc6-dbg is
 * installed. */
static void test_index_equivalence(void)
{
	const char *fx = getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures";
	char bin[256], self[512], libc[256] = "", dbg[512] = "";
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *p;

	snprintf(bin, sizeof(bin), "%s/inl", tmp);
	if (kp_test_sh("cc -g -O2 -DKP_VARIANT=1 -I%s/sym -o %s %s/sym/inline.c", fx, bin, fx) == 0)
		check_index_equivalence(bin, NULL);
	self[len > 0 ? len : 0] = '\0';
	check_index_equivalence(self, NULL);
	snprintf(bin, sizeof(bin), "%s/cxx", tmp);
	if (kp_test_sh("c++ -g -O2 -o %s %s/../workloads/cxx/names.cpp", bin, fx) == 0)
		check_index_equivalence(bin, NULL);
	else
		CHECK(!"C++ workload built");
	snprintf(bin, sizeof(bin), "%s/rust", tmp);
	if (kp_test_sh("command -v rustc >/dev/null") == 0) {
		if (kp_test_sh("rustc -O -g -o %s %s/../workloads/rust/hot.rs 2>/dev/null", bin,
			       fx) == 0)
			check_index_equivalence(bin, NULL);
		else
			CHECK(!"Rust workload built");
	} else {
		printf("skip the Rust build: no rustc\n");
	}
	p = popen("f=/lib/x86_64-linux-gnu/libc.so.6; id=$(readelf -n $f 2>/dev/null | awk "
		  "'/Build ID/{print $3}'); "
		  "d=/usr/lib/debug/.build-id/${id%${id#??}}/${id#??}.debug; "
		  "[ -n \"$id\" ] && [ -e $d ] && echo \"$f $d\"",
		  "r");
	if (p && fscanf(p, "%255s %511s", libc, dbg) == 2)
		check_index_equivalence(libc, dbg);
	else
		printf("skip libc: no libc6-dbg\n");
	if (p)
		pclose(p);
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_self(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_children(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* Runs a tool over the address file; returns wall seconds, *cpu its CPU. */
static double run_tool(const char *tool, const char *bin, const char *addrs, double *cpu)
{
	double c0 = cpu_children(), t0 = now(), t;

	if (kp_test_sh("%s -f -i -e %s < %s > %s/tool.out", tool, bin, addrs, tmp) != 0)
		return -1;
	t = now() - t0;
	*cpu = cpu_children() - c0;
	return t;
}

static void bench(void)
{
	const char *bin =
		getenv("KP_BENCH_BIN") && *getenv("KP_BENCH_BIN") ? getenv("KP_BENCH_BIN") : NULL;
	const char *nstr = getenv("KP_BENCH_N");
	size_t want = nstr ? (size_t)strtoul(nstr, NULL, 10) : 5000;
	char dbg[512] = "", addrs[256], self[512];
	struct fn *fns;
	struct seg segs[16];
	size_t nfns, nsegs, n = 0, nframes = 0, ninline = 0, nunknown = 0;
	uint64_t *offs, *vaddrs;
	size_t k = 0;
	unsigned long cluster;
	FILE *fp;
	double t0, c0, ours[4], ours_cpu[4], a2l, a2l_cpu, eu, eu_cpu;
	static const char *const mode_names[4] = {
		"kprof --no-cache", "kprof, first run of the build", "kprof, second run (indexing)",
		"kprof, later runs (index)"};
	char cache[128], idx_size[128], frames0[64], frames1[64];
	struct kp_symbolizer *sym;
	struct kp_sym_frames f = {0};
	struct kp_sym_mapping m = {0};
	struct kp_sym_options opts = {.no_inline = getenv("KP_BENCH_NO_INLINE") != NULL};
	uint32_t obj;

	if (!bin) {
		/* libc.so.6 with libc6-dbg: a real stripped library, debuginfo
		 * by build-id, plenty of inlining */
		FILE *p = popen("for f in /lib/x86_64-linux-gnu/libc.so.6 /lib64/libc.so.6; do "
				"[ -e $f ] || continue; id=$(readelf -n $f | awk '/Build ID/{print "
				"$3}'); d=/usr/lib/debug/.build-id/${id%${id#??}}/${id#??}.debug; "
				"[ -e $d ] && echo \"$f $d\" && break; done",
				"r");

		if (p && fscanf(p, "%255s %511s", self, dbg) == 2)
			bin = self;
		if (p)
			pclose(p);
	}
	if (!bin) {
		ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);

		self[len > 0 ? len : 0] = '\0';
		bin = self;
		dbg[0] = '\0';
	}
	nfns = read_elf(bin, dbg[0] ? dbg : NULL, &fns, segs, &nsegs);
	if (!nfns) {
		printf("bench: no function symbols in %s\n", bin);
		return;
	}
	/* N distinct addresses: "spread" visits every function in turn (so
	 * all of the DWARF is read, the worst case), "cluster" puts
	 * KP_BENCH_CLUSTER addresses in each of fewer functions, as a
	 * profile's hot code does */
	cluster = getenv("KP_BENCH_CLUSTER") ? strtoul(getenv("KP_BENCH_CLUSTER"), NULL, 10) : 0;
	vaddrs = calloc(want, sizeof(*vaddrs));
	if (cluster > 1) {
		size_t nf = (want + cluster - 1) / cluster, stride = nfns / nf ? nfns / nf : 1;

		for (size_t i = 0; i < nfns && n < want; i += stride) {
			for (size_t j = 0; j < cluster && n < want; j++)
				vaddrs[n++] = fns[i].vaddr + fns[i].size * j / cluster;
		}
	} else {
		for (size_t round = 0; n < want && round < 64; round++) {
			for (size_t i = round % 7; i < nfns && n < want; i += 7)
				vaddrs[n++] = fns[i].vaddr + (fns[i].size * (round * 37 % 64)) / 64;
		}
	}
	qsort(vaddrs, n, sizeof(*vaddrs), u64_cmp);
	offs = calloc(want, sizeof(*offs));
	snprintf(addrs, sizeof(addrs), "%s/bench-addrs", tmp);
	fp = fopen(addrs, "w");
	for (size_t i = 0; fp && i < n; i++) {
		if ((i && vaddrs[i] == vaddrs[i - 1]) || !to_off(segs, nsegs, vaddrs[i], &offs[k]))
			continue;
		fprintf(fp, "%llx\n", (unsigned long long)vaddrs[i]);
		k++;
	}
	n = k;
	if (fp)
		fclose(fp);
	free(vaddrs);

	/* kprof four ways: no cache (DWARF read lazily, as with --no-cache);
	 * with the cache, the build's first run (the same, leaving a marker),
	 * its second (the build read and indexed whole, the index saved) and
	 * a later one (the saved index read back) */
	snprintf(cache, sizeof(cache), "%s/cache", tmp);
	for (int mode = 0; mode < 4; mode++) {
		const char *only = getenv("KP_BENCH_RUN_MODE");
		char cmd[1024];
		FILE *child;
		int got = 0;

		if (only && atoi(only) != mode)
			continue;
		if (only) {
			/* the child: time this mode in this fresh process */
			opts.cache_dir = mode ? getenv("KP_BENCH_CACHE") : NULL;
			c0 = cpu_self();
			t0 = now();
			sym = kp_sym_new(&opts);
			m.path = bin;
			obj = kp_sym_object_get(sym, &m);
			for (size_t i = 0; i < n; i++) {
				struct kp_loc loc = {
					.addr = offs[i], .obj = obj, .kind = KP_LOC_USER};

				if (!kp_sym_resolve(sym, &loc, &f))
					nunknown++;
				nframes += f.n;
				ninline += f.n - 1;
			}
			kp_sym_free(sym);
			printf("kprof-mode %.6f %.6f %zu %zu %zu\n", now() - t0, cpu_self() - c0,
			       nframes, ninline, nunknown);
			kp_sym_frames_fini(&f);
			free(offs);
			free(fns);
			return;
		}
		/* each mode in a process of its own, as each kprof run is: a
		 * process's first symbolizer pays for page faults and library
		 * set-up that a second one in the same process would not */
		snprintf(cmd, sizeof(cmd), "KP_BENCH_RUN_MODE=%d KP_BENCH_CACHE=%s /proc/%d/exe",
			 mode, cache, (int)getpid());
		child = popen(cmd, "r");
		while (child && fgets(cmd, sizeof(cmd), child)) {
			size_t a, b, c;

			if (sscanf(cmd, "kprof-mode %lf %lf %zu %zu %zu", &ours[mode],
				   &ours_cpu[mode], &a, &b, &c) == 5) {
				got = 1;
				nframes = a;
				ninline = b;
				nunknown = c;
			}
		}
		if (child)
			pclose(child);
		CHECK(got);
		snprintf(mode ? frames1 : frames0, sizeof(frames0), "%zu %zu %zu", nframes, ninline,
			 nunknown);
		CHECK(mode == 0 || strcmp(frames0, frames1) == 0);
	}
	snprintf(idx_size, sizeof(idx_size), "%s/idx-size", tmp);
	kp_test_sh("du -k %s/symbols | awk '{print \"symbol index: \" $1 \" KiB\"}' > %s", cache,
		   idx_size);

	a2l = a2l_cpu = eu = eu_cpu = -1;
	if (!getenv("KP_BENCH_ONLY_KPROF")) {
		a2l = run_tool("addr2line", bin, addrs, &a2l_cpu);
		eu = run_tool("eu-addr2line", bin, addrs, &eu_cpu);
	}
	printf("binary: %s%s%s\n", bin, dbg[0] ? " (debuginfo " : "", dbg[0] ? dbg : "");
	if (dbg[0])
		printf(")\n");
	printf("addresses: %zu distinct (%s), %zu frames (%zu inline), %zu unresolved\n", n,
	       cluster > 1 ? "clustered" : "spread over all functions", nframes, ninline, nunknown);
	printf("%-30s %10s %10s\n", "tool", "wall ms", "cpu ms");
	for (int mode = 0; mode < 4; mode++)
		printf("%-30s %10.1f %10.1f\n", mode_names[mode], ours[mode] * 1e3,
		       ours_cpu[mode] * 1e3);
	printf("%-30s %10s %10s   %s\n", "", "", "",
	       "kprof faster by (cpu): first run / indexing run / later runs");
	if (a2l >= 0)
		printf("%-30s %10.1f %10.1f   %.1fx / %.1fx / %.1fx\n", "addr2line", a2l * 1e3,
		       a2l_cpu * 1e3, a2l_cpu / ours_cpu[1], a2l_cpu / ours_cpu[2],
		       a2l_cpu / ours_cpu[3]);
	if (eu >= 0)
		printf("%-30s %10.1f %10.1f   %.1fx / %.1fx / %.1fx\n", "eu-addr2line", eu * 1e3,
		       eu_cpu * 1e3, eu_cpu / ours_cpu[1], eu_cpu / ours_cpu[2],
		       eu_cpu / ours_cpu[3]);
	{
		char line[128] = "";
		FILE *sz = fopen(idx_size, "r");

		if (sz && fgets(line, sizeof(line), sz))
			printf("%s", line);
		if (sz)
			fclose(sz);
	}
	free(offs);
	free(fns);
}

int main(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/kp-symbench-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	alarm(getenv("KP_BENCH") ? 3600 : 300);
	if (getenv("KP_BENCH"))
		bench();
	else {
		test_agreement();
		test_index_equivalence();
	}
	kp_test_sh("rm -rf %s", tmp);
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
