/* The HotSpot reader (runtimes/hotspot.h) on memory captured from a real
 * JVM: fixtures/java/jdk17.mem.zst holds libjvm.so's symbol addresses,
 * every byte the reader read of the JVM, and for pcs of its code the
 * names the JVM's own perf map gave them (jcmd PID Compiler.perfmap).
 * Replayed, the reader must find the same dictionary, blobs and names;
 * with the memory damaged at many places, it must end each lookup with a
 * reason or a name, never a crash (under ASan).
 *
 * Captured again (root, a JVM running JavaLive, docs/java.md) by this
 * same program:
 *   java -cp CLASSES JavaLive 0 & sleep 5; jcmd $! Compiler.perfmap
 *   build/tests/test_hotspot --capture $! /tmp/perf-$!.map jdk17.mem
 *   zstd -19 jdk17.mem -o tests/fixtures/java/jdk17.mem.zst */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "formats/zstdio.h"
#include "hotspot_image.h"
#include "kp_test.h"
#include "runtimes/hotspot.h"
#include "util/diag.h"
#include "util/xalloc.h"

static ssize_t capture_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct image *im = arg;
	struct iovec l = {buf, len}, r = {(void *)(uintptr_t)addr, len};
	ssize_t n = process_vm_readv(im->pid, &l, 1, &r, 1, 0);

	if (n > 0)
		image_add(im, addr, buf, (size_t)n);
	return n < 0 ? -errno : n;
}

/* The names of f's scopes, outermost first, joined by '|'. */
static void chain_of(struct kp_hotspot *h, const struct kp_hotspot_frame *f, char *out, size_t size)
{
	size_t o = 0;

	out[0] = 0;
	for (size_t i = f->nscopes; i-- > 0 && o < size;) {
		const char *why = NULL, *name = kp_hotspot_method_name(h, f->methods[i], &why);

		o += (size_t)snprintf(out + o, size - o, "%s%s", o ? "|" : "", name ? name : "?");
	}
}

static const char *fixture_path(void)
{
	static char path[1024];
	const char *dir = getenv("KP_FIXTURES");

	snprintf(path, sizeof(path), "%s/java/jdk17.mem.zst", dir ? dir : "tests/fixtures");
	return path;
}

static void test_replay(void)
{
	struct fixture fx;
	struct kp_diag d = {""};
	struct kp_hotspot *h;
	uint64_t v;
	size_t compiled = 0, inlined = 0, interp = 0;

	CHECK(load(fixture_path(), &fx));
	h = kp_hotspot_new(&fx.syms, image_read, &fx.im, &d);
	CHECK(h != NULL);
	if (!h) {
		fprintf(stderr, "kp_hotspot_new: %s\n", d.msg);
		return;
	}
	/* JDK 17's dictionary as its VM structs say */
	CHECK(kp_hotspot_field(h, "CodeBlob", "_frame_size", &v));
	CHECK(kp_hotspot_type_size(h, "PcDesc", &v) && v == 16);
	CHECK_EQ_INT(kp_hotspot_interp_method_slot(h), -3);
	CHECK(fx.ne >= 5);
	for (size_t i = 0; i < fx.ne; i++) {
		const struct expect *e = &fx.e[i];
		const struct kp_hotspot_frame *f = kp_hotspot_frame_at(h, e->pc, e->exact);
		char chain[2048];

		CHECK_EQ_INT(f->kind, e->kind);
		if (f->kind == KP_HSF_INTERPRETED)
			interp++;
		if (f->kind != KP_HSF_COMPILED || e->kind != KP_HSF_COMPILED)
			continue;
		compiled++;
		chain_of(h, f, chain, sizeof(chain));
		/* the outermost scope is the nmethod's method: the perf map's name */
		CHECK(strncmp(chain, e->name, strlen(e->name)) == 0);
		CHECK_EQ_STR(chain, e->chain);
		if (strstr(chain, "JavaLive.loopKprof(int)|long JavaLive.mixKprof(long, int)"))
			inlined++;
	}
	CHECK(compiled >= 3);
	CHECK(inlined >= 1);
	CHECK(interp >= 1);
	kp_hotspot_free(h);
	for (size_t i = 0; i < fx.im.n; i++)
		free(fx.im.r[i].bytes);
	free(fx.im.r);
	free(fx.e);
}

