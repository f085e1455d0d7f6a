/* The user-stack unwinder (unwind/unwind.h) over real samples of this
 * binary: at start-up the target takes four real samples of itself as
 * tests/unit/test_unwind.c does (registers from an assembly stub, a copy
 * of the stack above them), in a known chain (fz_outer -> fz_middle ->
 * fz_inner), inside qsort's comparator (libc's frames, CFI only), at the
 * bottom of a 40-deep recursion and inside a signal handler (the signal
 * frame's own CFI), and registers its executable mappings with a
 * symbolizer as the profiler does. Each input damages one of them (the
 * registers, the stack bytes, where the copy ends, what the mappings say)
 * and unwinds it; the stack and register arrays are heap copies of their
 * exact size, so ASan sees any read past them. Inputs are edits of a
 * sample taken in the same run, not raw snapshots: a raw one would hold
 * another run's addresses (ASLR) and another build's return addresses.
 *
 * Input (13 control bytes, zeros past the end of the input):
 *   byte 0      bits 0-1 the sample; bit 2 also kp_unwind_leaf; bit 3 the
 *               stack patch overwrites at an offset (else it is xor-ed
 *               from byte 0); bit 4 flush the long-lived address space
 *               first (it is also flushed when the input's view of the
 *               mappings differs from its last one's, as the profiler
 *               flushes when a mapping appears); bits 5-7 its pid (one
 *               of 8)
 *   bytes 1-2   where the copy ends (u16; at most the sample's length, so
 *               0xffff is all of it; any byte count: mid-word, mid-frame)
 *   byte 3      max frames (0: 256)
 *   byte 4      mappings without tables, as JIT code (bit i: the mappings
 *               whose index is i mod 8)
 *   byte 5      mappings whose file vanished (an object id with no file)
 *   byte 6      mappings gone (the process exited, its maps half read)
 *   bytes 7-9   registers replaced (bit i: the i-th sampled register, of
 *               17 in perf order)
 *   bytes 10-12 registers left out of the sample's mask
 *   then per replaced register a kind byte (mod 5: xor, add, set, sp +
 *   int16, frame u16 of the undamaged walk + int8: an ip that is a return
 *   address) and 8 value bytes; with byte 0 bit 2, 8 bytes: the frame-pointer
 *   chain's first return address (0: the word at bp + 8 in the copy, as
 *   the kernel's chain has it); with bit 3, a u16 offset; the rest is the
 *   stack patch.
 *
 * Checked beyond no crash: at most max frames, and max exactly when the
 * end is the depth; the first frame is the sampled ip, every other one is
 * code in the damaged view of the mappings, and a sampled ip that is not
 * code is one frame ended as a bad frame; the end is a known reason; the
 * outermost stack pointer is no lower than the sampled one; the frames of
 * a copy cut short are a prefix of those of the whole copy (with the same
 * damage); a fresh address space gives the same walk twice, and the
 * long-lived one, which has seen every input before, the same walk again
 * (libunwind's rule cache, kprof's rows and the objects earlier walks read
 * change nothing); an unwinder whose every step is libunwind's
 * (kp_unwind_set_libunwind_only) the same walk as kprof's rows. Without damage the sample unwinds
 * as at start-up, to its outermost frame. Walks that never end are caught by run-target.sh's
 * -timeout=10. Two walks that disagree are both printed;
 * KP_FUZZ_UNWIND_SHOW=1 prints every input's walk. A replayed input sees
 * other addresses (ASLR) than when it was found, which moves the signal
 * frame in its sample: replay a finding in the run that found it, or run
 * the fuzzer under `setarch -R`.
 *
 * Seeds (corpus/unwind/) are control bytes only, written by
 * tests/fuzz/make-unwind-seeds.sh: each sample whole, cut mid-frame, with
 * its mappings JIT-like or vanished, garbage registers, an ip that is a
 * return address, leaf repair. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#include "fuzz.h"
#include "symbolize/symbolize.h"
#include "unwind/unwind.h"

#if !defined(__x86_64__)
#error "the unwinder reads x86-64 registers only"
#endif

#include "tests/unit/self_sample.h"

#define NREGS	  17
#define MAX_SNAP  32768
#define MAX_DEPTH 256
#define NSAMPLES  4

struct sample {
	uint64_t regs[NREGS]; /* in KP_UNWIND_REGS_MASK's bit order */
	unsigned char *stack;
	size_t len;
	uint64_t ips[MAX_DEPTH];
	struct kp_unwind_result res; /* the undamaged unwind */
};

