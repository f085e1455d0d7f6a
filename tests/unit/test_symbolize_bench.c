/* The symbolizer against binutils and against itself.
 *
 * kp-unit: not-under-asan (18 s there; the symbolizer and its index go
 * through ASan in unit/test_symbolize, test_symidx and fuzz/symidx).
 *
 * By default (ctest): builds the fixtures (C with gcc, and with clang when
 * installed; C++; Rust) and checks that, for every instruction address
 * inside their functions (Rust: its own functions, and a sample of the
 * standard library linked in), kprof's frames (function, then inlined
 * callees) are what `addr2line -f -i` prints, names (C) and the source
 * file and line of every frame, without the cache and in each state of a
 * build's index; then that the saved index names every sampled address of
 * C, C++ and Rust binaries (and libc with libc6-dbg) exactly as reading
 * their DWARF does, source lines included.
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

#ifdef __SANITIZE_ADDRESS__
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
#include "util/search.h"
#include "symbolize/symbolize.h"

static char tmp[64];

struct fn {
	uint64_t vaddr, size;
	bool own; /* a fixture's own function: its name has "kp_" */
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
					{
						const char *name =
							elf_strptr(elf, sh->sh_link, s.st_name);

						(*fns)[n++] = (struct fn){
							s.st_value, s.st_size,
							name && strstr(name, "kp_") != NULL};
					}
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

/* One frame as addr2line prints it, or as kprof gives it. */
struct pos {
	char *name;
	char *file; /* NULL when unknown */
	uint32_t line;
};

struct a2l {
	struct pos *frames; /* innermost first, as addr2line prints them */
	size_t *first, *n;  /* by address */
	size_t nframes, cap;
};

static void a2l_free(struct a2l *a, size_t naddr)
{
	for (size_t i = 0; i < a->nframes; i++) {
		free(a->frames[i].name);
		free(a->frames[i].file);
	}
	free(a->frames);
	free(a->first);
	free(a->n);
	memset(a, 0, sizeof(*a));
	(void)naddr;
}

/* Reads `addr2line -a -f -i` output for naddr addresses: "0xADDR", then a
 * name and "FILE:LINE" per frame, FILE "??" (or empty) when unknown, LINE
 * "?" for line 0, " (discriminator N)" after it (kprof has none: pprof
 * and the profile keep a file and a line). */
static bool read_a2l(const char *path, size_t naddr, struct a2l *a)
{
	FILE *fp = fopen(path, "r");
	char name[8192], pos[8192];
	size_t k = 0;

	memset(a, 0, sizeof(*a));
	a->first = calloc(naddr, sizeof(*a->first));
	a->n = calloc(naddr, sizeof(*a->n));
	if (!fp)
		return false;
	while (fgets(name, sizeof(name), fp)) {
		char *colon, *disc;

		name[strcspn(name, "\n")] = '\0';
		if (strncmp(name, "0x", 2) == 0) {
			if (k >= naddr)
				break;
			a->first[k++] = a->nframes;
			continue;
		}
		if (!k || !fgets(pos, sizeof(pos), fp))
			break;
		pos[strcspn(pos, "\n")] = '\0';
		disc = strstr(pos, " (discriminator ");
		if (disc)
			*disc = '\0';
		colon = strrchr(pos, ':');
		if (!colon)
			break;
		*colon = '\0';
		if (a->nframes == a->cap) {
			a->cap = a->cap ? 2 * a->cap : 4096;
			a->frames = realloc(a->frames, a->cap * sizeof(*a->frames));
		}
		a->frames[a->nframes++] = (struct pos){
			strdup(name), strcmp(pos, "??") == 0 || !pos[0] ? NULL : strdup(pos),
			(uint32_t)strtoul(colon + 1, NULL, 10)};
		a->n[k - 1]++;
	}
	fclose(fp);
	return k == naddr;
}

/* Where binutils' addr2line gives what the DWARF does not
 * (tests/fixtures/sym/binutils_quirks.py). */
