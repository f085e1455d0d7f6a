/* ELF symbolization on binaries built here from tests/fixtures/sym/: exact
 * names and inline chains at marked instructions, PIE, stripped binaries
 * with debuginfo found by debuglink and by build-id under a debuginfo
 * directory, a debug file whose build-id does not match, a binary deleted
 * after its process exited, a program run from a memfd, objects shared by
 * build-id (one path holding two builds), C++ and Rust and D
 * demangling, the vDSO, and corrupt files. */
#include <dlfcn.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/demangle.h"
#include "symbolize/elf_object.h"
#include "symbolize/symbolize.h"

static char tmp[64];
static char src[1024];

/* A mapping's build-id, as an MMAP2 record gives it. */
static void set_build_id(struct kp_mapping *m, const uint8_t *id, size_t len)
{
	CHECK(len <= sizeof(m->build_id));
	m->build_id_size = (uint8_t)(len < sizeof(m->build_id) ? len : sizeof(m->build_id));
	memcpy(m->build_id, id, m->build_id_size);
}

struct mark {
	char name[32];
	uint64_t off;
	struct kp_mapping m;
	char path[512];
};

/* A running fixture: its stdin is held open until stop(). */
struct proc {
	pid_t pid;
	int in;
	struct mark marks[16];
	int n;
};

static bool parse_maps(const char *line, struct mark *mk)
{
	unsigned long long s, e, off, ino;
	unsigned maj, min;
	int pos = 0;

	if (sscanf(line, "%llx-%llx %*s %llx %x:%x %llu %n", &s, &e, &off, &maj, &min, &ino, &pos) <
		    6 ||
	    !pos)
		return false;
	snprintf(mk->path, sizeof(mk->path), "%s", line + pos);
	mk->path[strcspn(mk->path, "\n")] = '\0';
	mk->m = (struct kp_mapping){.start = s,
				    .end = e,
				    .pgoff = off,
				    .maj = maj,
				    .min = min,
				    .ino = ino,
				    .path = mk->path};
	return true;
}

/* Runs bin from a memfd named memfd_name (fexecve, as container runtimes
 * do); never returns. */
static void exec_from_memfd(const char *bin, const char *memfd_name)
{
	char buf[65536];
	ssize_t n;
	int in = open(bin, O_RDONLY), fd = memfd_create(memfd_name, MFD_CLOEXEC);
	char *argv[] = {(char *)bin, NULL};

	if (in < 0 || fd < 0)
		_exit(127);
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(fd, buf, (size_t)n) != n)
			_exit(127);
	}
	fexecve(fd, argv, environ);
	_exit(127);
}

/* Starts bin (from a memfd named memfd_name, unless NULL) and reads its
 * marks. */
static bool start_exec(const char *bin, const char *memfd_name, struct proc *p)
{
	int in[2], out[2];
	char line[4096];
	FILE *fp;

	memset(p, 0, sizeof(*p));
	if (pipe(in) || pipe(out))
		return false;
	p->pid = fork();
	if (p->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		if (memfd_name)
			exec_from_memfd(bin, memfd_name);
		execl(bin, bin, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	p->in = in[1];
	fp = fdopen(out[0], "r");
	while (fp && fgets(line, sizeof(line), fp) && strcmp(line, "ready\n") != 0) {
		struct mark *mk = &p->marks[p->n];
		char *tab = strchr(line, '\t');
		unsigned long long off;

		if (p->n == 16 || !tab || sscanf(line, "%31s %llx", mk->name, &off) != 2 ||
		    !parse_maps(tab + 1, mk))
			continue;
		mk->off = off;
		mk->m.pid = p->pid;
		p->n++;
	}
	if (fp)
		fclose(fp);
	return p->n > 0;
}

static bool start(const char *bin, struct proc *p)
{
	return start_exec(bin, NULL, p);
}

static void stop(struct proc *p)
{
	close(p->in);
	waitpid(p->pid, NULL, 0);
}

static const struct mark *mark(const struct proc *p, const char *name)
{
	for (int i = 0; i < p->n; i++) {
		if (strcmp(p->marks[i].name, name) == 0)
			return &p->marks[i];
	}
	fprintf(stderr, "no mark %s\n", name);
	return NULL;
}

/* Resolves (obj, off) and returns the frames joined by ';', inline frames
 * suffixed with "_[i]". */
static const char *names(struct kp_symbolizer *sym, uint32_t obj, uint64_t off)
{
	static char buf[4096];
	static struct kp_sym_frames f;
	struct kp_loc loc = {.addr = off, .obj = obj, .kind = KP_LOC_USER};
	size_t len = 0;

	kp_sym_resolve(sym, &loc, &f);
	buf[0] = '\0';
	for (size_t i = 0; i < f.n && len < sizeof(buf) - 1; i++) {
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s%s", i ? ";" : "",
					f.frames[i].name,
					f.frames[i].kind == KP_FRAME_INLINE ? "_[i]" : "");
		CHECK(f.frames[i].kind == (i ? KP_FRAME_INLINE : KP_FRAME_USER) ||
		      strncmp(f.frames[i].name, "[unknown", 8) == 0);
	}
	return buf;
}

static const char *mark_names(struct kp_symbolizer *sym, uint32_t obj, const struct proc *p,
			      const char *m)
{
	const struct mark *mk = mark(p, m);

	return mk ? names(sym, obj, mk->off) : "(no mark)";
}

/* The frames at mark m with their source positions, "name@FILE:LINE;..."
 * (the file's last component; "??" when unknown). */
static const char *mark_lines(struct kp_symbolizer *sym, uint32_t obj, const struct proc *p,
			      const char *m)
{
	static char buf[4096];
	static struct kp_sym_frames f;
	const struct mark *mk = mark(p, m);
	struct kp_loc loc = {.obj = obj, .kind = KP_LOC_USER};
	size_t len = 0;

	if (!mk)
		return "(no mark)";
	loc.addr = mk->off;
	kp_sym_resolve(sym, &loc, &f);
	buf[0] = '\0';
	for (size_t i = 0; i < f.n && len < sizeof(buf) - 1; i++) {
		const char *file = f.frames[i].file;

		if (file && strrchr(file, '/'))
			file = strrchr(file, '/') + 1;
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s@%s:%u", i ? ";" : "",
					f.frames[i].name, file ? file : "??", f.frames[i].line);
	}
	return buf;
}

