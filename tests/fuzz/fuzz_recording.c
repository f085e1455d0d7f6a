/* The .kprof reader (formats/recording_read.c). Random bytes would all stop
 * at zstd's checksum, so the input is mostly the decompressed body: the
 * target puts the header and a valid zstd frame around it, and the chunks,
 * their lengths and every id in them are what the fuzzer changes. Whatever
 * it makes must be refused with one line naming the file, or read into a
 * profile whose every id is in range (folding it and writing it again touch
 * them all), and written again and read back: the same profile, and the
 * same bytes again (a recording is a fixed point of write . read).
 * Reading and folding take memory linear in the decompressed size (the
 * limits the reader holds, docs/recording-format.md): at most MEM_PER_BYTE
 * bytes a byte of it, MEM_FREE more and what zstd's window takes (as its
 * frame headers ask), counted by the allocator's hooks from before the read
 * to after the fold.
 *
 * Input: byte 0 chooses the mode (bit 0: the rest is the whole file as is,
 * header included, for the header and zstd paths; else the body), byte 1
 * the minor version put in the header; then the data.
 *
 * Seeds (corpus/recording/): the decompressed bodies of the recordings
 * `kprof report -f kprof` makes of four FlameGraph collapsed files
 * (tests/golden/data/collapsed: java all, mirageos tid, dd kernel,
 * cycles-instructions jit) and of a recording of tests/workloads/spin
 * (--tid), behind the control bytes 0 0; and that recording whole behind
 * 1 0. And issue 16's hostile shape, whole behind 1 0
 * (tests/fuzz/make-recording-seeds.py makes them): one location, each
 * sample sharing the previous one's whole stack and adding a location,
 * 5000 samples in one chunk (hostile-chunk: past the 4096 a chunk the
 * writer holds) and 8 chunks of 4096 (hostile-unfold: within every
 * per-chunk limit, 270 MB of stacks for 270 KB). Before the reader held
 * the limits, these took 170 and 810 MB here (3,800 and 2,700 bytes a
 * byte); now 1 and 14 MB. In tests/fuzz/CMakeLists.txt:
 * kp_fuzz_target(recording fuzz_recording.c), with KP_FUZZ_RUNS_recording
 * (docs/fuzzing.md has its time). */
#include <sanitizer/allocator_interface.h>
#include <stdbool.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader */
#include <zstd.h>

#include "profile/folded.h"
#include "profile/fold.h"
#include "formats/recording.h"
#include "formats/zstdio.h"
#include "fuzz.h"
#include "profile/profile.h"

/* Bytes a decompressed byte, and more, that reading and folding may take:
 * the stacks are at most some 32 unfolded frames a byte (the reader's
 * limit), 4 bytes each in the profile and again in the folded table, each
 * table in arrays that double; and the 16M frames any recording may unfold
 * to (UNFOLD_FREE), as location ids and as folded text. */
#define MEM_PER_BYTE 512
#define MEM_FREE     (256u << 20)

/* ---- what the allocator gives while measuring ---- */

static bool measuring;
static long long live, peak;

static void on_malloc(const volatile void *p, size_t size)
{
	(void)p;
	if (measuring && (live += (long long)size) > peak)
		peak = live;
}

static void on_free(const volatile void *p)
{
	if (measuring && p)
		live -= (long long)__sanitizer_get_allocated_size(p);
}

static void measure_start(void)
{
	static bool hooked;

	if (!hooked)
		__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	hooked = true;
	live = peak = 0;
	measuring = true;
}

/* The largest window the zstd frames of file (after the header) ask for:
 * what zstd's streaming decoder allocates, whatever the data. */
static size_t zstd_window(const char *file, size_t len)
{
	size_t pos = KP_RECORDING_HEADER_SIZE, window = 0;

	while (pos < len) {
		ZSTD_frameHeader h;
		size_t size;

		if (ZSTD_getFrameHeader(&h, file + pos, len - pos) != 0)
			break; /* damaged, or cut inside the header */
		if (h.frameType == ZSTD_frame && h.windowSize > window)
			window = (size_t)h.windowSize;
		size = ZSTD_findFrameCompressedSize(file + pos, len - pos);
		if (ZSTD_isError(size))
			break;
		pos += size;
	}
	return window;
}

