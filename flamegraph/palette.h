/* Frame colours: flamegraph.pl's palettes and its three ways of choosing
 * the random-looking values (a name-seeded generator, the --hash name
 * hash, or truly random). */
#ifndef KP_FLAMEGRAPH_PALETTE_H
#define KP_FLAMEGRAPH_PALETTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum kp_palette {
	KP_PAL_HOT,
	KP_PAL_MEM,
	KP_PAL_IO,
	KP_PAL_WAKEUP,
	KP_PAL_CHAIN,
	KP_PAL_JAVA,
	KP_PAL_JS,
	KP_PAL_PERL,
	KP_PAL_RED,
	KP_PAL_GREEN,
	KP_PAL_BLUE,
	KP_PAL_AQUA,
	KP_PAL_YELLOW,
	KP_PAL_PURPLE,
	KP_PAL_ORANGE,
};

enum kp_color_mode {
	KP_COLOR_NAMESEED, /* default: flamegraph.pl's srand(sum of chars); rand() */
	KP_COLOR_HASH,	   /* --hash: flamegraph.pl's namehash() */
	KP_COLOR_RANDOM,   /* --random */
};

/* Returns the palette called name, or -1. */
int kp_palette_lookup(const char *name);

/* Background gradient of --bgcolors name (NULL: the palette's default).
 * Returns false for an unknown name. c1/c2 point to static strings or into
 * name. */
bool kp_palette_background(const char *name, enum kp_palette pal, const char **c1, size_t *len1,
			   const char **c2, size_t *len2);

struct kp_color {
	uint8_t r, g, b;
};

/* Colour of a frame. annotated is the name as flamegraph.pl sees it, with
 * its _[k]/_[j]/_[i]/_[w] suffix (the multi palettes and the name hashes
 * read it); kind is the frame's enum kp_frame_kind (the hot palette gives
 * kernel, JIT and inline frames their own hue). rng is the state for
 * KP_COLOR_RANDOM. */
struct kp_color kp_palette_color(enum kp_palette pal, enum kp_color_mode mode,
				 const char *annotated, size_t len, int kind, uint64_t *rng);

#endif