/* "name@FILE:LINE" with LINE the first line of the fixture source FILE
 * holding needle: where the test expects a frame to point. */
static const char *src_at(const char *name, const char *file, const char *needle)
{
	static char out[8][256];
	static int next;
	char path[1200], line[1024];
	FILE *fp;
	unsigned n = 0, found = 0;

	snprintf(path, sizeof(path), "%s/%s", src, file);
	fp = fopen(path, "r");
	while (fp && !found && fgets(line, sizeof(line), fp)) {
		n++;
		if (strstr(line, needle))
			found = n;
	}
	if (fp)
		fclose(fp);
	CHECK(found != 0);
	next = (next + 1) % 8;
	snprintf(out[next], sizeof(out[next]), "%s@%s:%u", name, file, found);
	return out[next];
}

/* An object registered by path only, as for a process already gone. */
static uint32_t obj_by_path(struct kp_symbolizer *sym, const char *path)
{
	struct kp_mapping m = {.path = path};

	return kp_sym_object_get(sym, &m);
}

static bool build_c(const char *out, int variant)
{
	return kp_test_sh("cc -g -O2 -DKP_VARIANT=%d -I%s -o %s/%s %s/inline.c", variant, src, tmp,
			  out, src) == 0;
}

static void test_inline_and_deleted(void)
{
	struct kp_sym_options noinl = {.no_inline = true};
	struct kp_symbolizer *sym = kp_sym_new(NULL), *sym2 = kp_sym_new(&noinl);
	char bin[256], copy[256];
	struct kp_sym_stats st;
	struct proc p;
	const struct mark *leaf, *plain;
	uint32_t obj, obj2, same, other;

	snprintf(bin, sizeof(bin), "%s/inl", tmp);
	snprintf(copy, sizeof(copy), "%s/inl-copy", tmp);
	if (!build_c("inl", 1) || !build_c("inl2", 2) || !start(bin, &p)) {
		CHECK(!"fixture built and started");
		return;
	}
	leaf = mark(&p, "leaf");
	plain = mark(&p, "plain");
	if (!leaf || !plain) {
		CHECK(!"marks printed");
		stop(&p);
		return;
	}
	/* registered while it runs (as at MMAP2 time) */
	obj = kp_sym_object_get(sym, &leaf->m);
	obj2 = kp_sym_object_get(sym2, &leaf->m);
	CHECK(obj >= 1);
	CHECK_EQ_INT(kp_sym_object_get(sym, &plain->m), obj);
	/* the binary goes away, then the process */
	kp_test_sh("cp %s %s", bin, copy);
	unlink(bin);
	stop(&p);

	CHECK_EQ_STR(mark_names(sym, obj, &p, "outer"), "kp_outer_fn");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "mid"), "kp_outer_fn;kp_inl_mid_[i]");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "leaf"),
		     "kp_outer_fn;kp_inl_mid_[i];kp_inl_leaf_[i]");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "plain"), "kp_plain_fn");
	CHECK_EQ_STR(mark_names(sym2, obj2, &p, "leaf"), "kp_outer_fn");
	CHECK_EQ_STR(mark_names(sym2, obj2, &p, "plain"), "kp_plain_fn");
	/* source lines: the innermost frame at the mark's own line, each outer
	 * one where the callee inside it was inlined; without inline frames
	 * the function where its callee was inlined; none asked for, none */
	{
		char want[1024];
		struct kp_sym_options nolines = {.no_lines = true};
		struct kp_symbolizer *sym3 = kp_sym_new(&nolines);

		snprintf(want, sizeof(want), "%s;%s;%s",
			 src_at("kp_outer_fn", "inline.c", "r = kp_inl_mid(x);"),
			 src_at("kp_inl_mid", "inline.c", "return kp_inl_leaf(x + 1)"),
			 src_at("kp_inl_leaf", "inline.c", "MARK(\"leaf\")"));
		CHECK_EQ_STR(mark_lines(sym, obj, &p, "leaf"), want);
		snprintf(want, sizeof(want), "%s;%s",
			 src_at("kp_outer_fn", "inline.c", "r = kp_inl_mid(x);"),
			 src_at("kp_inl_mid", "inline.c", "MARK(\"mid\")"));
		CHECK_EQ_STR(mark_lines(sym, obj, &p, "mid"), want);
		CHECK_EQ_STR(mark_lines(sym, obj, &p, "outer"),
			     src_at("kp_outer_fn", "inline.c", "MARK(\"outer\")"));
		CHECK_EQ_STR(mark_lines(sym, obj, &p, "plain"),
			     src_at("kp_plain_fn", "inline.c", "MARK(\"plain\")"));
		CHECK_EQ_STR(mark_lines(sym2, obj2, &p, "leaf"),
			     src_at("kp_outer_fn", "inline.c", "r = kp_inl_mid(x);"));
		CHECK_EQ_STR(mark_lines(sym2, obj2, &p, "plain"),
			     src_at("kp_plain_fn", "inline.c", "MARK(\"plain\")"));
		CHECK_EQ_STR(mark_lines(sym3, obj_by_path(sym3, copy), &p, "leaf"),
			     "kp_outer_fn@??:0;kp_inl_mid@??:0;kp_inl_leaf@??:0");
		/* a header's function: the file of its rows, which come before
		 * the line program's first DW_LNS_set_file (file register 1),
		 * not the unit's own file (binutils 2.40's addr2line says
		 * inline.c) */
		{
			char cmd[512], line[256];
			unsigned long long va = 0;
			FILE *fp;

			snprintf(cmd, sizeof(cmd), "nm %s | grep ' kp_mark_record$'", copy);
			fp = popen(cmd, "r");
			if (fp && fgets(line, sizeof(line), fp))
				va = strtoull(line, NULL, 16);
			if (fp)
				pclose(fp);
			CHECK(va != 0);
			{
				static struct kp_sym_frames f;
				struct kp_symbolizer *own = kp_sym_new(NULL);
				struct kp_loc loc = {.addr = va,
						     .obj = obj_by_path(own, copy),
						     .kind = KP_LOC_USER};
				const char *file;

				kp_sym_resolve(own, &loc, &f);
				CHECK_EQ_STR(f.n ? f.frames[0].name : "", "kp_mark_record");
				file = f.n && f.frames[0].file ? strrchr(f.frames[0].file, '/')
							       : NULL;
				CHECK_EQ_STR(file ? file : "(none)", "/mark.h");
				CHECK(f.n && f.frames[0].file && f.frames[0].file[0] == '/');
				kp_sym_free(own);
			}
		}
		kp_sym_free(sym3);
	}
	/* an offset outside any loadable segment */
	CHECK_EQ_STR(names(sym, obj, 1ull << 40), "[unknown: in inl, outside every symbol]");

	/* a PLT stub is "callee@plt" (objdump names them the same way), not
	 * the sizeless _init before it */
	{
		char cmd[512], line[256];
		FILE *fp;
		unsigned long long va = 0;

		snprintf(cmd, sizeof(cmd),
			 "objdump -d -j .plt.sec -j .plt %s 2>/dev/null | grep '<read@plt>:'",
			 copy);
		fp = popen(cmd, "r");
		if (fp && fgets(line, sizeof(line), fp))
			va = strtoull(line, NULL, 16);
		if (fp)
			pclose(fp);
		CHECK(va != 0);
		/* the fixture is PIE: its text is at vaddr == file offset */
		CHECK_EQ_STR(names(sym, obj_by_path(sym, copy), va + 4), "read@plt");
	}

	/* the same file under another name is the same object (build-id);
	 * another build is another object */
	same = obj_by_path(sym, copy);
	CHECK_EQ_INT(same, obj);
	snprintf(copy, sizeof(copy), "%s/inl2", tmp);
	other = obj_by_path(sym, copy);
	CHECK(other != obj && other >= 1);
	/* cached: counted once per distinct location */
	names(sym, obj, leaf->off);
	kp_sym_stats(sym, &st);
	CHECK_EQ_INT(st.resolved[KP_LOC_USER], 5);
	CHECK_EQ_INT(st.unresolved[KP_LOC_USER], 1);
	kp_sym_free(sym);
	kp_sym_free(sym2);
}