static struct sample samples[NSAMPLES];
static uint64_t perf_regs[24];
static struct kp_symbolizer *sym;
static struct kp_unwinder *uw;
static struct kp_unwinder *ref; /* libunwind's steps alone */

/* ---- this process's executable mappings ---- */

static struct kp_test_map maps[256];
static size_t nmaps;

static void read_maps(void)
{
	nmaps = kp_test_read_maps(sym, maps, 256);
	if (!nmaps)
		abort();
}

/* What the input says of the mappings (masks by index mod 8). */
struct view {
	uint8_t jit, vanished, gone;
};

/* An object id no file stands behind: the file went away. */
#define VANISHED_OBJ 0x7ffffff0u

/* The view each long-lived address space last unwound with. */
static struct view views[8];

static bool find_map(void *arg, uint64_t addr, struct kp_mapping *out)
{
	const struct view *v = arg;

	for (size_t i = 0; i < nmaps; i++) {
		uint8_t bit = (uint8_t)(1u << (i % 8));

		if (addr < maps[i].start || addr >= maps[i].end)
			continue;
		if (v->gone & bit)
			return false;
		out->start = maps[i].start;
		out->end = maps[i].end;
		out->pgoff = maps[i].pgoff;
		out->obj = maps[i].obj;
		if (out->obj && (v->vanished & bit))
			out->obj = VANISHED_OBJ;
		if (v->jit & bit)
			out->obj = 0;
		return true;
	}
	return false;
}

/* ---- the samples ---- */

