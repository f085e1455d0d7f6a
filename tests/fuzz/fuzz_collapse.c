/* `kprof collapse`: perf script text through kp_collapse_feed/end_input/
 * write. The text is fed in chunks cut where the input says, so lines and
 * CRLFs split across chunks are reassembled, and the result must be what
 * one chunk per input gives: the same folded bytes and the same counters.
 *
 * Input: byte 0 picks the options (bit 0 --pid, 1 --tid, 2 --kernel,
 * 3 --jit, 4 --addrs, 5 --srcline, 6-7 the event filter), byte 1 says how
 * many chunk sizes follow (1-8, and bit 7: feed the text as two inputs),
 * then the chunk sizes (bytes, 0 is an empty feed), then the text. */
#include "formats/collapse.h"
#include "fuzz.h"

#include <stdbool.h>

static const char *const filters[] = {NULL, "", "cycles", "cpu-clock"};

struct result {
	char *out;
	size_t len;
	struct kp_collapse_stats st;
	char event[300], other[300];
};

static void run(const struct kp_collapse_opts *o, const uint8_t *text, size_t n,
		const uint8_t *cuts, size_t ncuts, int inputs, struct result *r)
{
	struct kp_collapse *c = kp_collapse_new(o);
	struct fuzz_out out;
	struct kp_diag d;

	for (int k = 0; k < inputs; k++) {
		size_t pos = 0, i = 0;

		while (cuts && pos < n) {
			size_t len = cuts[i++ % ncuts];

			if (len == 0) {
				kp_collapse_feed(c, (const char *)text + pos, 0);
				len = 1;
			}
			if (len > n - pos)
				len = n - pos;
			kp_collapse_feed(c, (const char *)text + pos, len);
			pos += len;
		}
		if (!cuts)
			kp_collapse_feed(c, (const char *)text, n);
		kp_collapse_end_input(c);
	}
	fuzz_out_open(&out);
	FUZZ_CHECK(kp_collapse_write(c, out.f, &d) == 0);
	r->out = fuzz_out_close(&out, &r->len);
	r->st = *kp_collapse_stats(c);
	snprintf(r->event, sizeof(r->event), "%s", r->st.event ? r->st.event : "(none)");
	snprintf(r->other, sizeof(r->other), "%s",
		 r->st.other_event ? r->st.other_event : "(none)");
	r->st.event = r->st.other_event = NULL;
	kp_collapse_free(c);
}

static bool same_stats(const struct kp_collapse_stats *a, const struct kp_collapse_stats *b)
{
	return a->lines == b->lines && a->samples == b->samples && a->filtered == b->filtered &&
	       a->bad_lines == b->bad_lines && a->first_bad_input == b->first_bad_input &&
	       a->first_bad_line == b->first_bad_line && a->unterminated == b->unterminated &&
	       a->long_lines == b->long_lines && a->event_defaulted == b->event_defaulted;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	uint8_t optbits = fuzz_byte(&in), cutbits = fuzz_byte(&in);
	struct kp_collapse_opts o = {
		.pid = optbits & 1,
		.tid = optbits & 2,
		.kernel = optbits & 4,
		.jit = optbits & 8,
		.addrs = optbits & 16,
		.srcline = optbits & 32,
		.event_filter = filters[optbits >> 6],
	};
	size_t ncuts = (cutbits & 7) + 1;
	int inputs = cutbits & 0x80 ? 2 : 1;
	uint8_t cuts[8];
	struct result whole, chunked;

	for (size_t i = 0; i < ncuts; i++)
		cuts[i] = fuzz_byte(&in);
	run(&o, in.p, in.n, NULL, 0, inputs, &whole);
	run(&o, in.p, in.n, cuts, ncuts, inputs, &chunked);
	FUZZ_CHECK(whole.len == chunked.len && memcmp(whole.out, chunked.out, whole.len) == 0);
	FUZZ_CHECK(same_stats(&whole.st, &chunked.st));
	FUZZ_CHECK(strcmp(whole.event, chunked.event) == 0);
	FUZZ_CHECK(strcmp(whole.other, chunked.other) == 0);
	free(whole.out);
	free(chunked.out);
	return 0;
}
