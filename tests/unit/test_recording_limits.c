/* The .kprof reader holds a recording to the writer's limits, so that the
 * memory it takes stays linear in the recording's decompressed size
 * (docs/recording-format.md, "Limits"): hand-made recordings that pass a
 * limit are refused with one line naming the file, the chunk and where it
 * is, in bounded memory and time. Among them the recording of issue 16 (one
 * location, 30,000 samples each sharing the previous one's whole stack:
 * 63 KB that took 3.5 GB), and the same stacks within the per-chunk limits,
 * refused for what they unfold to. Profiles at every limit the writer
 * holds read back identically, a deep one by sending part of its stacks
 * whole, and one no recording can hold is refused by the writer. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "formats/load.h"
#include "formats/recording.h"
#include "formats/zstdio.h"
#include "kp_test.h"
#include "profile/profile.h"
#include "util/xalloc.h"

static char tmpdir[] = "/tmp/kp_test_recording_limits.XXXXXX";
static char path[sizeof(tmpdir) + 16];

/* ---- protobuf by hand: the bodies the writer never makes ---- */

struct pb {
	uint8_t *p;
	size_t n, cap;
};

static void pb_raw(struct pb *b, const void *data, size_t n)
{
	kp_xgrow(&b->p, &b->cap, b->n + n + 1, 1);
	if (n)
		memcpy(b->p + b->n, data, n);
	b->n += n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t c[10];
	size_t n = 0;

	do {
		c[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		c[n++] |= v ? 0x80 : 0;
	} while (v);
	pb_raw(b, c, n);
}

/* Field f, length-delimited: data[0..n). */
static void pb_bytes(struct pb *b, unsigned f, const void *data, size_t n)
{
	pb_varint(b, f << 3 | 2);
	pb_varint(b, n);
	pb_raw(b, data, n);
}

/* Field f, a varint. */
static void pb_uint(struct pb *b, unsigned f, uint64_t v)
{
	pb_varint(b, f << 3);
	pb_varint(b, v);
}

/* Field f, packed: v[0..n), or n times fill when v is NULL. */
static void pb_packed(struct pb *b, unsigned f, const uint64_t *v, size_t n, uint64_t fill)
{
	struct pb col = {0};

	for (size_t i = 0; i < n; i++)
		pb_varint(&col, v ? v[i] : fill);
	pb_bytes(b, f, col.p, col.n);
	free(col.p);
}

/* msg as a chunk of kind (Chunk's field) at the end of body; msg freed. */
static void pb_chunk(struct pb *body, unsigned kind, struct pb *msg)
{
	struct pb c = {0};

	pb_bytes(&c, kind, msg->p, msg->n);
	pb_bytes(body, 1, c.p, c.n);
	free(c.p);
	free(msg->p);
	*msg = (struct pb){0};
}

enum {
	STRINGS = 1,
	VALUE_TYPES = 2,
	FUNCTIONS = 3,
	LOCATIONS = 4,
	MAPPINGS = 5,
	SAMPLES = 6,
	METADATA = 7,
	END = 15
};

/* The strings "samples" and "count" and the one value type they name. */
static void pb_value_type(struct pb *body)
{
	struct pb m = {0}, vt = {0};

	pb_bytes(&m, 1, "samples", 7);
	pb_bytes(&m, 1, "count", 5);
	pb_chunk(body, STRINGS, &m);
	pb_uint(&vt, 1, 1);
	pb_uint(&vt, 2, 2);
	pb_bytes(&m, 1, vt.p, vt.n);
	free(vt.p);
	pb_chunk(body, VALUE_TYPES, &m);
}

/* n locations never named (kind unknown, addresses 0, 1, ...). */
static void pb_locations(struct pb *body, size_t n)
{
	struct pb m = {0};

	pb_packed(&m, 1, NULL, n, 0);
	pb_packed(&m, 2, NULL, n, 0);
	pb_packed(&m, 3, NULL, n, 2); /* +1 each, zigzag; the first +1 too */
	pb_packed(&m, 4, NULL, n, 0);
	pb_packed(&m, 5, NULL, n, 0);
	pb_chunk(body, LOCATIONS, &m);
}

/* The hostile shape: n samples, at most per a chunk; in chunk c, made of
 * location c, each sample shares the whole stack of the one before it and
 * adds one location: stacks of 1, 2, ... per locations, n * n / 2 in all
 * for some 8 bytes a sample. */
static struct pb hostile_body(size_t n, size_t per)
{
	struct pb body = {0};
	size_t nchunks = (n + per - 1) / per;
	uint64_t *col = kp_xmalloc(per * sizeof(*col));

	pb_value_type(&body);
	pb_locations(&body, nchunks);
	for (size_t c = 0; c < nchunks; c++) {
		size_t k = n - c * per < per ? n - c * per : per;
		struct pb m = {0};

		pb_packed(&m, 1, NULL, k, 0);
		pb_packed(&m, 2, NULL, k, 0);
		pb_packed(&m, 3, NULL, k, 0);
		for (size_t i = 0; i < k; i++)
			col[i] = i ? 1 : 0;
		pb_packed(&m, 4, col, k, 0); /* back */
		for (size_t i = 0; i < k; i++)
			col[i] = i;
		pb_packed(&m, 5, col, k, 0); /* shared: all of the one before */
		pb_packed(&m, 6, NULL, k, 1);
		for (size_t i = 0; i < k; i++)
			col[i] = i ? 0 : 2 * c; /* location c, then +0 (zigzag) */
		pb_packed(&m, 7, col, k, 0);
		pb_packed(&m, 8, NULL, k, 1);
		pb_chunk(&body, SAMPLES, &m);
	}
	{
		struct pb m = {0};

		pb_uint(&m, 1, 2);
		pb_uint(&m, 2, 1);
		pb_uint(&m, 4, nchunks);
		pb_uint(&m, 7, n);
		pb_chunk(&body, END, &m);
	}
	free(col);
	return body;
}

/* A recording of the given decompressed body. */
static char *wrap(const struct pb *body, size_t *len)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	unsigned char header[KP_RECORDING_HEADER_SIZE] = {
		'K', 'P', 'R', 'O', 'F', KP_RECORDING_MAJOR, 0};
	struct kp_zstd_writer *z;
	struct kp_diag d;

	fwrite(header, 1, sizeof(header), out);
	z = kp_zstd_writer_new(out, 3);
	fwrite(body->p, 1, body->n, kp_zstd_writer_file(z));
	CHECK_EQ_INT(kp_zstd_writer_finish(z, &d), 0);
	fclose(out);
	return buf;
}

