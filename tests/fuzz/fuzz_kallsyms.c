/* kallsyms (symbolize/kallsyms.h) read from a file, as kprof reads
 * /proc/kallsyms or its cached copy: the input is written to a private
 * temporary file and loaded twice, whole and for a list of wanted
 * addresses (the "address hint": a sparse table). For every wanted
 * address the sparse table must answer as the whole one does (name,
 * module), and the bytes handed to the tap while reading (what the cached
 * copy is written from and checksummed with) must be the input.
 *
 * Input: byte 0 picks how it is read (bit 0 through the descriptor
 * instead of the path, bits 1-3 the read buffer size: the default or a
 * few bytes, so lines split across reads and over-long lines are hit,
 * bit 4 also tap every byte read), then the text. */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "symbolize/kallsyms.h"

#define MAX_WANTED 64

static char dir[64], path[96];
static int fd = -1;

/* What the tap was given, to compare with the input. */
struct tapped {
	const uint8_t *want;
	size_t len, seen;
	bool differs;
};

static void tap(void *arg, const char *buf, size_t n)
{
	struct tapped *t = arg;

	if (t->seen + n > t->len || memcmp(t->want + t->seen, buf, n) != 0)
		t->differs = true;
	t->seen += n;
}
static const size_t read_sizes[8] = {0, 8, 16, 31, 64, 100, 255, 4096};

static void cleanup(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_tmpdir(dir, sizeof(dir), "kallsyms");
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	atexit(cleanup);
	return 0;
}

static void want(uint64_t *w, size_t *n, uint64_t v)
{
	if (*n < MAX_WANTED)
		w[(*n)++] = v;
}

static struct kp_kallsyms *load(uint8_t how, const uint64_t *addrs, size_t n, const uint8_t *text,
				size_t len)
{
	struct tapped t = {.want = text, .len = len};
	struct kp_kallsyms_opts o = {.read_size = read_sizes[(how >> 1) & 7],
				     .from_fd = how & 1,
				     .fd = fd,
				     .tap = how & 16 ? tap : NULL,
				     .tap_arg = &t};
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;

	if (lseek(fd, 0, SEEK_SET) != 0)
		abort();
	FUZZ_CHECK(kp_kallsyms_load_opts(path, addrs, n, &o, &ks, &d) == 0 && ks);
	if (o.tap)
		FUZZ_CHECK(!t.differs && t.seen == len);
	return ks;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t how = fuzz_byte(&in);
	const char *text = (const char *)in.p, *end = text + in.n;
	struct kp_kallsyms *full, *sparse;
	uint64_t w[MAX_WANTED];
	size_t nw = 0;

	if (ftruncate(fd, 0) != 0 || (in.n && pwrite(fd, in.p, in.n, 0) != (ssize_t)in.n))
		abort();
	/* the addresses the lines name, and their neighbours */
	for (const char *p = text; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		uint64_t v = 0;
		int digits = 0;

		while (p + digits < end && digits < 16 && fuzz_hexval(p[digits]) >= 0)
			v = v << 4 | (uint64_t)fuzz_hexval(p[digits++]);
		if (digits) {
			want(w, &nw, v);
			want(w, &nw, v - 1);
			want(w, &nw, v + 1);
			want(w, &nw, v + KP_KALLSYMS_MAX_REACH);
		}
		p = nl ? nl + 1 : end;
	}
	want(w, &nw, 0);
	want(w, &nw, UINT64_MAX);

	full = load(how, NULL, 0, in.p, in.n);
	sparse = load(how, w, nw, in.p, in.n);
	FUZZ_CHECK(kp_kallsyms_bad_lines(full) == kp_kallsyms_bad_lines(sparse));
	FUZZ_CHECK(kp_kallsyms_restricted(full) == kp_kallsyms_restricted(sparse));
	FUZZ_CHECK(kp_kallsyms_count(sparse) <= kp_kallsyms_count(full));
	for (size_t i = 0; i < nw; i++) {
		const char *mf = NULL, *ms = NULL;
		const char *nf = kp_kallsyms_lookup(full, w[i], &mf);
		const char *ns = kp_kallsyms_lookup(sparse, w[i], &ms);

		FUZZ_CHECK(kp_kallsyms_covers(full, w[i]) && kp_kallsyms_covers(sparse, w[i]));
		FUZZ_CHECK(!nf == !ns && (!nf || strcmp(nf, ns) == 0));
		FUZZ_CHECK(!mf == !ms && (!mf || strcmp(mf, ms) == 0));
		FUZZ_CHECK(kp_kallsyms_in_core_text(full, w[i]) ==
			   kp_kallsyms_in_core_text(sparse, w[i]));
	}
	kp_kallsyms_free(full);
	kp_kallsyms_free(sparse);
	return 0;
}
