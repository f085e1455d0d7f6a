/* The palettes are flamegraph.pl's, value for value, so a kprof graph and a
 * flamegraph.pl graph of the same data look alike; the default colour
 * values reproduce flamegraph.pl's name-seeded Perl rand() exactly. */
#include "flamegraph/palette.h"

#include <stdlib.h>
#include <string.h>

#include "flamegraph/xmlout.h"
#include "util/utf8.h"
#include "util/frame.h"
#include "util/xalloc.h"

static const char *const palette_names[] = {
	[KP_PAL_HOT] = "hot",	    [KP_PAL_MEM] = "mem",	[KP_PAL_IO] = "io",
	[KP_PAL_WAKEUP] = "wakeup", [KP_PAL_CHAIN] = "chain",	[KP_PAL_JAVA] = "java",
	[KP_PAL_JS] = "js",	    [KP_PAL_PERL] = "perl",	[KP_PAL_RED] = "red",
	[KP_PAL_GREEN] = "green",   [KP_PAL_BLUE] = "blue",	[KP_PAL_AQUA] = "aqua",
	[KP_PAL_YELLOW] = "yellow", [KP_PAL_PURPLE] = "purple", [KP_PAL_ORANGE] = "orange",
};

int kp_palette_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(palette_names) / sizeof(palette_names[0]); i++)
		if (strcmp(name, palette_names[i]) == 0)
			return (int)i;
	return -1;
}

static bool is_hex_color(const char *s)
{
	if (s[0] != '#' || strlen(s) != 7)
		return false;
	for (int i = 1; i < 7; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
	}
	return true;
}

bool kp_palette_background(const char *name, enum kp_palette pal, const char **c1, size_t *len1,
			   const char **c2, size_t *len2)
{
	if (!name || !*name) {
		/* flamegraph.pl's defaults by palette */
		if (pal == KP_PAL_MEM)
			name = "green";
		else if (pal == KP_PAL_IO || pal == KP_PAL_WAKEUP || pal == KP_PAL_CHAIN)
			name = "blue";
		else if (pal >= KP_PAL_RED)
			name = "grey";
		else
			name = "yellow";
	}
	*len1 = *len2 = 7;
	if (strcmp(name, "yellow") == 0) {
		*c1 = "#eeeeee";
		*c2 = "#eeeeb0";
	} else if (strcmp(name, "blue") == 0) {
		*c1 = "#eeeeee";
		*c2 = "#e0e0ff";
	} else if (strcmp(name, "green") == 0) {
		*c1 = "#eef2ee";
		*c2 = "#e0ffe0";
	} else if (strcmp(name, "grey") == 0) {
		*c1 = "#f8f8f8";
		*c2 = "#e8e8e8";
	} else if (is_hex_color(name)) {
		*c1 = *c2 = name;
	} else {
		return false;
	}
	return true;
}

/* Code points of s (invalid bytes stand for themselves, as Perl reads
 * them); the caller frees. */
static uint32_t *decode(const char *s, size_t len, size_t *n)
{
	uint32_t *cps = kp_xmalloc((len ? len : 1) * sizeof(*cps));
	size_t i = 0, k = 0;

	while (i < len) {
		size_t used = kp_utf8_next(s + i, len - i, &cps[k]);

		if (cps[k] == 0xfffd && used == 1)
			cps[k] = (unsigned char)s[i];
		i += used;
		k++;
	}
	*n = k;
	return cps;
}

/* flamegraph.pl's namehash(): weights the first three characters after a
 * "module`" prefix. */