static void build_id_hex(const char *path, char *hex, size_t size)
{
	uint8_t id[KP_BUILD_ID_MAX];
	int fd = open(path, O_RDONLY);
	size_t n = fd >= 0 ? kp_elf_object_read_build_id(fd, id, sizeof(id)) : 0;

	hex[0] = '\0';
	for (size_t i = 0; i < n && 2 * i + 2 < size; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	if (fd >= 0)
		close(fd);
}

/* The address nm gives function fn in the binary tmp/name (0 if none). */
static unsigned long long nm_addr(const char *name, const char *fn)
{
	char cmd[512], line[256];
	unsigned long long va = 0;
	FILE *fp;

	snprintf(cmd, sizeof(cmd), "nm %s/%s | grep ' %s$'", tmp, name, fn);
	fp = popen(cmd, "r");
	if (fp && fgets(line, sizeof(line), fp))
		va = strtoull(line, NULL, 16);
	if (fp)
		pclose(fp);
	return va;
}

static void test_separate_debuginfo(void)
{
	char bin[256], dir[256], bad[256], hex[2 * KP_BUILD_ID_MAX + 1], plain[64];
	const char *dirs[1];
	struct kp_sym_options o = {.debuginfo_dirs = dirs, .n_debuginfo_dirs = 1};
	struct kp_symbolizer *sym;
	struct proc p;
	uint32_t obj;

	snprintf(bin, sizeof(bin), "%s/dbg", tmp);
	if (!build_c("dbg", 3) || !build_c("dbg-other", 4) || !start(bin, &p)) {
		CHECK(!"fixture built");
		return;
	}
	stop(&p); /* stripping keeps the offsets of loaded code */
	build_id_hex(bin, hex, sizeof(hex));
	CHECK(strlen(hex) >= 16);
	CHECK_EQ_INT(
		kp_test_sh("cd %s && objcopy --only-keep-debug dbg dbg.debug && "
			   "objcopy --strip-all --add-gnu-debuglink=dbg.debug dbg dbg.linked && "
			   "objcopy --strip-all dbg dbg.nolink && "
			   "objcopy --only-keep-debug dbg-other dbg-other.debug && "
			   "mkdir -p ids/.build-id/%.2s bad/.build-id/%.2s && "
			   "cp dbg.debug ids/.build-id/%.2s/%s.debug && "
			   "cp dbg-other.debug bad/.build-id/%.2s/%s.debug",
			   tmp, hex, hex, hex, hex + 2, hex, hex + 2),
		0);

	/* .gnu_debuglink next to the stripped binary */
	snprintf(bin, sizeof(bin), "%s/dbg.linked", tmp);
	sym = kp_sym_new(NULL);
	obj = obj_by_path(sym, bin);
	CHECK_EQ_STR(mark_names(sym, obj, &p, "leaf"),
		     "kp_outer_fn;kp_inl_mid_[i];kp_inl_leaf_[i]");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "plain"), "kp_plain_fn");
	kp_sym_free(sym);

	/* no debuglink, no debuginfo directory: no symbol names it, its
	 * unwind table's FDE gives where it starts (symbolize/fde_start.h) */
	snprintf(bin, sizeof(bin), "%s/dbg.nolink", tmp);
	snprintf(plain, sizeof(plain), "dbg.nolink+0x%llx", nm_addr("dbg", "kp_plain_fn"));
	sym = kp_sym_new(NULL);
	obj = obj_by_path(sym, bin);
	CHECK_EQ_STR(mark_names(sym, obj, &p, "plain"), plain);
	{
		size_t n;
		const char *const *notes = kp_sym_notes(sym, &n);

		/* and the user is told why */
		CHECK_EQ_INT(n, 1);
		CHECK(n == 1 &&
		      strstr(notes[0], "dbg.nolink is stripped and no debuginfo") != NULL);
	}
	kp_sym_free(sym);

	/* by build-id under --debuginfo-dir */
	snprintf(dir, sizeof(dir), "%s/ids", tmp);
	dirs[0] = dir;
	sym = kp_sym_new(&o);
	obj = obj_by_path(sym, bin);
	CHECK_EQ_STR(mark_names(sym, obj, &p, "leaf"),
		     "kp_outer_fn;kp_inl_mid_[i];kp_inl_leaf_[i]");
	kp_sym_free(sym);

	/* a debug file filed under our build-id but from another build:
	 * not used */
	snprintf(bad, sizeof(bad), "%s/bad", tmp);
	dirs[0] = bad;
	sym = kp_sym_new(&o);
	obj = obj_by_path(sym, bin);
	CHECK_EQ_STR(mark_names(sym, obj, &p, "plain"), plain);
	kp_sym_free(sym);
}