struct quirks {
	struct initial {
		uint64_t lo, hi;
		char file[256];
	} * initial;
	size_t ninitial;
	char **filesyms;
	size_t nfilesyms;
};

static void read_quirks(const char *bin, struct quirks *q)
{
	const char *fx = getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures";
	char path[256], line[1024];
	FILE *fp;

	memset(q, 0, sizeof(*q));
	snprintf(path, sizeof(path), "%s/quirks", tmp);
	CHECK_EQ_INT(kp_test_sh("python3 %s/sym/binutils_quirks.py %s > %s", fx, bin, path), 0);
	fp = fopen(path, "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned long long lo, hi;
		char name[256];

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "initial %llx %llx %255s", &lo, &hi, name) == 3) {
			q->initial = realloc(q->initial, (q->ninitial + 1) * sizeof(*q->initial));
			q->initial[q->ninitial].lo = lo;
			q->initial[q->ninitial].hi = hi;
			snprintf(q->initial[q->ninitial++].file, 256, "%s", name);
		} else if (strncmp(line, "filesym ", 8) == 0) {
			q->filesyms = realloc(q->filesyms, (q->nfilesyms + 1) * sizeof(char *));
			q->filesyms[q->nfilesyms++] = strdup(line + 8);
		}
	}
	if (fp)
		fclose(fp);
}

