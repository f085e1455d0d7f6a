/* A HotSpot JVM's memory as captured in tests/fixtures/java/ (see
 * tests/unit/test_hotspot.c): libjvm.so's symbols, ranges of bytes by
 * address, and the pcs asked about with what the JVM's perf map named
 * them. Shared by unit/test_hotspot and fuzz/hotspot. */
#ifndef KP_TEST_HOTSPOT_IMAGE_H
#define KP_TEST_HOTSPOT_IMAGE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "formats/zstdio.h"
#include "runtimes/hotspot.h"
#include "util/xalloc.h"

/* The memory image: ranges of bytes by address. */
struct range {
	uint64_t addr;
	size_t len;
	unsigned char *bytes;
};
struct image {
	struct range *r;
	size_t n, cap;
	pid_t pid; /* capture: read from it, and kept */
};

static inline ssize_t image_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct image *im = arg;
	size_t lo = 0, hi = im->n;

	/* the ranges are in address order (as the capture writes them) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->r[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		struct range *r = &im->r[lo - 1];

		if (addr < r->addr + r->len) {
			size_t k = r->addr + r->len - addr < len ? r->addr + r->len - addr : len;

			memcpy(buf, r->bytes + (addr - r->addr), k);
			return (ssize_t)k;
		}
	}
	return -EFAULT;
}

static inline void image_add(struct image *im, uint64_t addr, const void *b, size_t len)
{
	kp_xgrow(&im->r, &im->cap, im->n + 1, sizeof(*im->r));
	im->r[im->n].addr = addr;
	im->r[im->n].len = len;
	im->r[im->n].bytes = kp_xmalloc(len ? len : 1);
	memcpy(im->r[im->n].bytes, b, len);
	im->n++;
}

/* ---- the fixture ---- */

struct expect {
	uint64_t pc;
	int exact, kind;
	char name[512], chain[2048];
};

struct fixture {
	struct kp_hotspot_syms syms;
	struct image im;
	struct expect *e;
	size_t ne, cape;
};

static inline int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static inline bool load(const char *path, struct fixture *fx)
{
	FILE *f = fopen(path, "rb"), *in;
	struct kp_zstd_reader *z;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	memset(fx, 0, sizeof(*fx));
	if (!f)
		return false;
	z = kp_zstd_reader_new(f);
	in = kp_zstd_reader_file(z);
	while ((n = getline(&line, &cap, in)) > 0) {
		unsigned long long a;
		int k, off;

		if (line[n - 1] == '\n')
			line[--n] = 0;
		if (sscanf(line, "sym %d %llx", &k, &a) == 2 && k >= 0 && k < KP_HS_NSYMS) {
			fx->syms.addr[k] = a;
		} else if (sscanf(line, "mem %llx %n", &a, &off) == 1) {
			size_t len = strlen(line + off) / 2;
			unsigned char *b = kp_xmalloc(len + 1);

			for (size_t i = 0; i < len; i++)
				b[i] = (unsigned char)(hexval(line[off + 2 * i]) << 4 |
						       hexval(line[off + 2 * i + 1]));
			image_add(&fx->im, a, b, len);
			free(b);
		} else if (strncmp(line, "pc ", 3) == 0) {
			struct expect e = {0};
			char *tab1 = strchr(line, '\t'),
			     *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;

			if (!tab2 || sscanf(line, "pc %llx %d %d", &a, &e.exact, &e.kind) != 3)
				continue;
			e.pc = a;
			*tab2 = 0;
			snprintf(e.name, sizeof(e.name), "%s", tab1 + 1);
			snprintf(e.chain, sizeof(e.chain), "%s", tab2 + 1);
			kp_xgrow(&fx->e, &fx->cape, fx->ne + 1, sizeof(*fx->e));
			fx->e[fx->ne++] = e;
		}
	}
	free(line);
	kp_zstd_reader_free(z);
	fclose(f);
	return fx->im.n > 0;
}

static inline void image_free(struct fixture *fx)
{
	for (size_t i = 0; i < fx->im.n; i++)
		free(fx->im.r[i].bytes);
	free(fx->im.r);
	free(fx->e);
}

#endif