static void test_cxx(void)
{
	struct kp_sym_options full = {.full_names = true};
	struct kp_symbolizer *sym = kp_sym_new(NULL), *symf = kp_sym_new(&full);
	char bin[256];
	struct proc p;
	uint32_t obj, objf;

	snprintf(bin, sizeof(bin), "%s/cxx", tmp);
	if (kp_test_sh("g++ -g -O2 -I%s -o %s %s/cxx.cpp", src, bin, src) != 0 || !start(bin, &p)) {
		CHECK(!"C++ fixture built");
		return;
	}
	stop(&p);
	obj = obj_by_path(sym, bin);
	objf = obj_by_path(symf, bin);
	CHECK_EQ_STR(mark_names(sym, obj, &p, "tmpl"), "kpns::kp_tmpl<int>");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "callop"), "kpns::Widget::operator()");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "anon"), "(anonymous namespace)::kp_anon");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "anonmember"),
		     "kpns::kp_uses_anon;(anonymous namespace)::Anon::twice_[i]");
	{
		char want[1024];

		snprintf(want, sizeof(want), "%s;%s",
			 src_at("kpns::kp_uses_anon", "cxx.cpp", "return a.twice(x) + 1;"),
			 src_at("(anonymous namespace)::Anon::twice", "cxx.cpp",
				"MARK(\"anonmember\")"));
		CHECK_EQ_STR(mark_lines(sym, obj, &p, "anonmember"), want);
		CHECK_EQ_STR(mark_lines(sym, obj, &p, "callop"),
			     src_at("kpns::Widget::operator()", "cxx.cpp", "MARK(\"callop\")"));
	}
	/* gcc may emit clones (".isra.0"): kept with --full-names */
	CHECK(strncmp(mark_names(symf, objf, &p, "tmpl"), "kpns::kp_tmpl<int>(int)", 23) == 0);
	CHECK(strncmp(mark_names(symf, objf, &p, "callop"), "kpns::Widget::operator()(int) const",
		      35) == 0);
	CHECK_EQ_STR(mark_names(symf, objf, &p, "anon"), "(anonymous namespace)::kp_anon(int)");
	kp_sym_free(sym);
	kp_sym_free(symf);
}

