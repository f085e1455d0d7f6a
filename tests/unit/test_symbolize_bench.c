/* The symbolizer against binutils and against itself.
 *
 * By default (ctest): builds the inline fixture and checks that, for every
 * instruction address inside its functions, kprof's frames (function, then
 * inlined callees) are exactly what `addr2line -f -i` prints, without the
 * cache and in each state of a build's index; then that the saved index
 * names every sampled address of C, C++ and Rust binaries (and libc with
 * libc6-dbg) exactly as reading their DWARF does.
 *
 * With KP_BENCH=1 (for scripts/bench-symbolize, which times the tools):
 * writes N distinct addresses (KP_BENCH_N, default 5000) of KP_BENCH_BIN
 * (default: libc.so.6 when its debuginfo is installed, else this
 * executable) to KP_BENCH_ADDRS_OUT, spread over every function or
 * clustered KP_BENCH_CLUSTER to a function. */
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
	size_t nfns, nsegs, naddr = 0, nsame = 0, nnamed = 0;
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
				nnamed += strstr(a, "[unknown]") == NULL;
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
	printf("index equivalence, %s: %zu of %zu addresses alike, %zu named\n", bin, nsame, naddr,
	       nnamed);
	/* alike because both name them, not because both fail */
	CHECK(nnamed * 10 >= naddr * 9);
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

static void bench(void)
{
	const char *bin =
		getenv("KP_BENCH_BIN") && *getenv("KP_BENCH_BIN") ? getenv("KP_BENCH_BIN") : NULL;
	const char *nstr = getenv("KP_BENCH_N");
	size_t want = nstr ? (size_t)strtoul(nstr, NULL, 10) : 5000;
	char dbg[512] = "", self[512];
	const char *out;
	struct fn *fns;
	struct seg segs[16];
	size_t nfns, nsegs, n = 0, k = 0;
	uint64_t *vaddrs, off;
	unsigned long cluster;
	FILE *fp;

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
	vaddrs = calloc(want ? want : 1, sizeof(*vaddrs));
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
	out = getenv("KP_BENCH_ADDRS_OUT");
	fp = out ? fopen(out, "w") : NULL;
	for (size_t i = 0; fp && i < n; i++) {
		if ((i && vaddrs[i] == vaddrs[i - 1]) || !to_off(segs, nsegs, vaddrs[i], &off))
			continue;
		fprintf(fp, "%llx\n", (unsigned long long)vaddrs[i]);
		k++;
	}
	if (fp)
		fclose(fp);
	CHECK(fp != NULL);
	printf("binary: %s\n", bin);
	if (dbg[0])
		printf("debuginfo: %s\n", dbg);
	printf("addresses: %zu distinct (%s)\n", k,
	       cluster > 1 ? "clustered, as a profile's hot code" : "spread over all functions");
	free(vaddrs);
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