static void put_file(const void *buf, size_t len)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK_EQ_INT(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* ---- loading in a child: its memory and time ---- */

struct outcome {
	int status;	/* the child's wait status */
	bool refused;	/* kp_load_profile failed */
	char msg[1024]; /* its message */
	long peak_kb;	/* the load's peak RSS above what the child had before */
	double seconds; /* the load's */
};

static long status_kb(const char *field)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, strlen(field)) == 0)
			kb = atol(line + strlen(field));
	fclose(f);
	return kb;
}

/* Loads path, as `kprof report` does, in a child (that a load gone wrong
 * cannot take the test with it: 60 s at most). The peak is VmHWM, reset
 * (clear_refs 5) just before: under ASan it includes its quarantine. */
static void load_in_child(struct outcome *o)
{
	int fd[2];
	pid_t pid;
	ssize_t n;
	size_t got = 0;

	memset(o, 0, sizeof(*o));
	CHECK(pipe(fd) == 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		struct kp_profile *p = NULL;
		struct kp_diag d = {{0}};
		struct timespec t0, t1;
		FILE *cr = fopen("/proc/self/clear_refs", "w");
		long base;
		int err;
		char out[sizeof(o->msg) + 64];

		close(fd[0]);
		alarm(60);
		if (cr) {
			fputs("5", cr);
			fclose(cr);
		}
		base = status_kb("VmRSS:");
		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = kp_load_profile(path, NULL, &p, NULL, &d);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		snprintf(out, sizeof(out), "%d %ld %.3f %.200s", err != 0,
			 status_kb("VmHWM:") - base,
			 (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
			 d.msg);
		if (write(fd[1], out, strlen(out)) < 0)
			_exit(3);
		kp_profile_free(p);
		_exit(0);
	}
	close(fd[1]);
	{
		char buf[sizeof(o->msg) + 64];
		int refused = 0, off = 0;

		while (got < sizeof(buf) - 1 &&
		       (n = read(fd[0], buf + got, sizeof(buf) - 1 - got)) > 0)
			got += (size_t)n;
		buf[got] = 0;
		if (sscanf(buf, "%d %ld %lf %n", &refused, &o->peak_kb, &o->seconds, &off) >= 3) {
			o->refused = refused;
			snprintf(o->msg, sizeof(o->msg), "%s", buf + off);
		}
	}
	close(fd[0]);
	CHECK(waitpid(pid, &o->status, 0) == pid);
	CHECK(WIFEXITED(o->status) && WEXITSTATUS(o->status) == 0);
}

/* The message is one line that names the file. */
static bool one_line(const char *msg)
{
	return !strchr(msg, '\n') && strncmp(msg, path, strlen(path)) == 0 &&
	       msg[strlen(path)] == ':';
}

/* ---- the hostile recordings ---- */

static void refused_in_bounded_memory(size_t n, size_t per, const char *want, long max_kb)
{
	struct pb body = hostile_body(n, per);
	size_t len;
	char *rec = wrap(&body, &len);
	struct outcome o;

	put_file(rec, len);
	load_in_child(&o);
	printf("%zu samples, %zu a chunk: %zu bytes (%zu decompressed): refused %d in %.3f s, "
	       "peak %ld KB: %s\n",
	       n, per, len, body.n, o.refused, o.seconds, o.peak_kb, o.msg);
	CHECK(o.refused);
	CHECK(one_line(o.msg));
	if (!strstr(o.msg, want))
		fprintf(stderr, "expected \"%s\" in: %s\n", want, o.msg);
	CHECK(strstr(o.msg, want) != NULL);
	CHECK(strstr(o.msg, "at decompressed byte") != NULL);
#ifdef __SANITIZE_ADDRESS__
	max_kb *= 4; /* ASan's redzones and quarantine: 236 MB where 71 MB without */
#endif
	CHECK(o.peak_kb < max_kb);
	free(rec);
	free(body.p);
}

/* Issue 16's recording: 30,000 samples in one chunk. */
static void test_issue_recording(void)
{
	refused_in_bounded_memory(30000, 30000,
				  "chunk 3 (samples, at decompressed byte 49): 30000 entries "
				  "(at most 4096 a chunk)",
				  32 << 10);
}

/* The same stacks in chunks of 4096 samples (8 of them: 32768 samples
 * whose stacks would hold 68 million locations, 270 MB; 270 KB of data):
 * within every per-chunk limit, refused for what they unfold to, in the
 * first chunk, after some 2^24 frames. */
static void test_unfold_limit(void)
{
	refused_in_bounded_memory(8 * 4096, 4096, "the stacks so far unfold to", 160 << 10);
}

/* ---- every other limit, each passed once ---- */

static void refused_body(struct pb *body, const char *want)
{
	size_t len;
	char *rec = wrap(body, &len);
	struct kp_profile *p = NULL;
	struct kp_diag d = {{0}};
	int err;

	put_file(rec, len);
	err = kp_load_profile(path, NULL, &p, NULL, &d);
	CHECK(err < 0);
	CHECK(p == NULL);
	CHECK(one_line(d.msg));
	if (!strstr(d.msg, want))
		fprintf(stderr, "expected \"%s\" in: %s\n", want, d.msg);
	CHECK(strstr(d.msg, want) != NULL);
	kp_profile_free(p);
	free(rec);
	free(body->p);
	*body = (struct pb){0};
}

static void test_chunk_limits(void)
{
	struct pb body = {0}, m = {0};
	char *big = kp_xmalloc(1 << 20);
	char s[16];

	/* 4097 strings in a chunk */
	for (int i = 0; i < 4097; i++) {
		snprintf(s, sizeof(s), "s%d", i);
		pb_bytes(&m, 1, s, strlen(s));
	}
	pb_chunk(&body, STRINGS, &m);
	refused_body(&body,
		     "chunk 0 (strings, at decompressed byte 0): 4097 entries (at most 4096");
	/* a string after 1 MiB of them */
	memset(big, 'x', 1 << 20);
	pb_bytes(&m, 1, big, 1 << 20);
	pb_bytes(&m, 1, "y", 1);
	pb_chunk(&body, STRINGS, &m);
	refused_body(&body, "string 2 follows 1048576 bytes of strings (at most 1048576 a chunk)");
	/* 4097 functions */
	pb_bytes(&m, 1, "f", 1);
	pb_chunk(&body, STRINGS, &m);
	pb_packed(&m, 1, NULL, 4097, 1);
	pb_packed(&m, 2, NULL, 4097, 0);
	pb_chunk(&body, FUNCTIONS, &m);
	refused_body(&body, "chunk 1 (functions, at decompressed byte 7): 4097 entries");
	/* a location after 16384 frames */
	pb_bytes(&m, 1, "f", 1);
	pb_chunk(&body, STRINGS, &m);
	pb_packed(&m, 1, NULL, 1, 1);
	pb_packed(&m, 2, NULL, 1, 0);
	pb_chunk(&body, FUNCTIONS, &m);
	{
		uint64_t frames[2] = {16384, 1}, addr[2] = {0, 2}, state[2] = {1, 1};

		pb_packed(&m, 1, NULL, 2, 0);
		pb_packed(&m, 2, NULL, 2, 0);
		pb_packed(&m, 3, addr, 2, 0);
		pb_packed(&m, 4, state, 2, 0);
		pb_packed(&m, 5, frames, 2, 0);
		pb_packed(&m, 6, NULL, 16385, 0);
		pb_packed(&m, 7, NULL, 16385, 0);
		pb_packed(&m, 8, NULL, 16385, 0);
		pb_chunk(&body, LOCATIONS, &m);
	}
	refused_body(&body, "location 1 follows 16384 frames (at most 16384 a chunk)");
	/* 4097 locations */
	pb_locations(&body, 4097);
	refused_body(&body, "chunk 0 (locations, at decompressed byte 0): 4097 entries");
	/* 4097 mappings */
	for (int i = 0; i < 4097; i++) {
		struct pb map = {0};

		pb_uint(&map, 1, KP_LOC_USER);
		pb_uint(&map, 2, (uint64_t)i);
		pb_bytes(&m, 1, map.p, map.n);
		free(map.p);
	}
	pb_chunk(&body, MAPPINGS, &m);
	refused_body(&body, "(mappings, at decompressed byte 0): 4097 entries");
	/* a sample after 65536 stack locations of its chunk */
	pb_value_type(&body);
	pb_locations(&body, 1);
	{
		uint64_t depth[2] = {65536, 1};

		pb_packed(&m, 1, NULL, 2, 0);
		pb_packed(&m, 2, NULL, 2, 0);
		pb_packed(&m, 3, NULL, 2, 0);
		pb_packed(&m, 4, NULL, 2, 0);
		pb_packed(&m, 5, NULL, 2, 0);
		pb_packed(&m, 6, depth, 2, 0);
		pb_packed(&m, 7, NULL, 65537, 0);
		pb_packed(&m, 8, NULL, 2, 1);
		pb_chunk(&body, SAMPLES, &m);
	}
	refused_body(&body, "sample 1 follows 65536 stack locations (at most 65536 a chunk)");
	/* 4097 metadata entries; an entry after 1 MiB of them */
	for (int i = 0; i < 4097; i++) {
		snprintf(s, sizeof(s), "k%d", i);
		pb_bytes(&m, 1, s, strlen(s));
	}
	for (int i = 0; i < 4097; i++)
		pb_bytes(&m, 2, "v", 1);
	pb_chunk(&body, METADATA, &m);
	refused_body(&body, "(metadata, at decompressed byte 0): 4097 entries");
	pb_bytes(&m, 1, "a", 1);
	pb_bytes(&m, 1, "b", 1);
	pb_bytes(&m, 2, big, 1 << 20);
	pb_bytes(&m, 2, "v", 1);
	pb_chunk(&body, METADATA, &m);
	refused_body(&body, "metadata entry 1 follows 1048577 bytes of entries");
	/* a shared prefix longer than the stack it is taken from */
	pb_value_type(&body);
	pb_locations(&body, 1);
	{
		uint64_t back[2] = {0, 1}, shared[2] = {0, 2};

		pb_packed(&m, 1, NULL, 2, 0);
		pb_packed(&m, 2, NULL, 2, 0);
		pb_packed(&m, 3, NULL, 2, 0);
		pb_packed(&m, 4, back, 2, 0);
		pb_packed(&m, 5, shared, 2, 0);
		pb_packed(&m, 6, NULL, 2, 1);
		pb_packed(&m, 7, NULL, 2, 0);
		pb_packed(&m, 8, NULL, 2, 1);
		pb_chunk(&body, SAMPLES, &m);
	}
	refused_body(&body, "sample 1 shares 2 locations of 1");
	free(big);
}

/* A truncated recording says why in one pair of parentheses. */
static void test_truncated_message(void)
{
	struct pb body = hostile_body(100, 100);
	size_t len;
	char *rec = wrap(&body, &len);
	struct kp_profile *p = NULL;
	struct kp_diag d = {{0}};

	put_file(rec, len - 1);
	CHECK(kp_load_profile(path, NULL, &p, NULL, &d) < 0);
	CHECK(one_line(d.msg));
	CHECK(strstr(d.msg, ": truncated .kprof recording (") != NULL);
	CHECK(strstr(d.msg, "((") == NULL && strstr(d.msg, "))") == NULL);
	printf("truncated: %s\n", d.msg);
	free(rec);
	free(body.p);
}

/* ---- what the writer makes is within the limits ---- */

static char *record(const struct kp_profile *p, size_t *len, struct kp_diag *d)
{
	char *buf = NULL;
	FILE *out = open_memstream(&buf, len);
	int err;

	memset(d, 0, sizeof(*d));
	err = kp_recording_write(p, out, d);
	fclose(out);
	if (err) {
		free(buf);
		return NULL;
	}
	return buf;
}

static struct kp_profile *read_back(const char *buf, size_t len, struct kp_diag *d)
{
	FILE *in = fmemopen((void *)buf, len, "r");
	struct kp_profile *p = NULL;

	memset(d, 0, sizeof(*d));
	if (kp_recording_read(in, "mem.kprof", &p, d) != 0)
		fprintf(stderr, "read back: %s\n", d->msg);
	fclose(in);
	return p;
}

static bool same_samples(const struct kp_profile *a, const struct kp_profile *b)
{
	if (!a || !b || kp_profile_nsamples(a) != kp_profile_nsamples(b) ||
	    kp_profile_nlocations(a) != kp_profile_nlocations(b) ||
	    kp_profile_nstrings(a) != kp_profile_nstrings(b) ||
	    kp_profile_nfunctions(a) != kp_profile_nfunctions(b) ||
	    kp_profile_nmappings(a) != kp_profile_nmappings(b) ||
	    kp_profile_nmeta(a) != kp_profile_nmeta(b))
		return false;
	for (size_t i = 0; i < kp_profile_nsamples(a); i++) {
		struct kp_profile_root ra, rb;
		size_t na, nb;
		const kp_count *va, *vb;
		const uint32_t *sa = kp_profile_sample(a, i, &ra, &na, &va),
			       *sb = kp_profile_sample(b, i, &rb, &nb, &vb);

		if (na != nb || (na && memcmp(sa, sb, na * sizeof(*sa))) ||
		    memcmp(&ra, &rb, sizeof(ra)) || va[0] != vb[0])
			return false;
	}
	for (uint32_t i = 0; i < kp_profile_nlocations(a); i++) {
		size_t na, nb;
		const struct kp_profile_frame *fa = kp_profile_frames(a, i, &na, NULL),
					      *fb = kp_profile_frames(b, i, &nb, NULL);

		if (na != nb)
			return false;
		for (size_t j = 0; j < na; j++)
			if (fa[j].function != fb[j].function || fa[j].line != fb[j].line)
				return false;
	}
	return true;
}

/* Every per-chunk limit reached: strings and a metadata value of 1 MiB, a
 * location of 20,000 frames, a stack of 70,000 locations, each followed by
 * more; 5000 functions, locations and mappings. (Two such strings make the
 * body big enough for zstd's level 9, the second faster.) */
static void test_writer_at_limits(void)
{
	struct kp_profile *p = kp_profile_new(), *q;
	struct kp_profile_frame *fr = kp_xcalloc(20000, sizeof(*fr));
	uint32_t *stack = kp_xcalloc(70000, sizeof(*stack));
	struct kp_profile_root root = {0};
	kp_count one = 1;
	char *big = kp_xmalloc((1 << 20) + 1), name[32];
	struct kp_diag d;
	size_t len;
	char *rec;

	kp_profile_add_value_type(p, "samples", "count", 0);
	memset(big, 'x', 1 << 20);
	big[1 << 20] = 0;
	kp_profile_intern(p, big, 1 << 20);
	kp_profile_set_meta(p, "big", "%s", big);
	kp_profile_set_meta(p, "after", "%s", "it");
	big[0] = 'y';
	kp_profile_intern(p, big, 1 << 20);
	for (uint32_t i = 0; i < 5000; i++) {
		struct kp_loc l = {.addr = i, .obj = i, .kind = KP_LOC_USER};
		struct kp_profile_mapping map = {.kind = KP_LOC_USER, .obj = i};
		uint32_t loc = kp_profile_location(p, &l);
		struct kp_profile_frame f;

		snprintf(name, sizeof(name), "fn_%u", i);
		f = (struct kp_profile_frame){
			kp_profile_function(p, kp_profile_intern(p, name, strlen(name)), 0), i,
			KP_FRAME_USER};
		kp_profile_set_frames(p, loc, &f, 1, true);
		kp_profile_set_mapping(p, &map);
	}
	for (size_t j = 0; j < 20000; j++)
		fr[j] = (struct kp_profile_frame){(uint32_t)j % 5000, (uint32_t)j, KP_FRAME_INLINE};
	kp_profile_set_frames(p, 0, fr, 20000, true);
	for (size_t j = 0; j < 70000; j++)
		stack[j] = (uint32_t)(j % 4999 + 1);
	kp_profile_add(p, &root, stack, 70000, &one);
	kp_profile_add(p, &root, stack, 10, &one);
	kp_profile_add(p, &root, stack + 1, 10, &one);
	rec = record(p, &len, &d);
	CHECK(rec != NULL);
	q = rec ? read_back(rec, len, &d) : NULL;
	CHECK(same_samples(p, q));
	kp_profile_free(q);
	free(rec);
	free(big);
	free(stack);
	free(fr);
	kp_profile_free(p);
}

/* Deep recursion, as folded text has it: 700 stacks of 2000 frames, each
 * sharing 1999 with the one before, 1.4 million frames for some 5 KB. The
 * writer sends some stacks (or more of them) whole, so that they stay
 * within what a recording may unfold to, and it reads back identically. */
static void test_writer_deep_stacks(void)
{
	struct kp_profile *p = kp_profile_new(), *q;
	uint32_t *stack = kp_xcalloc(2001, sizeof(*stack));
	uint32_t rec_loc = kp_profile_named_location(p, "recurse", 7, KP_FRAME_USER);
	struct kp_profile_root root = {kp_profile_intern(p, "prog", 4), 0, 0};
	kp_count one = 1;
	struct kp_diag d;
	size_t len;
	char *rec;

	kp_profile_add_value_type(p, "samples", "count", 0);
	for (size_t j = 0; j < 2000; j++)
		stack[j] = rec_loc;
	for (int i = 0; i < 700; i++) {
		char name[32];

		snprintf(name, sizeof(name), "leaf_%d", i);
		stack[2000] = kp_profile_named_location(p, name, strlen(name), KP_FRAME_USER);
		kp_profile_add(p, &root, stack + 1, 2000, &one);
	}
	rec = record(p, &len, &d);
	CHECK(rec != NULL);
	q = rec ? read_back(rec, len, &d) : NULL;
	CHECK(same_samples(p, q));
	printf("deep stacks: 700 of 2000 frames: %zu bytes\n", len);
	kp_profile_free(q);
	free(rec);
	free(stack);
	kp_profile_free(p);
}

/* A location of 1000 frames in 40000 stacks: 40 million frames that no way
 * of sending the stacks makes fit. The writer says so. */
static void test_writer_refuses(void)
{
	struct kp_profile *p = kp_profile_new();
	struct kp_profile_frame *fr = kp_xcalloc(1000, sizeof(*fr));
	struct kp_loc l = {.addr = 1, .kind = KP_LOC_KERNEL};
	uint32_t deep = kp_profile_location(p, &l), stack[2] = {deep};
	struct kp_profile_root root = {0};
	kp_count one = 1;
	struct kp_diag d;
	size_t len;
	char *rec;

	kp_profile_add_value_type(p, "samples", "count", 0);
	fr[0].function = kp_profile_function(p, kp_profile_intern(p, "f", 1), 0);
	kp_profile_set_frames(p, deep, fr, 1000, true);
	for (uint64_t i = 0; i < 40000; i++) {
		struct kp_loc leaf = {.addr = 2 + i, .kind = KP_LOC_KERNEL};

		stack[1] = kp_profile_location(p, &leaf);
		kp_profile_add(p, &root, stack, 2, &one);
	}
	rec = record(p, &len, &d);
	CHECK(rec == NULL);
	CHECK(strstr(d.msg, "cannot write the recording: its first") != NULL);
	CHECK(strstr(d.msg, "unfold to") != NULL);
	printf("writer: %s\n", d.msg);
	free(rec);
	free(fr);
	kp_profile_free(p);
}

static void setup(void)
{
	CHECK(mkdtemp(tmpdir) != NULL);
	snprintf(path, sizeof(path), "%s/r.kprof", tmpdir);
}

static void teardown(void)
{
	unlink(path);
	rmdir(tmpdir);
}

KP_TEST_MAIN(setup, test_issue_recording, test_unfold_limit, test_chunk_limits,
	     test_truncated_message, test_writer_at_limits, test_writer_deep_stacks,
	     test_writer_refuses, teardown)