/* File offset of the first function symbol whose name contains needle. */
static uint64_t sym_offset(const char *path, const char *needle)
{
	int fd = open(path, O_RDONLY);
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t vaddr = 0, off = 0;
	size_t phnum;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && !vaddr && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh_mem, *shdr = gelf_getshdr(scn, &sh_mem);
		Elf_Data *data;

		if (!shdr || shdr->sh_type != SHT_SYMTAB || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < shdr->sh_size / shdr->sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(data, (int)i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC)
				continue;
			n = elf_strptr(elf, shdr->sh_link, s.st_name);
			if (n && strstr(n, needle)) {
				vaddr = s.st_value;
				break;
			}
		}
	}
	if (elf && vaddr && elf_getphdrnum(elf, &phnum) == 0) {
		for (size_t i = 0; i < phnum; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
				off = vaddr - ph.p_vaddr + ph.p_offset;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return off;
}

static void test_rust(void)
{
	static const char *const manglings[] = {"legacy", "v0"};

	if (kp_test_sh("command -v rustc >/dev/null || test -x $HOME/.cargo/bin/rustc") != 0) {
		printf("skip test_rust: rustc not found\n");
		return;
	}
	for (int i = 0; i < 2; i++) {
		struct kp_sym_options noinl = {.no_inline = true};
		struct kp_symbolizer *sym = kp_sym_new(NULL), *symn = kp_sym_new(&noinl);
		char bin[256];
		uint64_t off;

		snprintf(bin, sizeof(bin), "%s/rs-%s", tmp, manglings[i]);
		/* legacy is the default of current rustc; asking for it by name
		 * needs -Z unstable-options */
		if (kp_test_sh(
			    "PATH=$PATH:$HOME/.cargo/bin RUSTC_BOOTSTRAP=1 rustc -g -O %s "
			    "-C symbol-mangling-version=%s --crate-name kp_rust -o %s %s/rust.rs",
			    i == 0 ? "-Z unstable-options" : "", manglings[i], bin, src) != 0) {
			CHECK(!"rust fixture built");
			kp_sym_free(sym);
			kp_sym_free(symn);
			continue;
		}
		off = sym_offset(bin, "kp_rust_fn");
		CHECK(off != 0);
		CHECK_EQ_STR(names(symn, obj_by_path(symn, bin), off + 1), "kp_rust::kp_rust_fn");
		/* the loop's Range::next (then spec_next, then u64's lt) is
		 * inlined at the function's start, as addr2line -i also says */
		{
			const char *chain = names(sym, obj_by_path(sym, bin), off + 1);
			const char *tail = ";<u64 as core::cmp::PartialOrd>::lt_[i]";
			size_t len = strlen(chain);

			CHECK(strncmp(chain, "kp_rust::kp_rust_fn;", 20) == 0);
			CHECK(len > strlen(tail) && strcmp(chain + len - strlen(tail), tail) == 0);
		}
		kp_sym_free(sym);
		kp_sym_free(symn);
	}
}

static void test_demangle(void)
{
	static const char *const strip[][2] = {
		{"std::function<void (int)>::operator()(int)",
		 "std::function<void (int)>::operator()"},
		{"main::{lambda(int)#1}::operator()(int) const",
		 "main::{lambda(int)#1}::operator()"},
		{"(anonymous namespace)::foo()", "(anonymous namespace)::foo"},
		{"ns::(anonymous namespace)::Bar<(anonymous namespace)::T>::run(int, char)",
		 "ns::(anonymous namespace)::Bar<(anonymous namespace)::T>::run"},
		{"foo<int>(int)", "foo<int>"},
		{"A::f() const", "A::f"},
		{"A::f() const &&", "A::f"},
		{"A::g() volatile &", "A::g"},
		{"operator<<(std::ostream&, A const&)", "operator<<"},
		{"A::operator<(A const&)", "A::operator<"},
		{"A::operator>>=(int)", "A::operator>>="},
		{"A::operator->() const", "A::operator->"},
		{"A::operator<=>(A const&) const", "A::operator<=>"},
		{"A::operator bool() const", "A::operator bool"},
		{"operator new(unsigned long)", "operator new"},
		{"X<int>::operator()", "X<int>::operator()"},
		{"A::f() [clone .cold]", "A::f"},
		{"A::f(int) [clone .isra.0] [clone .cold]", "A::f"},
		{"A<int>::f(int) const [clone .constprop.0]", "A<int>::f"},
		{"f(int)::{lambda()#1}::operator()() const", "f::{lambda()#1}::operator()"},
		{"std::vector<int, std::allocator<int> >::push_back(int&&)",
		 "std::vector<int, std::allocator<int> >::push_back"},
		{"X<void (*)(int)>::run(void (*)(int))", "X<void (*)(int)>::run"},
		{"Foo<(1>2)>::bar(int)", "Foo<(1>2)>::bar"},
		{"Foo<(1<2)>::bar(int)", "Foo<(1<2)>::bar"},
		{"foo.bar!(int).baz(int)", "foo.bar!(int).baz"},
		{"f(int", "f(int"},
		{"plain_c_name", "plain_c_name"},
		{"", ""},
	};
	static const char *const dem[][3] = {
		/* mangled, default, --full-names */
		{"_ZNSt8functionIFviEEclEi", "std::function<void (int)>::operator()",
		 "std::function<void (int)>::operator()(int) const"},
		{"_ZN12_GLOBAL__N_13fooEv", "(anonymous namespace)::foo",
		 "(anonymous namespace)::foo()"},
		{"_Z3fooIiEvT_", "foo<int>", "foo<int>(int)"},
		{"_ZN1A1fEv.cold", "A::f", "A::f() [clone .cold]"},
		{"_ZNSt6vectorIiSaIiEE9push_backEOi@@GLIBCXX_3.4",
		 "std::vector<int, std::allocator<int> >::push_back",
		 "std::vector<int, std::allocator<int> >::push_back(int&&)"},
		{"_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write", "core::fmt::write"},
		{"_RNvCs1234_7mycrate3foo", "mycrate::foo", "mycrate::foo"},
		{"_D3foo3barFiZv", "foo.bar", "foo.bar(int)"},
		{"memcpy@GLIBC_2.2.5", "memcpy", "memcpy"},
		{"read@plt", "read@plt", "read@plt"},
		{"_ZNSt6vectorIiSaIiEE9push_backEOi@plt",
		 "std::vector<int, std::allocator<int> >::push_back@plt",
		 "std::vector<int, std::allocator<int> >::push_back(int&&)@plt"},
		{"_Zinvalid", "_Zinvalid", "_Zinvalid"},
		{"_Dfoo", "_Dfoo", "_Dfoo"},
		{"main", "main", "main"},
		{"@weird", "@weird", "@weird"},
	};
	char deep[2000];

	for (size_t i = 0; i < sizeof(strip) / sizeof(strip[0]); i++) {
		char *s = kp_demangle_strip_params(strip[i][0]);

		CHECK_EQ_STR(s, strip[i][1]);
		free(s);
	}
	for (size_t i = 0; i < sizeof(dem) / sizeof(dem[0]); i++) {
		char *a = kp_demangle(dem[i][0], false), *b = kp_demangle(dem[i][0], true);

		CHECK_EQ_STR(a, dem[i][1]);
		/* the first one is not const: checks that full names are kept as is */
		if (i == 0)
			CHECK_EQ_STR(b, "std::function<void (int)>::operator()(int)");
		else
			CHECK_EQ_STR(b, dem[i][2]);
		free(a);
		free(b);
	}
	/* hostile nesting: no crash, no overflow */
	for (size_t i = 0; i < sizeof(deep) - 1; i++)
		deep[i] = i < 1000 ? '<' : '(';
	deep[sizeof(deep) - 1] = '\0';
	free(kp_demangle_strip_params(deep));
}

/* This process's own vDSO. */
static void test_vdso(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_mapping m = {.pid = getpid(), .path = "[vdso]"};
	void *h = dlopen("linux-vdso.so.1", RTLD_LAZY | RTLD_NOLOAD);
	void *fn = h ? dlsym(h, "__vdso_clock_gettime") : NULL;
	char line[512];
	FILE *fp = fopen("/proc/self/maps", "r");
	const char *n;
	uint32_t obj;

	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned long long s, e;

		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &s, &e) == 2) {
			m.start = s;
			m.end = e;
		}
	}
	if (fp)
		fclose(fp);
	if (!fn || !m.start) {
		printf("skip test_vdso: no vDSO with __vdso_clock_gettime\n");
		kp_sym_free(sym);
		return;
	}
	obj = kp_sym_object_get(sym, &m);
	CHECK_EQ_INT(kp_sym_object_get(sym, &m), obj);
	n = names(sym, obj, (uint64_t)((uintptr_t)fn - m.start) + 4);
	CHECK(strcmp(n, "__vdso_clock_gettime") == 0 || strcmp(n, "clock_gettime") == 0);
	if (strcmp(n, "__vdso_clock_gettime") != 0)
		printf("note: vDSO symbol named %s\n", n);
	kp_sym_free(sym);
}

