/* The HotSpot reader (runtimes/hotspot.h) on a real JVM's memory
 * (tests/fixtures/java/jdk17.mem.zst, loaded at start-up) damaged as the
 * input says. Input: one control byte (bit 0: damage before the reader
 * is made, so its tables are read damaged; else after, so the code cache,
 * blobs, scopes and names are), then records of 5 bytes: a position in
 * the image's bytes (u32, little-endian, modulo their number) and a byte
 * to xor there. Every lookup must end with a kind, KP_HSF_BAD with a
 * reason, at most KP_HOTSPOT_MAX_SCOPES scopes, and every name be a
 * string or NULL with a reason. */
#include "fuzz.h"
#include "unit/hotspot_image.h"

static struct fixture fx;
static unsigned char **clean;
static size_t total;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (!load(KP_FIXTURES_DIR "/java/jdk17.mem.zst", &fx)) {
		fprintf(stderr, "fuzz_hotspot: no fixture\n");
		abort();
	}
	clean = kp_xcalloc(fx.im.n, sizeof(*clean));
	for (size_t i = 0; i < fx.im.n; i++) {
		total += fx.im.r[i].len;
		clean[i] = kp_xmalloc(fx.im.r[i].len + 1);
		memcpy(clean[i], fx.im.r[i].bytes, fx.im.r[i].len);
	}
	return 0;
}

static void damage(const uint8_t *data, size_t size)
{
	for (size_t k = 0; k + 5 <= size; k += 5) {
		uint32_t at;
		size_t i = 0;

		memcpy(&at, data + k, 4);
		at %= (uint32_t)total;
		while (at >= fx.im.r[i].len)
			at -= (uint32_t)fx.im.r[i++].len;
		fx.im.r[i].bytes[at] ^= data[k + 4];
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kp_hotspot *h;

	if (!size)
		return 0;
	for (size_t i = 0; i < fx.im.n; i++)
		memcpy(fx.im.r[i].bytes, clean[i], fx.im.r[i].len);
	if (data[0] & 1)
		damage(data + 1, size - 1);
	h = kp_hotspot_new(&fx.syms, image_read, &fx.im, NULL);
	if (!h)
		return 0;
	if (!(data[0] & 1)) {
		damage(data + 1, size - 1);
		kp_hotspot_flush(h);
	}
	for (size_t i = 0; i < fx.ne; i++) {
		for (int exact = 0; exact < 2; exact++) {
			const struct kp_hotspot_frame *f =
				kp_hotspot_frame_at(h, fx.e[i].pc + (uint64_t)exact, exact);

			FUZZ_CHECK(f->kind <= KP_HSF_BAD);
			FUZZ_CHECK(f->kind != KP_HSF_BAD || f->why);
			FUZZ_CHECK(f->nscopes <= KP_HOTSPOT_MAX_SCOPES);
			for (size_t s = 0; s < f->nscopes; s++) {
				const char *why = NULL,
					   *name = kp_hotspot_method_name(h, f->methods[s], &why);

				FUZZ_CHECK(name || why);
				FUZZ_CHECK(!name || strlen(name) < 4096);
			}
		}
	}
	kp_hotspot_free(h);
	return 0;
}