/* The stack holds ASan's redzones: copy it as the kernel does, unchecked. */
__attribute__((no_sanitize("address"))) static void
copy_stack(unsigned char *dst, const volatile unsigned char *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

/* Copies the stack above the registers kp_test_capture_regs took in the caller
 * (whose frame, above that sp, this call does not touch). */
__attribute__((noinline)) static void take_sample(struct sample *s)
{
	pthread_attr_t a;
	void *base;
	size_t size, n = 0;
	uint64_t top;

	if (pthread_getattr_np(pthread_self(), &a) != 0)
		abort();
	pthread_attr_getstack(&a, &base, &size);
	pthread_attr_destroy(&a);
	top = (uint64_t)(uintptr_t)base + size;
	s->len = top - perf_regs[KP_PERF_REG_SP];
	if (s->len > MAX_SNAP)
		s->len = MAX_SNAP;
	s->stack = malloc(s->len);
	if (!s->stack)
		abort();
	copy_stack(s->stack, (const unsigned char *)(uintptr_t)perf_regs[KP_PERF_REG_SP], s->len);
	for (int bit = 0; bit < 24; bit++)
		if (KP_UNWIND_REGS_MASK & (1ULL << bit))
			s->regs[n++] = perf_regs[bit];
}

static struct sample *sampling; /* where the signal handler samples to */

__attribute__((noinline)) static void fz_inner(struct sample *s)
{
	kp_test_capture_regs(perf_regs);
	take_sample(s);
	__asm__ volatile("" ::"r"(s) : "memory");
}

__attribute__((noinline)) static void fz_middle(struct sample *s)
{
	fz_inner(s);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void fz_outer(struct sample *s)
{
	fz_middle(s);
	__asm__ volatile("" ::: "memory");
}

static int fz_compare(const void *a, const void *b)
{
	if (sampling) {
		fz_inner(sampling);
		sampling = NULL;
	}
	return memcmp(a, b, sizeof(int));
}

__attribute__((noinline)) static int fz_recurse(struct sample *s, int depth)
{
	if (depth == 0) {
		fz_inner(s);
		return 0;
	}
	return fz_recurse(s, depth - 1) + 1;
}

static void fz_handler(int signo)
{
	(void)signo;
	fz_inner(sampling);
}

static void take_samples(void)
{
	int v[16];
	struct sigaction sa = {.sa_handler = fz_handler};

	fz_outer(&samples[0]);
	for (int i = 0; i < 16; i++)
		v[i] = (i * 7) % 16;
	sampling = &samples[1];
	qsort(v, 16, sizeof(v[0]), fz_compare);
	if (fz_recurse(&samples[2], 40) != 40)
		abort();
	sigemptyset(&sa.sa_mask);
	sampling = &samples[3];
	if (sigaction(SIGUSR1, &sa, NULL) != 0 || raise(SIGUSR1) != 0)
		abort();
	signal(SIGUSR1, SIG_DFL);
}

/* ---- one walk ---- */

struct walk {
	uint64_t ips[MAX_DEPTH];
	struct kp_unwind_result res;
	int ret;
	uint64_t leaf;
};

static void unwind_with(struct kp_unwinder *u, struct kp_unwind_input *in, size_t max, bool fresh,
			bool leaf, uint64_t fp_ret, struct walk *w)
{
	if (fresh)
		kp_unwind_forget(u, in->pid);
	memset(w, 0, sizeof(*w));
	w->ret = kp_unwind_stack(u, in, w->ips, max, &w->res);
	if (leaf)
		w->leaf = kp_unwind_leaf(u, in, fp_ret);
}

static void unwind(struct kp_unwind_input *in, size_t max, bool fresh, bool leaf, uint64_t fp_ret,
		   struct walk *w)
{
	unwind_with(uw, in, max, fresh, leaf, fp_ret, w);
}

static bool same(const struct walk *a, const struct walk *b)
{
	return a->ret == b->ret && a->res.n == b->res.n && a->res.end == b->res.end &&
	       a->res.fp_frames == b->res.fp_frames && a->res.last_sp == b->res.last_sp &&
	       a->leaf == b->leaf && memcmp(a->ips, b->ips, a->res.n * sizeof(a->ips[0])) == 0;
}

static void print_walk(const char *what, const struct walk *w)
{
	fprintf(stderr,
		"%s: ret %d, %zu frames (%zu by frame pointer), end %d, last sp %#llx, leaf %#llx:",
		what, w->ret, w->res.n, w->res.fp_frames, (int)w->res.end,
		(unsigned long long)w->res.last_sp, (unsigned long long)w->leaf);
	for (size_t i = 0; i < w->res.n; i++) {
		fprintf(stderr, " %#llx", (unsigned long long)w->ips[i]);
		/* and where in its file, for addr2line */
		for (size_t k = 0; k < nmaps; k++)
			if (w->ips[i] >= maps[k].start && w->ips[i] < maps[k].end)
				fprintf(stderr, " (map %zu +%#llx)", k,
					(unsigned long long)(w->ips[i] - maps[k].start +
							     maps[k].pgoff));
	}
	fprintf(stderr, "\n");
}

/* Two walks of the same sample must agree; if not, both are shown. */
static void check_same(const struct walk *a, const struct walk *b, const char *what)
{
	if (same(a, b))
		return;
	print_walk("fresh", a);
	print_walk(what, b);
	FUZZ_CHECK(same(a, b));
}

static bool is_code(const struct view *v, uint64_t addr)
{
	struct kp_mapping m;

	return find_map((void *)v, addr, &m);
}

/* What the API promises of any walk. */
static void check_walk(const struct kp_unwind_input *in, const struct view *v, size_t max,
		       uint64_t ip, uint64_t sp, const struct walk *w)
{
	const struct kp_unwind_result *r = &w->res;

	FUZZ_CHECK(r->end < KP_UNWIND_NEND);
	if (w->ret != 0) {
		FUZZ_CHECK(w->ret == -EINVAL && r->end == KP_UNWIND_NO_REGS && r->n == 0);
		FUZZ_CHECK(!(in->regs_mask & (1ULL << KP_PERF_REG_IP)) ||
			   !(in->regs_mask & (1ULL << KP_PERF_REG_SP)));
		FUZZ_CHECK(w->leaf == 0);
		return;
	}
	FUZZ_CHECK(r->n >= 1 && r->n <= max);
	FUZZ_CHECK(r->end != KP_UNWIND_NO_REGS);
	if (r->end == KP_UNWIND_DEPTH)
		FUZZ_CHECK(r->n == max);
	FUZZ_CHECK(w->ips[0] == ip);
	if (!is_code(v, ip))
		FUZZ_CHECK(r->n == 1 && r->end == KP_UNWIND_BAD_FRAME);
	for (size_t i = 1; i < r->n; i++)
		FUZZ_CHECK(is_code(v, w->ips[i]));
	FUZZ_CHECK(r->fp_frames < r->n);
	FUZZ_CHECK(r->last_sp >= sp);
	if (r->n == 1)
		FUZZ_CHECK(r->last_sp == sp);
	if (w->leaf)
		FUZZ_CHECK(is_code(v, w->leaf));
}

/* The unwinder reads unwind tables from the files the symbolizer holds,
 * as the profiler hands them over. */
static int object_fd(void *arg, uint32_t obj)
{
	return kp_sym_object_fd(arg, obj);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	sym = kp_sym_new(NULL);
	if (!sym)
		abort();
	take_samples();
	read_maps();
	uw = kp_unwind_new(&(struct kp_unwind_objects){object_fd, sym, NULL, NULL, NULL, NULL});
	ref = kp_unwind_new(&(struct kp_unwind_objects){object_fd, sym, NULL, NULL, NULL, NULL});
	kp_unwind_set_libunwind_only(ref, true);
	/* each sample unwinds whole, past main to libc's start */
	for (int i = 0; i < NSAMPLES; i++) {
		struct view v = {0, 0, 0};
		struct sample *s = &samples[i];
		struct kp_unwind_input in = {.pid = 1,
					     .regs = s->regs,
					     .regs_mask = KP_UNWIND_REGS_MASK,
					     .stack = s->stack,
					     .stack_len = s->len,
					     .find_map = find_map,
					     .map_arg = &v};

		if (kp_unwind_stack(uw, &in, s->ips, MAX_DEPTH, &s->res) != 0 ||
		    s->res.end != KP_UNWIND_OUTERMOST || s->res.n < 5) {
			fprintf(stderr, "fuzz_unwind: sample %d unwinds to %zu frames, end %d\n", i,
				s->res.n, (int)s->res.end);
			abort();
		}
		kp_unwind_forget(uw, 1);
	}
	return 0;
}

static uint32_t u24(struct fuzz_in *in)
{
	uint32_t v = fuzz_byte(in);

	v |= (uint32_t)fuzz_byte(in) << 8;
	return v | (uint32_t)fuzz_byte(in) << 16;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in fin = {data, size};
	uint8_t mode = fuzz_byte(&fin);
	const struct sample *s = &samples[mode & 3];
	bool leaf = mode & 4, overwrite = mode & 8;
	size_t cut = fuzz_byte(&fin), max;
	struct view v;
	uint32_t repl, drop;
	uint64_t regs[NREGS], mask = 0, ip = 0, sp = 0, fp_ret = 0;
	uint64_t *rcopy;
	unsigned char *full, *stack;
	size_t len, nr = 0;
	struct kp_unwind_input in;
	static struct walk a, b, c, d, e;

	cut |= (size_t)fuzz_byte(&fin) << 8;
	len = cut < s->len ? cut : s->len;
	max = fuzz_byte(&fin);
	if (!max)
		max = MAX_DEPTH;
	v.jit = fuzz_byte(&fin);
	v.vanished = fuzz_byte(&fin);
	v.gone = fuzz_byte(&fin);
	repl = u24(&fin);
	drop = u24(&fin);
	memcpy(regs, s->regs, sizeof(regs));
	for (int i = 0; i < NREGS; i++) {
		uint8_t kind;
		uint64_t x;

		if (!(repl & (1u << i)))
			continue;
		kind = fuzz_byte(&fin);
		x = fuzz_u64(&fin);
		switch (kind % 5) {
		case 0:
			regs[i] ^= x;
			break;
		case 1:
			regs[i] += x;
			break;
		case 2:
			regs[i] = x;
			break;
		case 3:
			regs[i] = s->regs[7] + (uint64_t)(int64_t)(int16_t)x;
			break;
		default: /* a frame of the undamaged walk, +-128 */
			regs[i] = s->ips[(x & 0xffff) % s->res.n] +
				  (uint64_t)(int64_t)(int8_t)(x >> 16);
		}
	}
	if (leaf)
		fp_ret = fuzz_u64(&fin);

	/* the damaged copy, whole, then cut: heap blocks of their exact size */
	full = malloc(s->len);
	if (!full)
		abort();
	memcpy(full, s->stack, s->len);
	if (overwrite) {
		size_t off = fuzz_byte(&fin);

		off |= (size_t)fuzz_byte(&fin) << 8;
		if (off < s->len) {
			size_t n = fin.n < s->len - off ? fin.n : s->len - off;

			if (n)
				memcpy(full + off, fin.p, n);
		}
	} else {
		for (size_t i = 0; i < fin.n && i < s->len; i++)
			full[i] ^= fin.p[i];
	}
	stack = malloc(len ? len : 1);
	if (!stack)
		abort();
	if (len)
		memcpy(stack, full, len);

	/* the registers left in the sample, in order, as perf packs them */
	rcopy = malloc(sizeof(*rcopy) * NREGS);
	if (!rcopy)
		abort();
	for (int bit = 0, i = 0; bit < 24; bit++) {
		if (!(KP_UNWIND_REGS_MASK & (1ULL << bit)))
			continue;
		if (!(drop & (1u << i))) {
			mask |= 1ULL << bit;
			rcopy[nr++] = regs[i];
		}
		i++;
	}
	ip = regs[8];
	sp = regs[7];
	/* the kernel's chain's first return address: the word at bp + 8 */
	if (leaf && !fp_ret && regs[6] >= sp && regs[6] - sp + 16 <= len)
		memcpy(&fp_ret, stack + (regs[6] - sp) + 8, 8);

	in = (struct kp_unwind_input){.pid = 100,
				      .regs = rcopy,
				      .regs_mask = mask,
				      .stack = stack,
				      .stack_len = len,
				      .find_map = find_map,
				      .map_arg = &v};
	/* a fresh address space, twice: the same walk */
	unwind(&in, max, true, leaf, fp_ret, &a);
	check_walk(&in, &v, max, ip, sp, &a);
	if (getenv("KP_FUZZ_UNWIND_SHOW"))
		print_walk("fresh", &a);
	unwind(&in, max, true, leaf, fp_ret, &b);
	check_same(&a, &b, "fresh again");
	unwind_with(ref, &in, max, true, leaf, fp_ret, &e);
	check_same(&a, &e, "libunwind's steps");
	/* the long-lived one, which every input before has used */
	in.pid = 200 + (mode >> 5);
	/* different mappings: the profiler flushes when a mapping appears */
	if ((mode & 16) || memcmp(&views[mode >> 5], &v, sizeof(v)) != 0)
		kp_unwind_flush(uw, in.pid);
	views[mode >> 5] = v;
	unwind(&in, max, false, leaf, fp_ret, &c);
	check_same(&a, &c, "long-lived");
	/* the whole copy: the cut one's frames are its first ones */
	if (len < s->len) {
		in.pid = 100;
		in.stack = full;
		in.stack_len = s->len;
		unwind(&in, max, true, false, 0, &d);
		check_walk(&in, &v, max, ip, sp, &d);
		if (a.ret == 0) {
			FUZZ_CHECK(d.res.n >= a.res.n);
			FUZZ_CHECK(memcmp(a.ips, d.ips, a.res.n * sizeof(a.ips[0])) == 0);
		}
	}
	/* undamaged: as at start-up */
	if (len == s->len && !v.jit && !v.vanished && !v.gone && !repl && !drop &&
	    max == MAX_DEPTH && memcmp(full, s->stack, s->len) == 0) {
		FUZZ_CHECK(a.res.end == KP_UNWIND_OUTERMOST && a.res.n == s->res.n);
		FUZZ_CHECK(memcmp(a.ips, s->ips, s->res.n * sizeof(s->ips[0])) == 0);
	}
	free(rcopy);
	free(stack);
	free(full);
	return 0;
}