static void test_bad_files(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	char path[256];
	struct kp_sym_stats st;
	size_t nnotes;
	struct kp_mapping anon = {.path = "//anon"};

	/* not ELF, truncated ELF, empty, a directory, missing */
	snprintf(path, sizeof(path), "%s/garbage", tmp);
	kp_test_sh("head -c 100000 /dev/urandom > %s", path);
	CHECK_EQ_STR(names(sym, obj_by_path(sym, path), 0x1000), "[unknown: garbage unreadable]");
	snprintf(path, sizeof(path), "%s/truncated", tmp);
	kp_test_sh("head -c 3000 /bin/ls > %s", path);
	CHECK_EQ_STR(names(sym, obj_by_path(sym, path), 0x1000),
		     "[unknown: in truncated, outside every symbol]");
	snprintf(path, sizeof(path), "%s/badhdr", tmp);
	kp_test_sh("(printf '\\177ELF\\002\\001\\001'; head -c 5000 /dev/urandom) > %s", path);
	CHECK_EQ_STR(names(sym, obj_by_path(sym, path), 0x1000), "[unknown: badhdr unreadable]");
	snprintf(path, sizeof(path), "%s/empty", tmp);
	kp_test_sh(": > %s", path);
	CHECK_EQ_STR(names(sym, obj_by_path(sym, path), 0), "[unknown: empty unreadable]");
	/* a directory: not a file to read */
	CHECK(strncmp(names(sym, obj_by_path(sym, tmp), 0), "[unknown: kp-symtest-", 21) == 0);
	CHECK(strstr(names(sym, obj_by_path(sym, tmp), 0), " unreadable]") != NULL);
	CHECK_EQ_STR(names(sym, obj_by_path(sym, "/nonexistent/lib.so"), 0),
		     "[unknown: lib.so unreadable]");
	CHECK_EQ_STR(names(sym, kp_sym_object_get(sym, &anon), 0), "[unknown: anon unreadable]");
	/* a symbol name with ';' and a control character, from asm */
	snprintf(path, sizeof(path), "%s/evil.c", tmp);
	{
		FILE *fp = fopen(path, "w");

		if (fp) {
			fputs("__asm__(\".text\\n.globl \\\"kp;ev\\001il\\\"\\n"
			      ".type \\\"kp;ev\\001il\\\", @function\\n"
			      "\\\"kp;ev\\001il\\\":\\n.skip 64, 0x90\\nret\\n"
			      ".size \\\"kp;ev\\001il\\\", 65\\n\");\n"
			      "int main(void) { return 0; }\n",
			      fp);
			fclose(fp);
		}
	}
	if (kp_test_sh("cd %s && cc -o evil evil.c", tmp) == 0) {
		uint64_t off;

		snprintf(path, sizeof(path), "%s/evil", tmp);
		off = sym_offset(path, "ev");
		CHECK(off != 0);
		CHECK_EQ_STR(names(sym, obj_by_path(sym, path), off + 8), "kp:ev?il");
	} else {
		printf("note: assembler refused the quoted symbol name, check skipped\n");
	}
	/* ids that were never handed out */
	CHECK_EQ_STR(names(sym, 9999, 0), "[unknown: ? unreadable]");
	kp_sym_stats(sym, &st);
	CHECK(st.resolved[KP_LOC_USER] <= 1);
	CHECK_EQ_INT(st.unresolved[KP_LOC_USER], 8);
	kp_sym_notes(sym, &nnotes);
	CHECK(nnotes >= 1); /* at least the missing file is named */
	kp_sym_free(sym);
}

/* A build whose file cannot be opened (the process gone, the file
 * deleted) but whose build-id came with its MMAP2 record: [unknown] with
 * no cache, named from the build's index once two runs made one. */
static void test_index_without_file(void)
{
	char bin[256], cache[256], gone[256];
	uint8_t id[KP_BUILD_ID_MAX];
	struct kp_sym_options opts = {0};
	struct kp_mapping m = {0};
	struct proc p;
	const struct mark *leaf;
	size_t idlen;
	int fd;

	snprintf(bin, sizeof(bin), "%s/inl-idx", tmp);
	snprintf(cache, sizeof(cache), "%s/idx-cache", tmp);
	snprintf(gone, sizeof(gone), "%s/no-such-dir/inl-idx", tmp);
	if (!build_c("inl-idx", 1) || !start(bin, &p)) {
		CHECK(!"fixture built and started");
		return;
	}
	stop(&p);
	leaf = mark(&p, "leaf");
	fd = open(bin, O_RDONLY);
	idlen = fd >= 0 ? kp_elf_object_read_build_id(fd, id, sizeof(id)) : 0;
	if (fd >= 0)
		close(fd);
	if (!leaf || !idlen) {
		CHECK(!"mark and build-id");
		return;
	}
	m.path = gone; /* as the MMAP2 record said, but not there any more */
	set_build_id(&m, id, idlen);
	opts.cache_dir = cache;
	for (int run = 0; run < 4; run++) {
		struct kp_symbolizer *sym = kp_sym_new(&opts);
		uint32_t obj;

		if (run < 2) {
			/* two runs that can read the file: the second indexes it */
			obj = obj_by_path(sym, bin);
			CHECK_EQ_STR(names(sym, obj, leaf->off),
				     "kp_outer_fn;kp_inl_mid_[i];kp_inl_leaf_[i]");
		} else if (run == 2) {
			/* the file out of reach: the index names it */
			obj = kp_sym_object_get(sym, &m);
			CHECK_EQ_STR(names(sym, obj, leaf->off),
				     "kp_outer_fn;kp_inl_mid_[i];kp_inl_leaf_[i]");
			/* the file found later (another mapping) is used instead */
			m.path = bin;
			CHECK_EQ_INT(kp_sym_object_get(sym, &m), obj);
			m.path = gone;
		} else {
			/* without the cache: nothing to go by */
			struct kp_sym_options none = {0};

			kp_sym_free(sym);
			sym = kp_sym_new(&none);
			obj = kp_sym_object_get(sym, &m);
			CHECK_EQ_STR(names(sym, obj, leaf->off), "[unknown: inl-idx unreadable]");
		}
		kp_sym_free(sym);
	}
}