/* Flips 16 bytes of the image at places the seed picks. */
static void damage(struct image *im, size_t total, uint64_t *seed)
{
	for (int k = 0; k < 16; k++) {
		size_t at, i = 0;

		*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
		at = (size_t)(*seed >> 33) % total;
		while (at >= im->r[i].len)
			at -= im->r[i++].len;
		im->r[i].bytes[at] ^= (unsigned char)(*seed >> 8) | 1;
	}
}

/* Every lookup of the fixture's pcs ends with a kind (KP_HSF_BAD with a
 * reason), every name is a string or NULL with a reason. */
static void lookups(struct kp_hotspot *h, const struct fixture *fx)
{
	for (size_t i = 0; i < fx->ne; i++) {
		for (int exact = 0; exact < 2; exact++) {
			const struct kp_hotspot_frame *f =
				kp_hotspot_frame_at(h, fx->e[i].pc + (uint64_t)exact, exact);
			const char *why = NULL;

			CHECK(f->kind != KP_HSF_BAD || f->why);
			for (size_t s = 0; s < f->nscopes; s++)
				CHECK(kp_hotspot_method_name(h, f->methods[s], &why) || why);
		}
	}
}

/* The same memory damaged: the tables (a reader made after the damage,
 * or none), then the code cache, blobs, scopes and names (a reader made
 * before it, its caches flushed): no crash, no read out of bounds. */
static void test_damaged(void)
{
	struct fixture fx;
	unsigned char **clean;
	size_t total = 0, made = 0;
	uint64_t seed = 31;

	if (!load(fixture_path(), &fx))
		return;
	clean = kp_xcalloc(fx.im.n, sizeof(*clean));
	for (size_t i = 0; i < fx.im.n; i++) {
		total += fx.im.r[i].len;
		clean[i] = kp_xmalloc(fx.im.r[i].len + 1);
		memcpy(clean[i], fx.im.r[i].bytes, fx.im.r[i].len);
	}
	for (int round = 0; round < 400; round++) {
		struct kp_hotspot *h = NULL;

		for (size_t i = 0; i < fx.im.n; i++)
			memcpy(fx.im.r[i].bytes, clean[i], fx.im.r[i].len);
		if (round % 4 == 0) {
			damage(&fx.im, total, &seed);
			h = kp_hotspot_new(&fx.syms, image_read, &fx.im, NULL);
			made += h != NULL;
		} else if ((h = kp_hotspot_new(&fx.syms, image_read, &fx.im, NULL))) {
			for (int k = 0; k < 8; k++)
				damage(&fx.im, total, &seed);
			kp_hotspot_flush(h);
		}
		if (h)
			lookups(h, &fx);
		kp_hotspot_free(h);
	}
	printf("damaged: %zu of 100 images damaged before the reader still had a dictionary\n",
	       made);
	for (size_t i = 0; i < fx.im.n; i++) {
		free(fx.im.r[i].bytes);
		free(clean[i]);
	}
	free(clean);
	free(fx.im.r);
	free(fx.e);
}

/* A read that counts. */
static size_t nreads;
static ssize_t counting_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	nreads++;
	return image_read(arg, addr, buf, len);
}

/* Writes v at addr of the image (which holds it). */
static bool poke32(struct image *im, uint64_t addr, int32_t v)
{
	for (size_t i = 0; i < im->n; i++) {
		if (addr >= im->r[i].addr && addr + 4 <= im->r[i].addr + im->r[i].len) {
			memcpy(im->r[i].bytes + (addr - im->r[i].addr), &v, 4);
			return true;
		}
	}
	return false;
}

/* fuzz/hotspot found it: the code cache's heap array claiming 2^31 heaps,
 * none of which checked out, was read heap after heap. A JVM has a few:
 * the reads stay bounded. */