static void quirks_free(struct quirks *q)
{
	for (size_t i = 0; i < q->nfilesyms; i++)
		free(q->filesyms[i]);
	free(q->filesyms);
	free(q->initial);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

struct agreement {
	size_t same, with_inline, frames, with_file;
	size_t initial_file, file_symbol; /* addr2line's known departures from the DWARF */
};

/* Whether kprof's innermost frame k (as) differs from addr2line's (af) at
 * vaddr only where addr2line departs from the DWARF, as binutils 2.40
 * does in two cases (see docs/symbolize.md, "Source lines"):
 *  - DWARF 5 rows made before their sequence's first DW_LNS_set_file have
 *    the file register's initial value, 1; addr2line names the unit's
 *    file 0 (its own source) instead: same line, another file;
 *  - where no row covers the address, addr2line prints the name of the
 *    ELF file symbol (STT_FILE) before the function, line ?; the DWARF
 *    says nothing, and kprof neither. */
static bool known_departure(const struct quirks *q, uint64_t vaddr, const struct pos *af,
			    const struct kp_sym_frame *kf, struct agreement *ag)
{
	if (af->file && kf->file && af->line == kf->line) {
		for (size_t i = 0; i < q->ninitial; i++) {
			if (vaddr >= q->initial[i].lo && vaddr < q->initial[i].hi &&
			    strcmp(base_name(kf->file), q->initial[i].file) == 0) {
				ag->initial_file++;
				return true;
			}
		}
	}
	if (af->file && !kf->file && !kf->line && !af->line) {
		for (size_t i = 0; i < q->nfilesyms; i++) {
			if (strcmp(af->file, q->filesyms[i]) == 0) {
				ag->file_symbol++;
				return true;
			}
		}
	}
	return false;
}

/* kprof's frames at every address of list (ELF addresses of bin) against
 * addr2line's (a): as many frames, the same names (when names), and the
 * same file and line in each, but for addr2line's known departures. */
static void compare_with_addr2line(const struct kp_sym_options *opts, const char *bin,
				   const struct seg *segs, size_t nsegs, const uint64_t *list,
				   size_t naddr, const struct a2l *a, bool names,
				   const struct quirks *q, struct agreement *ag,
				   struct kp_sym_stats *st)
{
	struct kp_mapping m = {.path = bin};
	struct kp_symbolizer *sym = kp_sym_new(opts);
	uint32_t obj = kp_sym_object_get(sym, &m);
	struct kp_sym_frames f = {0};
	size_t shown = 0;

	memset(ag, 0, sizeof(*ag));
	for (size_t i = 0; i < naddr; i++) {
		const struct pos *af = a->frames + a->first[i];
		struct kp_loc loc = {.obj = obj, .kind = KP_LOC_USER};
		bool same = a->n[i] > 0;
		char why[256] = "";

		to_off(segs, nsegs, list[i], &loc.addr);
		kp_sym_resolve(sym, &loc, &f);
		if (f.n != a->n[i]) {
			same = false;
			snprintf(why, sizeof(why), "%zu frames, addr2line %zu", f.n, a->n[i]);
		}
		for (size_t k = 0; same && k < f.n; k++) {
			const struct kp_sym_frame *kf = &f.frames[f.n - 1 - k];

			ag->frames++;
			ag->with_file += kf->file != NULL;
			if (names && strcmp(kf->name, af[k].name) != 0) {
				same = false;
				snprintf(why, sizeof(why), "frame %zu named %s, addr2line %s", k,
					 kf->name, af[k].name);
			} else if ((!kf->file) != (!af[k].file) ||
				   (kf->file && strcmp(kf->file, af[k].file) != 0) ||
				   kf->line != af[k].line) {
				if (k == 0 && known_departure(q, list[i], &af[k], kf, ag))
					continue;
				same = false;
				snprintf(why, sizeof(why),
					 "frame %zu (%s) at %s:%u, addr2line %s:%u", k, kf->name,
					 kf->file ? kf->file : "??", kf->line,
					 af[k].file ? af[k].file : "??", af[k].line);
			}
		}
		if (same)
			ag->same++;
		else if (shown++ < 10)
			fprintf(stderr, "%s at %#llx: %s\n", bin, (unsigned long long)list[i], why);
		ag->with_inline += a->n[i] > 1;
	}
	kp_sym_frames_fini(&f);
	kp_sym_stats(sym, st);
	kp_sym_free(sym);
}

/* One fixture, built: every address of its functions (or of its own
 * functions and a sample of the rest) compared with addr2line without
 * the cache, on the build's first run (DWARF read lazily), its second (the
 * build indexed) and a later one (from the saved index). */
static void agree(const char *what, const char *bin, bool names, bool sample)
{
	static const char *const modes[] = {"no cache", "first run of the build",
					    "second run (indexing it)", "later runs (its index)"};
	char addrs[256], out[256], cache[256];
	struct fn *fns;
	struct seg segs[16];
	size_t nfns, nsegs, naddr = 0;
	uint64_t *list = NULL;
	struct quirks q;
	struct a2l a;
	FILE *fp;

	snprintf(addrs, sizeof(addrs), "%s/addrs", tmp);
	snprintf(out, sizeof(out), "%s/a2l", tmp);
	snprintf(cache, sizeof(cache), "%s/agree-cache-%s", tmp, what);
	nfns = read_elf(bin, NULL, &fns, segs, &nsegs);
	fp = fopen(addrs, "w");
	for (size_t i = 0; fp && i < nfns; i++) {
		/* sampled: its own functions whole, one in 25 of the others at 24
		 * places; under ASan (some 25 s of the suite's minutes) every
		 * function at 24 places: the normal build checks every address */
		uint64_t step = (sample && !fns[i].own) || SANITIZED ? (fns[i].size + 23) / 24 : 1;

		if (sample && !fns[i].own && i % 25)
			continue;
		for (uint64_t v = fns[i].vaddr; v < fns[i].vaddr + fns[i].size; v += step) {
			fprintf(fp, "%llx\n", (unsigned long long)v);
			list = realloc(list, (naddr + 1) * sizeof(*list));
			list[naddr++] = v;
		}
	}
	if (fp)
		fclose(fp);
	CHECK(naddr > 100);
	CHECK_EQ_INT(kp_test_sh("addr2line -a -f -i -e %s < %s > %s", bin, addrs, out), 0);
	CHECK(read_a2l(out, naddr, &a));
	read_quirks(bin, &q);
	for (int mode = 0; mode < 4; mode++) {
		struct kp_sym_options opts = {.cache_dir = mode ? cache : NULL};
		struct kp_sym_stats st;
		struct agreement ag;

		compare_with_addr2line(&opts, bin, segs, nsegs, list, naddr, &a, names, &q, &ag,
				       &st);
		printf("agreement with addr2line, %s, %s: %zu of %zu addresses (%zu with inline "
		       "frames; %zu of %zu frames with a file; addr2line departs from the DWARF "
		       "at %zu: a DWARF 5 sequence's initial file, %zu: an ELF file symbol)\n",
		       what, modes[mode], ag.same, naddr, ag.with_inline, ag.with_file, ag.frames,
		       ag.initial_file, ag.file_symbol);
		CHECK_EQ_INT(ag.same, naddr);
		/* the chains and the lines are there to compare */
		CHECK(ag.with_inline > 10);
		CHECK(ag.with_file * 10 >= ag.frames * 7);
		CHECK_EQ_INT(st.indexes_saved, mode == 2);
		CHECK_EQ_INT(st.indexes_loaded, mode == 3);
		if (strcmp(what, "C") == 0) /* the rule is exercised: mark.h's functions */
			CHECK(ag.initial_file > 10);
		if (strcmp(what, "Rust") == 0) /* the standard library's crates without DWARF */
			CHECK(ag.file_symbol > 0);
	}
	quirks_free(&q);
	a2l_free(&a, naddr);
	free(list);
	free(fns);
}

/* The fixtures against addr2line: C (gcc, and clang when installed: line-0
 * rows, no .debug_aranges), C++ and Rust (their names are demangled where
 * addr2line -f prints them mangled: lines only). */
static void test_agreement(void)
{
	const char *fx = getenv("KP_FIXTURES") ? getenv("KP_FIXTURES") : "tests/fixtures";
	char bin[256];

	if (kp_test_sh("command -v addr2line >/dev/null") != 0) {
		printf("skip test_agreement: no addr2line\n");
		return;
	}
	snprintf(bin, sizeof(bin), "%s/inl", tmp);
	if (kp_test_sh("cc -g -O2 -DKP_VARIANT=1 -I%s/sym -o %s %s/sym/inline.c", fx, bin, fx) == 0)
		agree("C", bin, true, false);
	else
		CHECK(!"fixture built");
	snprintf(bin, sizeof(bin), "%s/inl-clang", tmp);
	if (kp_test_sh("command -v clang >/dev/null") != 0)
		printf("skip the clang build: no clang\n");
	else if (kp_test_sh("clang -g -O2 -DKP_VARIANT=1 -I%s/sym -o %s %s/sym/inline.c", fx, bin,
			    fx) == 0)
		agree("C (clang)", bin, true, false);
	else
		CHECK(!"fixture built with clang");
	snprintf(bin, sizeof(bin), "%s/cxx-fixture", tmp);
	if (kp_test_sh("c++ -g -O2 -I%s/sym -o %s %s/sym/cxx.cpp", fx, bin, fx) == 0)
		agree("C++", bin, false, false);
	else
		CHECK(!"C++ fixture built");
	snprintf(bin, sizeof(bin), "%s/rust-fixture", tmp);
	if (kp_test_sh("command -v rustc >/dev/null") != 0)
		printf("skip the Rust fixture: no rustc\n");
	else if (kp_test_sh("rustc -g -O --crate-name kp_rust -o %s %s/sym/rust.rs 2>/dev/null",
			    bin, fx) == 0)
		agree("Rust", bin, false, true);
	else
		CHECK(!"Rust fixture built");
}

/* All frames of one location as "name/kind@file:line;...". */
static void frames_text(struct kp_symbolizer *sym, uint32_t obj, uint64_t off, char *buf,
			size_t size, size_t *nlines)
{
	static struct kp_sym_frames f;
	struct kp_loc loc = {.addr = off, .obj = obj, .kind = KP_LOC_USER};
	size_t len = 0;

	kp_sym_resolve(sym, &loc, &f);
	buf[0] = '\0';
	for (size_t i = 0; i < f.n && len < size; i++) {
		len += (size_t)snprintf(buf + len, size - len, "%s/%d@%s:%u;", f.frames[i].name,
					(int)f.frames[i].kind,
					f.frames[i].file ? f.frames[i].file : "??",
					f.frames[i].line);
		if (nlines)
			*nlines += f.frames[i].file != NULL;
	}
}

/* The saved index names every address of bin as reading its DWARF does,
 * the same names, kinds, source files and lines: up to 48 addresses in
 * every function, as they are, with --full-names and with --no-inline. */
static void check_index_equivalence(const char *bin, const char *dbg)
{
	struct fn *fns;
	struct seg segs[16];
	size_t nfns, nsegs, naddr = 0, nsame = 0, nnamed = 0, nfile = 0;
	char cache[256], a[8192], b[8192];

	nfns = read_elf(bin, dbg, &fns, segs, &nsegs);
	snprintf(cache, sizeof(cache), "%s/equiv-cache", tmp);
	kp_test_sh("rm -rf %s", cache);
	/* the build's first run marks it, the second indexes it */
	for (int run = 0; run < 2 && nfns; run++) {
		struct kp_sym_options opts = {.cache_dir = cache};
		struct kp_mapping m = {.path = bin};
		struct kp_symbolizer *sym = kp_sym_new(&opts);
		uint32_t obj = kp_sym_object_get(sym, &m);
		struct kp_sym_stats st;
		uint64_t off;

		for (size_t i = 0; i < nfns; i++)
			if (to_off(segs, nsegs, fns[i].vaddr, &off))
				frames_text(sym, obj, off, a, sizeof(a), NULL);
		kp_sym_stats(sym, &st);
		CHECK_EQ_INT(st.indexes_saved, run == 1);
		kp_sym_free(sym);
	}
	/* as they are, with full names, without inline frames (each function
	 * then at the line where its callee was inlined) */
	for (int variant = 0; variant < 3; variant++) {
		struct kp_sym_options lazy_opts = {.full_names = variant == 1,
						   .no_inline = variant == 2};
		struct kp_sym_options idx_opts = {
			.full_names = variant == 1, .no_inline = variant == 2, .cache_dir = cache};
		struct kp_mapping m = {.path = bin};
		struct kp_symbolizer *lazy = kp_sym_new(&lazy_opts), *idx = kp_sym_new(&idx_opts);
		uint32_t lobj = kp_sym_object_get(lazy, &m), iobj = kp_sym_object_get(idx, &m);
		struct kp_sym_stats st;

		for (size_t i = 0; i < nfns; i++) {
			/* a quarter of a big binary's addresses under ASan (libc
			 * alone has some 900,000 here): the same code, a fourth
			 * of the time */
			uint64_t div = SANITIZED && nfns > 1000 ? 12 : 48;
			uint64_t step = fns[i].size / div ? fns[i].size / div : 1;

			for (uint64_t v = fns[i].vaddr; v < fns[i].vaddr + fns[i].size; v += step) {
				uint64_t off;

				if (!to_off(segs, nsegs, v, &off))
					continue;
				frames_text(lazy, lobj, off, a, sizeof(a), &nfile);
				frames_text(idx, iobj, off, b, sizeof(b), NULL);
				naddr++;
				nnamed += strstr(a, KP_SYM_UNKNOWN_PREFIX) == NULL;
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
	printf("index equivalence, %s: %zu of %zu addresses alike, %zu named, %zu frames with a "
	       "source file\n",
	       bin, nsame, naddr, nnamed, nfile);
	/* alike because both name them and know their lines, not because both
	 * fail */
	CHECK(nnamed * 10 >= naddr * 9);
	CHECK(nfile * 10 >= naddr * 9);
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
	qsort(vaddrs, n, sizeof(*vaddrs), kp_u64_cmp);
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