/* One path, two builds: MMAP2 records that carry a build-id carry no
 * inode, so a mapping's file key is then its path alone; a program
 * rebuilt at that path (or a memfd name a launcher reuses) is another
 * object, named from its own file. */
static void test_path_reused(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	char path[256], a[256], b[256];
	uint8_t id_a[KP_BUILD_ID_MAX], id_b[KP_BUILD_ID_MAX];
	struct kp_mapping m = {0};
	uint32_t obj_a, obj_b;
	size_t len_a, len_b;
	int fd;

	snprintf(path, sizeof(path), "%s/rebuilt", tmp);
	snprintf(a, sizeof(a), "%s/rebuilt-a", tmp);
	snprintf(b, sizeof(b), "%s/rebuilt-b", tmp);
	if (!build_c("rebuilt-a", 1) || !build_c("rebuilt-b", 2)) {
		CHECK(!"fixtures built");
		goto out;
	}
	fd = open(a, O_RDONLY);
	len_a = fd >= 0 ? kp_elf_object_read_build_id(fd, id_a, sizeof(id_a)) : 0;
	if (fd >= 0)
		close(fd);
	fd = open(b, O_RDONLY);
	len_b = fd >= 0 ? kp_elf_object_read_build_id(fd, id_b, sizeof(id_b)) : 0;
	if (fd >= 0)
		close(fd);
	CHECK(len_a && (len_a != len_b || memcmp(id_a, id_b, len_a) != 0));
	m.path = path;
	kp_test_sh("cp %s %s", a, path);
	set_build_id(&m, id_a, len_a);
	obj_a = kp_sym_object_get(sym, &m);
	kp_test_sh("rm -f %s && cp %s %s", path, b, path);
	set_build_id(&m, id_b, len_b);
	obj_b = kp_sym_object_get(sym, &m);
	CHECK(obj_a >= 1 && obj_b >= 1 && obj_a != obj_b);
	CHECK_EQ_INT(obj_by_path(sym, a), obj_a);
	CHECK_EQ_INT(obj_by_path(sym, b), obj_b);
	/* each build again, by its build-id */
	CHECK_EQ_INT(kp_sym_object_get(sym, &m), obj_b);
	set_build_id(&m, id_a, len_a);
	CHECK_EQ_INT(kp_sym_object_get(sym, &m), obj_a);
out:
	kp_sym_free(sym);
}

/* The /proc/self/maps line of the mapping holding addr, as a mark. */
static bool own_mapping(const void *addr, struct mark *mk)
{
	char line[4096];
	FILE *fp = fopen("/proc/self/maps", "r");
	bool found = false;

	while (fp && !found && fgets(line, sizeof(line), fp)) {
		found = parse_maps(line, mk) && mk->m.start <= (uintptr_t)addr &&
			(uintptr_t)addr < mk->m.end;
	}
	if (fp)
		fclose(fp);
	mk->m.pid = getpid();
	return found;
}

/* A program run from a memfd (fexecve, as container runtimes do): its maps
 * say "/memfd:NAME (deleted)" and only map_files reaches the file. An ELF
 * file there is an object named like a deleted binary (its own DWARF's
 * inline frames included), read after the process exited; a memfd holding
 * other bytes (code a JIT wrote) is no object. */
