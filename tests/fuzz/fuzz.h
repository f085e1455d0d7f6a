/* Helpers shared by the libFuzzer targets (docs/fuzzing.md). A target
 * checks what the reader promises beyond "no crash" where it can (the same
 * answer however the input is chunked, a round trip that changes nothing)
 * and stops with FUZZ_CHECK when a promise is broken: libFuzzer then saves
 * the input like any crash. */
#ifndef KP_FUZZ_H
#define KP_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FUZZ_CHECK(cond)                                                                      \
	do {                                                                                  \
		if (!(cond)) {                                                                \
			fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                       \
			abort();                                                              \
		}                                                                             \
	} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The value of hex digit c, or -1 (for picking addresses out of text
 * inputs to ask the reader about). */
static inline int fuzz_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
		return (c | 0x20) - 'a' + 10;
	return -1;
}

/* Reads input bytes from the front: control bytes that choose options,
 * chunk sizes and the like. Past the end every byte reads as 0. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_byte(struct fuzz_in *in)
{
	uint8_t b = 0;

	if (in->n) {
		b = in->p[0];
		in->p++;
		in->n--;
	}
	return b;
}

static inline uint64_t fuzz_u64(struct fuzz_in *in)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)fuzz_byte(in) << (8 * i);
	return v;
}

/* Makes a private (0700) temporary directory named like
 * "kprof-fuzz-NAME-XXXXXX" into buf: in /dev/shm when there is one, as a
 * target that writes a file per input spends most of its time creating
 * and removing inodes on a disk file system. */
static inline void fuzz_tmpdir(char *buf, size_t size, const char *name)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	snprintf(buf, size, "%s/kprof-fuzz-%s-XXXXXX", base, name);
	if (!mkdtemp(buf))
		abort();
}

/* A heap copy of data[0..n) with a NUL after it (caller frees). */
static inline char *fuzz_strndup(const uint8_t *data, size_t n)
{
	char *s = malloc(n + 1);

	if (!s)
		abort();
	if (n)
		memcpy(s, data, n);
	s[n] = '\0';
	return s;
}

/* An in-memory output stream; fuzz_out_close returns the bytes written
 * (caller frees) and their length. */
struct fuzz_out {
	FILE *f;
	char *buf;
	size_t len;
};

static inline void fuzz_out_open(struct fuzz_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	if (!o->f)
		abort();
}

static inline char *fuzz_out_close(struct fuzz_out *o, size_t *len)
{
	if (fclose(o->f) != 0)
		abort();
	*len = o->len;
	return o->buf;
}

#endif