/* How many bytes the zstd frames of file (after the header) decompress
 * to, up to the first error, as the reader's stream gives them. One
 * decoder for every input: a new one is an mmap under ASan. */
static size_t decompressed_size(const char *file, size_t len)
{
	static ZSTD_DStream *ds;
	static char buf[1 << 16];
	ZSTD_inBuffer in = {file + KP_RECORDING_HEADER_SIZE, len - KP_RECORDING_HEADER_SIZE, 0};
	size_t n = 0;

	if (len <= KP_RECORDING_HEADER_SIZE)
		return 0;
	if (!ds)
		ds = ZSTD_createDStream();
	FUZZ_CHECK(ds != NULL);
	ZSTD_DCtx_reset(ds, ZSTD_reset_session_only);
	for (;;) {
		ZSTD_outBuffer out = {buf, sizeof(buf), 0};
		size_t ret = ZSTD_decompressStream(ds, &out, &in);

		n += out.pos;
		if (ZSTD_isError(ret) || (in.pos == in.size && out.pos < out.size))
			return n;
	}
}

/* The header and a zstd frame around body[0..n) (caller frees). */
static char *wrap(const uint8_t *body, size_t n, uint8_t minor, size_t *len)
{
	struct fuzz_out out;
	const unsigned char header[KP_RECORDING_HEADER_SIZE] = {
		'K', 'P', 'R', 'O', 'F', KP_RECORDING_MAJOR, minor, 0};
	struct kp_zstd_writer *z;
	struct kp_diag d;

	fuzz_out_open(&out);
	FUZZ_CHECK(fwrite(header, 1, sizeof(header), out.f) == sizeof(header));
	z = kp_zstd_writer_new(out.f, 1);
	if (n)
		FUZZ_CHECK(fwrite(body, 1, n, kp_zstd_writer_file(z)) == n);
	FUZZ_CHECK(kp_zstd_writer_finish(z, &d) == 0);
	return fuzz_out_close(&out, len);
}

static struct kp_profile *read_rec(const char *buf, size_t len, int *err, struct kp_diag *d)
{
	struct kp_profile *p = NULL;
	FILE *in;

	memset(d, 0, sizeof(*d));
	if (!len) {
		*err = -1;
		return NULL;
	}
	in = fmemopen((void *)buf, len, "r");
	FUZZ_CHECK(in != NULL);
	*err = kp_recording_read(in, "fuzz.kprof", &p, d);
	fclose(in);
	return p;
}

static char *write_rec(const struct kp_profile *p, size_t *len)
{
	struct fuzz_out out;
	struct kp_diag d;

	fuzz_out_open(&out);
	FUZZ_CHECK(kp_recording_write(p, out.f, &d) == 0);
	return fuzz_out_close(&out, len);
}

/* Every sample folded: each location and frame it names is looked up. */
static void fold_all(const struct kp_profile *p)
{
	for (size_t v = 0; v < kp_profile_nvalues(p); v++) {
		struct kp_folded *f = kp_folded_new();
		struct kp_fold_opts o = {.root_tid = v & 1, .value = v};

		(void)kp_fold_add_profile(f, p, &o);
		kp_folded_free(f);
	}
}