static void test_memfd(void)
{
	static const struct {
		const char *path;
		bool memfd;
	} paths[] = {
		{"/memfd:kprof-memfd-test (deleted)", true},
		{"/memfd: (deleted)", true}, /* memfd_create("") */
		{"/memfd:a name (deleted) (deleted)", true},
		{"/memfd:(deleted) (deleted)", true},
		{"/memfd:no-suffix", false}, /* a file named so, not deleted */
		{"/memfd:(deleted)", false},
		{"/tmp/memfd:x (deleted)", false},
		{"memfd:x (deleted)", false},
		{"/usr/bin/ls (deleted)", false},
		{"//anon", false},
		{"", false},
	};
	struct kp_symbolizer *sym = kp_sym_new(NULL), *late = kp_sym_new(NULL);
	struct kp_mapping other, gone;
	uint8_t id[KP_BUILD_ID_MAX];
	char bin[256];
	struct mark jit;
	struct proc p;
	const struct mark *leaf;
	uint32_t obj;
	size_t idlen;
	void *code;
	int fd;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		CHECK_EQ_INT(kp_mapping_path_is_memfd(paths[i].path), paths[i].memfd);
	CHECK(!kp_mapping_path_is_memfd(NULL));

	snprintf(bin, sizeof(bin), "%s/inl-memfd", tmp);
	if (!build_c("inl-memfd", 1) || !start_exec(bin, "kp unit (deleted)", &p) ||
	    !(leaf = mark(&p, "leaf"))) {
		CHECK(!"fixture built and started from a memfd");
		goto out;
	}
	CHECK_EQ_STR(leaf->m.path, "/memfd:kp unit (deleted) (deleted)");
	obj = kp_sym_memfd_get(sym, &leaf->m);
	if (geteuid() != 0) {
		/* map_files needs CAP_SYS_ADMIN: out of reach, and no build-id */
		printf("note: not root, memfd checks reduced to the unreachable case\n");
		CHECK_EQ_INT(obj, 0);
		stop(&p);
		goto out;
	}
	CHECK(obj >= 1);
	CHECK_EQ_INT(kp_sym_memfd_get(sym, &leaf->m), obj);
	/* the same build on disk is the same object (build-id) */
	CHECK_EQ_INT(obj_by_path(sym, bin), obj);
	/* another memfd at that address (the pid reused): its inode is not
	 * the mapping's, and without a build-id nothing says it is ELF */
	other = leaf->m;
	other.ino++;
	CHECK_EQ_INT(kp_sym_memfd_get(late, &other), 0);
	stop(&p);
	CHECK_EQ_STR(mark_names(sym, obj, &p, "leaf"),
		     "kp_outer_fn;kp_inl_mid_[i];kp_inl_leaf_[i]");
	CHECK_EQ_STR(mark_names(sym, obj, &p, "plain"), "kp_plain_fn");

	/* the process gone before its first sample: no object without a
	 * build-id (as JIT code), an object (named only by an index) with one */
	gone = leaf->m;
	CHECK_EQ_INT(kp_sym_memfd_get(late, &gone), 0);
	fd = open(bin, O_RDONLY);
	idlen = fd >= 0 ? kp_elf_object_read_build_id(fd, id, sizeof(id)) : 0;
	if (fd >= 0)
		close(fd);
	CHECK(idlen > 0);
	set_build_id(&gone, id, idlen);
	obj = kp_sym_memfd_get(late, &gone);
	CHECK(obj >= 1);
	CHECK_EQ_STR(names(late, obj, leaf->off), "[unknown: memfd:kp unit (deleted) unreadable]");

	/* a memfd holding code a JIT wrote (not ELF), mapped executable here */
	fd = memfd_create("kp-unit-jit", MFD_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		static const unsigned char ret[64] = {0xc3};

		CHECK(write(fd, ret, sizeof(ret)) == (ssize_t)sizeof(ret));
		code = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
		close(fd);
		CHECK(code != MAP_FAILED);
		if (code != MAP_FAILED) {
			CHECK(own_mapping(code, &jit));
			CHECK_EQ_STR(jit.m.path, "/memfd:kp-unit-jit (deleted)");
			CHECK_EQ_INT(kp_sym_memfd_get(sym, &jit.m), 0);
			munmap(code, 4096);
		}
	}
out:
	kp_sym_free(sym);
	kp_sym_free(late);
}

/* A continuous recording's symbolizer (kprof --every): naming keeps the
 * object and its file for the unwinder; an object unused for `idle`
 * windows is released, and a mapping of it asked again reopens the file,
 * its own build only: a binary upgraded under the same path while the old
 * process runs still names the old process's code from the old build. */
static void test_windows(void)
{
	struct kp_sym_options o = {.continuous = true};
	struct kp_symbolizer *sym = kp_sym_new(&o);
	char bin[256], cmd[600];
	const struct mark *plain;
	uint32_t *rel = NULL, obj;
	size_t n;
	struct proc p;

	snprintf(bin, sizeof(bin), "%s/inl", tmp);
	if (!build_c("inl", 1) || !build_c("inl2", 2) || !start(bin, &p)) {
		CHECK(!"fixture built and started");
		kp_sym_free(sym);
		return;
	}
	plain = mark(&p, "plain");
	if (!plain) {
		stop(&p);
		kp_sym_free(sym);
		return;
	}
	obj = kp_sym_object_get(sym, &plain->m);
	CHECK_EQ_STR(names(sym, obj, plain->off), "kp_plain_fn");
	CHECK(kp_sym_object_fd(sym, obj) >= 0); /* still the unwinder's after naming */
	/* used in window 0: kept after it and after window 1, released
	 * after window 2, the second window it was not used in */
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT((int)kp_sym_next_window(sym, 2, &rel), 0);
		free(rel);
	}
	CHECK_EQ_INT((int)kp_sym_next_window(sym, 2, &rel), 1);
	CHECK(rel && rel[0] == obj);
	free(rel);
	CHECK(kp_sym_object_fd(sym, obj) < 0);
	/* the path now holds another build; the old process still runs it */
	snprintf(cmd, sizeof(cmd), "%s/inl2", tmp);
	CHECK(rename(cmd, bin) == 0);
	CHECK_EQ_INT((int)kp_sym_object_get(sym, &plain->m), (int)obj);
	CHECK(kp_sym_object_fd(sym, obj) >= 0);
	CHECK_EQ_STR(names(sym, obj, plain->off), "kp_plain_fn");
	/* released again, then asked once the process is gone: the path's
	 * file is another build, never taken for this one */
	for (int i = 0; i < 3; i++) {
		n = kp_sym_next_window(sym, 2, &rel);
		free(rel);
	}
	CHECK_EQ_INT((int)n, 1); /* the third window without it */
	CHECK(kp_sym_object_fd(sym, obj) < 0);
	stop(&p);
	{
		struct kp_mapping m = plain->m;

		kp_sym_object_get(sym, &m);
		CHECK(kp_sym_object_fd(sym, obj) < 0);
		/* what was named stays named (the cache keeps a file's names
		 * across windows); what was not is not named from the other
		 * build */
		CHECK_EQ_STR(names(sym, obj, plain->off), "kp_plain_fn");
		CHECK(strncmp(mark_names(sym, obj, &p, "outer"), "[unknown", 8) == 0);
	}
	kp_sym_free(sym);
}

static void setup(void)
{
	const char *fx = getenv("KP_FIXTURES");

	alarm(300);
	snprintf(src, sizeof(src), "%s/sym", fx ? fx : "tests/fixtures");
	snprintf(tmp, sizeof(tmp), "/tmp/kp-symtest-XXXXXX");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		exit(1);
	}
}

static void cleanup(void)
{
	if (!getenv("KP_KEEP_TMP"))
		kp_test_sh("rm -rf %s", tmp);
}

KP_TEST_MAIN(setup, test_demangle, test_inline_and_deleted, test_index_without_file,
	     test_path_reused, test_memfd, test_separate_debuginfo, test_cxx, test_rust, test_vdso,
	     test_bad_files, test_windows, cleanup)