static void test_many_heaps(void)
{
	struct fixture fx;
	struct kp_hotspot *h;
	uint64_t heaps, arr, len_off;

	if (!load(fixture_path(), &fx))
		return;
	h = kp_hotspot_new(&fx.syms, image_read, &fx.im, NULL);
	CHECK(h && kp_hotspot_field(h, "CodeCache", "_heaps", &heaps) &&
	      kp_hotspot_field(h, "GrowableArrayBase", "_len", &len_off));
	kp_hotspot_free(h);
	CHECK(image_read(&fx.im, heaps, &arr, 8) == 8);
	CHECK(poke32(&fx.im, arr + len_off, 0x7fffffff));
	nreads = 0;
	h = kp_hotspot_new(&fx.syms, counting_read, &fx.im, NULL);
	CHECK(h != NULL); /* its real heaps are the first ones */
	printf("many heaps: %zu reads\n", nreads);
	CHECK(nreads < 20000);
	kp_hotspot_free(h);
	image_free(&fx);
}

/* ---- capture ---- */

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Writes the image's ranges merged, in address order. */
static void write_image(FILE *out, struct image *im)
{
	qsort(im->r, im->n, sizeof(*im->r), cmp_range);
	for (size_t i = 0; i < im->n;) {
		uint64_t lo = im->r[i].addr, hi = lo + im->r[i].len;
		size_t j = i;
		unsigned char *b;

		while (j < im->n && im->r[j].addr <= hi) {
			if (im->r[j].addr + im->r[j].len > hi)
				hi = im->r[j].addr + im->r[j].len;
			j++;
		}
		b = kp_xcalloc(1, hi - lo);
		for (size_t k = i; k < j; k++)
			memcpy(b + (im->r[k].addr - lo), im->r[k].bytes, im->r[k].len);
		fprintf(out, "mem %llx ", (unsigned long long)lo);
		for (uint64_t k = 0; k < hi - lo; k++)
			fprintf(out, "%02x", b[k]);
		fputc('\n', out);
		free(b);
		i = j;
	}
}

static int capture(pid_t pid, const char *perfmap, const char *outpath)
{
	char path[4200], line[4096], lib[4096] = "";
	unsigned long long start = 0, pgoff = 0;
	struct kp_hotspot_syms syms;
	struct kp_diag d = {""};
	struct image im = {.pid = pid};
	struct kp_hotspot *h;
	FILE *maps, *pm, *out;
	int fd, npcs = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(maps = fopen(path, "r")))
		return perror(path), 1;
	while (fgets(line, sizeof(line), maps)) {
		char perms[8], file[4096];

		if (sscanf(line, "%llx-%*x %7s %llx %*s %*s %4095s", &start, perms, &pgoff, file) ==
			    4 &&
		    strcmp(perms, "r-xp") == 0 && strstr(file, "/libjvm.so")) {
			snprintf(lib, sizeof(lib), "%s", file);
			break;
		}
	}
	fclose(maps);
	if (snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, lib) >= (int)sizeof(path) ||
	    !lib[0] || (fd = open(path, O_RDONLY)) < 0)
		return fprintf(stderr, "no libjvm.so in pid %d\n", (int)pid), 1;
	if (kp_hotspot_symbols(fd, start, pgoff, &syms, &d) < 0 ||
	    !(h = kp_hotspot_new(&syms, capture_read, &im, &d)))
		return fprintf(stderr, "%s\n", d.msg), 1;
	if (!(pm = fopen(perfmap, "r")) || !(out = fopen(outpath, "w")))
		return perror(perfmap), 1;
	for (int s = 0; s < KP_HS_NSYMS; s++)
		fprintf(out, "sym %d %llx\n", s, (unsigned long long)syms.addr[s]);
	/* the program's methods and the interpreter, each at the middle of
	 * its code (the sampled pc's rule) */
	while (fgets(line, sizeof(line), pm) && npcs < 64) {
		unsigned long long a, sz;
		int off;
		char chain[2048];
		const struct kp_hotspot_frame *f;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%llx %llx %n", &a, &sz, &off) != 2 ||
		    (!strstr(line + off, "JavaLive.") && strcmp(line + off, "Interpreter") != 0))
			continue;
		f = kp_hotspot_frame_at(h, a + sz / 2, true);
		chain_of(h, f, chain, sizeof(chain));
		fprintf(out, "pc %llx 1 %d\t%s\t%s\n", a + sz / 2, f->kind, line + off, chain);
		npcs++;
	}
	write_image(out, &im);
	fclose(out);
	fclose(pm);
	kp_hotspot_free(h);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "--capture") == 0)
		return capture((pid_t)atoi(argv[2]), argv[3], argv[4]);
	test_replay();
	test_damaged();
	test_many_heaps();
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
