/* The .kprof reader (flamegraph/recording.c). Random bytes would all stop
 * at zstd's checksum, so the input is mostly the decompressed body: the
 * target puts the header and a valid zstd frame around it, and the chunks,
 * their lengths and every id in them are what the fuzzer changes. Whatever
 * it makes must be refused with one line naming the file, or read into a
 * profile whose every id is in range (folding it and writing it again touch
 * them all), and written again and read back: the same profile, and the
 * same bytes again (a recording is a fixed point of write . read).
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
 * 1 0. In tests/fuzz/CMakeLists.txt: kp_fuzz_target(recording
 * fuzz_recording.c), with KP_FUZZ_RUNS_recording 8000 (about 5 s: some
 * 1500 inputs a second under ASan+UBSan; 300 000 found nothing). */
#include <stdbool.h>

#include "flamegraph/folded.h"
#include "flamegraph/profile_fold.h"
#include "flamegraph/recording.h"
#include "flamegraph/zstdio.h"
#include "fuzz.h"
#include "profile/profile.h"

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

		(void)kp_folded_add_profile(f, p, &o);
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
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t mode = fuzz_byte(&in), minor = fuzz_byte(&in);
	char *file, *again, *third;
	size_t len, alen, tlen;
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
	p = read_rec(file, len, &err, &d);
	free(file);
	if (err) {
		/* refused: one line that names the file, and no profile */
		FUZZ_CHECK(p == NULL);
		FUZZ_CHECK(len == 0 || strncmp(d.msg, "fuzz.kprof: ", 12) == 0);
		FUZZ_CHECK(strchr(d.msg, '\n') == NULL);
		return 0;
	}
	FUZZ_CHECK(p != NULL);
	fold_all(p);
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