static double namehash(const uint32_t *cps, size_t n)
{
	double vector = 0, weight = 1, max = 1;
	unsigned mod = 10;
	size_t start = 0;

	/* s/.(.*?)`// : drop through the first backquote after the first char */
	for (size_t i = 1; i < n; i++) {
		if (cps[i] == '`') {
			start = i + 1;
			break;
		}
	}
	for (size_t i = start; i < n; i++) {
		unsigned v = cps[i] % mod;

		vector += ((double)v / (double)(mod++ - 1)) * weight;
		max += weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
	return 1 - vector / max;
}

/* flamegraph.pl's default: srand(unpack("%32W*", $name)); rand(1). Perl's
 * rand is its own drand48, so this is the same number on every system. */
static double nameseed(const char *s, size_t len)
{
	uint32_t sum = 0;
	size_t i = 0;
	uint64_t x;

	while (i < len) {
		uint32_t cp;
		size_t used = kp_utf8_next(s + i, len - i, &cp);

		if (cp == 0xfffd && used == 1)
			cp = (unsigned char)s[i];
		sum += cp;
		i += used;
	}
	x = ((uint64_t)sum << 16) + 0x330e;
	x = (x * 0x5deece66dULL + 0xb) & ((1ULL << 48) - 1);
	return (double)x / 281474976710656.0;
}

static double next_random(uint64_t *rng)
{
	/* xorshift64*: --random only needs variety */
	uint64_t x = *rng ? *rng : 0x9e3779b97f4a7c15ULL;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*rng = x;
	return (double)((x * 0x2545f4914f6cdd1dULL) >> 11) / 9007199254740992.0;
}

static bool has(const char *s, size_t len, const char *needle)
{
	return memmem(s, len, needle, strlen(needle)) != NULL;
}

static bool ends(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool java_package(const char *s, size_t len)
{
	static const char *const pkgs[] = {"java/", "javax/", "jdk/", "net/",
					   "org/",  "com/",   "io/",  "sun/"};

	if (len && s[0] == 'L') {
		s++;
		len--;
	}
	for (size_t i = 0; i < sizeof(pkgs) / sizeof(pkgs[0]); i++)
		if (len >= strlen(pkgs[i]) && memcmp(s, pkgs[i], strlen(pkgs[i])) == 0)
			return true;
	return false;
}

static bool js_source(const char *s, size_t len)
{
	/* m:/.*\.js: */
	const char *slash = memchr(s, '/', len);

	return slash && has(slash + 1, len - (size_t)(slash + 1 - s), ".js");
}

/* The multi palettes pick a plain palette from the name, as flamegraph.pl */
static enum kp_palette resolve(enum kp_palette pal, const char *s, size_t len, int kind)
{
	switch (pal) {
	case KP_PAL_HOT:
		/* kprof knows what kind of code a frame is: give it a hue */
		if (kind == KP_FRAME_KERNEL)
			return KP_PAL_BLUE;
		if (kind == KP_FRAME_JIT)
			return KP_PAL_GREEN;
		if (kind == KP_FRAME_INLINE)
			return KP_PAL_AQUA;
		return KP_PAL_HOT;
	case KP_PAL_JAVA:
		if (ends(s, len, "_[j]"))
			return KP_PAL_GREEN;
		if (ends(s, len, "_[i]"))
			return KP_PAL_AQUA;
		if (java_package(s, len) || has(s, len, ":::"))
			return KP_PAL_GREEN;
		if (has(s, len, "::"))
			return KP_PAL_YELLOW;
		if (ends(s, len, "_[k]"))
			return KP_PAL_ORANGE;
		return KP_PAL_RED;
	case KP_PAL_PERL:
		if (has(s, len, "::"))
			return KP_PAL_YELLOW;
		if (has(s, len, "Perl") || has(s, len, ".pl"))
			return KP_PAL_GREEN;
		if (ends(s, len, "_[k]"))
			return KP_PAL_ORANGE;
		return KP_PAL_RED;
	case KP_PAL_JS:
		if (ends(s, len, "_[j]"))
			return memchr(s, '/', len) ? KP_PAL_GREEN : KP_PAL_AQUA;
		if (has(s, len, "::"))
			return KP_PAL_YELLOW;
		if (js_source(s, len))
			return KP_PAL_GREEN;
		if (memchr(s, ':', len))
			return KP_PAL_AQUA;
		if (len == 1 && s[0] == ' ')
			return KP_PAL_GREEN;
		if (has(s, len, "_[k]"))
			return KP_PAL_ORANGE;
		return KP_PAL_RED;
	case KP_PAL_WAKEUP:
		return KP_PAL_AQUA;
	case KP_PAL_CHAIN:
		return has(s, len, "_[w]") ? KP_PAL_AQUA : KP_PAL_BLUE;
	default:
		return pal;
	}
}

static struct kp_color rgb(int r, int g, int b)
{
	return (struct kp_color){(uint8_t)r, (uint8_t)g, (uint8_t)b};
}

struct kp_color kp_palette_color(enum kp_palette pal, enum kp_color_mode mode, const char *s,
				 size_t len, int kind, uint64_t *rng)
{
	double v1, v2, v3;

	if (mode == KP_COLOR_HASH) {
		size_t n;
		uint32_t *cps = decode(s, len, &n);

		v1 = namehash(cps, n);
		for (size_t i = 0; i < n / 2; i++) {
			uint32_t t = cps[i];

			cps[i] = cps[n - 1 - i];
			cps[n - 1 - i] = t;
		}
		v2 = v3 = namehash(cps, n);
		free(cps);
	} else if (mode == KP_COLOR_RANDOM) {
		v1 = next_random(rng);
		v2 = next_random(rng);
		v3 = next_random(rng);
	} else {
		v1 = v2 = v3 = nameseed(s, len);
	}
	switch (resolve(pal, s, len, kind)) {
	case KP_PAL_HOT:
		return rgb(205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
	case KP_PAL_MEM:
		return rgb(0, 190 + (int)(50 * v2), (int)(210 * v1));
	case KP_PAL_IO: {
		int x = 80 + (int)(60 * v1);

		return rgb(x, x, 190 + (int)(55 * v2));
	}
	case KP_PAL_RED: {
		int x = 50 + (int)(80 * v1);

		return rgb(200 + (int)(55 * v1), x, x);
	}
	case KP_PAL_GREEN: {
		int x = 50 + (int)(60 * v1);

		return rgb(x, 200 + (int)(55 * v1), x);
	}
	case KP_PAL_BLUE: {
		int x = 80 + (int)(60 * v1);

		return rgb(x, x, 205 + (int)(50 * v1));
	}
	case KP_PAL_YELLOW: {
		int x = 175 + (int)(55 * v1);

		return rgb(x, x, 50 + (int)(20 * v1));
	}
	case KP_PAL_PURPLE: {
		int x = 190 + (int)(65 * v1);

		return rgb(x, 80 + (int)(60 * v1), x);
	}
	case KP_PAL_AQUA:
		return rgb(50 + (int)(60 * v1), 165 + (int)(55 * v1), 165 + (int)(55 * v1));
	case KP_PAL_ORANGE:
		return rgb(190 + (int)(65 * v1), 90 + (int)(65 * v1), 0);
	default:
		return rgb(0, 0, 0);
	}
}