static bool same_profile(const struct kp_profile *a, const struct kp_profile *b)
{
	if (kp_profile_nstrings(a) != kp_profile_nstrings(b) ||
	    kp_profile_nlocations(a) != kp_profile_nlocations(b) ||
	    kp_profile_nfunctions(a) != kp_profile_nfunctions(b) ||
	    kp_profile_nmappings(a) != kp_profile_nmappings(b) ||
	    kp_profile_nsamples(a) != kp_profile_nsamples(b) ||
	    kp_profile_nmeta(a) != kp_profile_nmeta(b) ||
	    kp_profile_nvalues(a) != kp_profile_nvalues(b))
		return false;
	for (size_t i = 0; i < kp_profile_nsamples(a); i++) {
		struct kp_profile_root ra, rb;
		size_t na, nb;
		const kp_count *va, *vb;
		const uint32_t *sa = kp_profile_sample(a, i, &ra, &na, &va),
			       *sb = kp_profile_sample(b, i, &rb, &nb, &vb);

		if (na != nb || (na && memcmp(sa, sb, na * sizeof(*sa))) || ra.comm != rb.comm ||
		    ra.pid != rb.pid || ra.tid != rb.tid)
			return false;
		for (size_t v = 0; v < kp_profile_nvalues(a); v++)
			if (va[v] != vb[v])
				return false;
	}
	for (uint32_t i = 0; i < kp_profile_nlocations(a); i++) {
		const struct kp_loc *la = kp_profile_loc(a, i), *lb = kp_profile_loc(b, i);
		size_t na, nb;
		bool rsa, rsb;
		const struct kp_profile_frame *fa = kp_profile_frames(a, i, &na, &rsa),
					      *fb = kp_profile_frames(b, i, &nb, &rsb);

		if (la->addr != lb->addr || la->obj != lb->obj || la->kind != lb->kind ||
		    !fa != !fb || na != nb || rsa != rsb)
			return false;
		for (size_t j = 0; j < na; j++)
			if (fa[j].function != fb[j].function || fa[j].line != fb[j].line ||
			    fa[j].kind != fb[j].kind)
				return false;
	}
	/* the time axis: the same events */
	{
		size_t na, nb;
		const struct kp_profile_event *ea = kp_profile_events(a, &na),
					      *eb = kp_profile_events(b, &nb);

		if (kp_profile_timed(a) != kp_profile_timed(b) ||
		    kp_profile_time_origin(a) != kp_profile_time_origin(b) ||
		    kp_profile_events_dropped(a) != kp_profile_events_dropped(b) || na != nb ||
		    (na && memcmp(ea, eb, na * sizeof(*ea))))
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t mode = fuzz_byte(&in), minor = fuzz_byte(&in);
	char *file, *again, *third;
	size_t len, alen, tlen, body, window;
	long long allowed;
	struct kp_profile *p, *q;
	struct kp_diag d;
	int err;

	if (mode & 1) {
		file = malloc(in.n ? in.n : 1);
		FUZZ_CHECK(file != NULL);
		if (in.n)
			memcpy(file, in.p, in.n);
		len = in.n;
	} else {
		file = wrap(in.p, in.n, minor, &len);
	}
	/* the body, or as much as the file's frames give */
	body = mode & 1 ? decompressed_size(file, len) : in.n;
	window = zstd_window(file, len);
	/* zstd's window and tables come from the frame header, not the data */
	allowed = MEM_PER_BYTE * (long long)body + MEM_FREE + 2 * (long long)window;
	measure_start();
	p = read_rec(file, len, &err, &d);
	if (!err)
		fold_all(p);
	measuring = false;
	free(file);
	if (peak > allowed)
		fprintf(stderr, "read and fold: %lld bytes for %zu decompressed (window %zu)\n",
			peak, body, window);
	FUZZ_CHECK(peak <= allowed);
	if (err) {
		/* refused: one line that names the file, and no profile */
		FUZZ_CHECK(p == NULL);
		FUZZ_CHECK(len == 0 || strncmp(d.msg, "fuzz.kprof: ", 12) == 0);
		FUZZ_CHECK(strchr(d.msg, '\n') == NULL);
		return 0;
	}
	FUZZ_CHECK(p != NULL);
	again = write_rec(p, &alen);
	q = read_rec(again, alen, &err, &d);
	FUZZ_CHECK(err == 0 && q != NULL);
	FUZZ_CHECK(same_profile(p, q));
	third = write_rec(q, &tlen);
	FUZZ_CHECK(tlen == alen && memcmp(third, again, alen) == 0);
	free(third);
	free(again);
	kp_profile_free(q);
	kp_profile_free(p);
	return 0;
}
