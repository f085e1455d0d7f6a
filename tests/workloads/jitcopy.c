/* A JIT in miniature: copies a small function's machine code into anonymous
 * executable memory and names the copies in its own /tmp/perf-PID.map, as
 * Node, Java or LuaJIT do. The map is written so that a symbolizer must apply
 * the rules: a stale entry for the same range comes first and a later line
 * wins, one line is garbage, one name holds a ';' and a control character.
 *
 * Stack of the hot copy:   main -> run_jit_kprof -> kprof_jit_hot_spin (JIT)
 * Stack of the odd name:   main -> run_jit_kprof -> "kprof_jit;semi\001ctl"
 * Native spin:             main -> native_spin_kprof
 *
 * Usage: jitcopy SECONDS [grow|append|unlink|sparse=BYTES|entries=BYTES]
 * With "grow", only the stale entry and the garbage line are written at
 * start; the right entries are appended after a third of the run (the map
 * grows while the process runs, as a JIT's does). With "append", an
 * existing map file is appended to rather than replaced (to test a map
 * someone else created before the process started). With "unlink", the
 * map is deleted just before the process exits, as some JIT runtimes
 * clean up after themselves. A long-lived Node with --perf-basic-prof leaves
 * maps of gigabytes; "sparse=BYTES" follows the entries with a hole of that
 * size (ftruncate: NUL bytes, no newline, no disk), "entries=BYTES" with
 * that many bytes of well-formed lines naming code around the copies but
 * never the copies themselves (BYTES may end in K, M or G).
 * Prints "pid N" (the pid it sees itself as) so the caller can remove the map.
 * Built static, it also runs chrooted as pid 1 of its own namespace, where
 * its map is /tmp/perf-1.map under the chroot. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jit_template.h"
#include "workload.h"

typedef uint64_t (*jit_fn)(uint64_t n);

static volatile uint64_t sink;
static char map_path[64];

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void map_append(const char *text)
{
	FILE *f = fopen(map_path, "a");

	if (!f)
		die(map_path);
	fputs(text, f);
	if (fclose(f) != 0)
		die(map_path);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	switch (*end) {
	case 'G':
		v <<= 10; /* fall through */
	case 'M':
		v <<= 10; /* fall through */
	case 'K':
		v <<= 10;
		break;
	default:
		break;
	}
	return v;
}

static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Appends about bytes of "START SIZE name" lines, 64-byte functions laid
 * out around lo..hi (the copies) on both sides, none overlapping them: a
 * reader has to look at every line, and none names sampled code. */
static void append_filler(uint64_t bytes, uint64_t lo, uint64_t hi)
{
	enum { CHUNK = 1 << 20, LINE_MAX_LEN = 96 };
	char *buf = malloc(CHUNK);
	uint64_t step = 0x40, written = 0, i = 0;
	/* roughly half of the lines below the copies, half above */
	uint64_t addr = lo - (bytes / 60 / 2) * step;
	int fd = open(map_path, O_WRONLY | O_APPEND);

	if (!buf || fd < 0)
		die(map_path);
	while (written < bytes) {
		char *p = buf;

		while (p + LINE_MAX_LEN < buf + CHUNK && written + (uint64_t)(p - buf) < bytes) {
			if (addr + step > lo && addr < hi) {
				addr = hi; /* never cover a copy */
				continue;
			}
			p = put_hex(p, addr);
			*p++ = ' ';
			p = put_hex(p, step);
			memcpy(p, " LazyCompile:*filler_", 21);
			p = put_hex(p + 21, i++);
			memcpy(p, " /srv/app/bundle.js:1\n", 22);
			p += 22;
			addr += step;
		}
		for (size_t off = 0; off < (size_t)(p - buf);) {
			ssize_t n = write(fd, buf + off, (size_t)(p - buf) - off);

			if (n <= 0)
				die(map_path);
			off += (size_t)n;
		}
		written += (uint64_t)(p - buf);
	}
	close(fd);
	free(buf);
}

__attribute__((noinline, noclone)) static void native_spin_kprof(uint64_t n)
{
	volatile uint64_t acc = 0; /* a frame of its own, see spin.c */

	for (uint64_t i = 0; i < n; i++)
		acc += i ^ (i >> 3);
	sink += acc;
}

__attribute__((noinline, noclone)) static void run_jit_kprof(jit_fn fn, uint64_t n)
{
	sink += fn(n);
	__asm__ volatile("" ::: "memory"); /* a call, not a tail jump */
}

int main(int argc, char **argv)
{
#ifndef KP_HAVE_TEMPLATE
	(void)argc;
	(void)argv;
	fprintf(stderr, "jitcopy: no code template for this architecture\n");
	return 77;
#else
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	int grow = argc > 2 && strcmp(argv[2], "grow") == 0;
	int append = argc > 2 && strcmp(argv[2], "append") == 0;
	int unlink_at_exit = argc > 2 && strcmp(argv[2], "unlink") == 0;
	uint64_t sparse =
		argc > 2 && strncmp(argv[2], "sparse=", 7) == 0 ? parse_size(argv[2] + 7) : 0;
	uint64_t filler =
		argc > 2 && strncmp(argv[2], "entries=", 8) == 0 ? parse_size(argv[2] + 8) : 0;
	size_t len = (size_t)(kp_jit_template_end - kp_jit_template);
	long page = sysconf(_SC_PAGESIZE);
	char line[256], right[512];

	/* the hot copy: written while RW, then made RX (how V8 and HotSpot
	 * do it with W^X) */
	char *hot = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
	if (hot == MAP_FAILED)
		die("mmap");
	memcpy(hot, kp_jit_template, len);
	if (mprotect(hot, (size_t)page, PROT_READ | PROT_EXEC) != 0)
		die("mprotect");
	/* the oddly named copy: RWX from the start, as simpler JITs do */
	char *odd = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (odd == MAP_FAILED)
		die("mmap rwx");
	memcpy(odd, kp_jit_template, len);
	__builtin___clear_cache(hot, hot + len);
	__builtin___clear_cache(odd, odd + len);

	snprintf(map_path, sizeof(map_path), "/tmp/perf-%d.map", (int)getpid());
	if (!append)
		unlink(map_path); /* a stale map of an earlier process with this pid */
	/* stale: the same range under a name that must lose */
	snprintf(line, sizeof(line), "%lx %zx kprof_jit_STALE_name\n",
		 (unsigned long)(uintptr_t)hot, len);
	map_append(line);
	map_append("this line is garbage and must be skipped\n");
	snprintf(right, sizeof(right),
		 "%lx %zx kprof_jit_hot_spin\n0x%lx 0x%zx kprof_jit;semi\001ctl\n",
		 (unsigned long)(uintptr_t)hot, len, (unsigned long)(uintptr_t)odd, len);
	if (!grow)
		map_append(right);
	if (filler) {
		uint64_t a = (uintptr_t)hot, b = (uintptr_t)odd;

		append_filler(filler, a < b ? a : b, (a < b ? b : a) + (uint64_t)page);
	}
	if (sparse) {
		struct stat st;
		int fd = open(map_path, O_WRONLY);

		if (fd < 0 || fstat(fd, &st) != 0 || ftruncate(fd, st.st_size + (off_t)sparse) != 0)
			die(map_path);
		close(fd);
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);

	double start = kp_seconds(CLOCK_MONOTONIC), end = start + seconds;
	int appended = !grow;
	while (kp_seconds(CLOCK_MONOTONIC) < end) {
		if (!appended && kp_seconds(CLOCK_MONOTONIC) >= start + seconds / 3) {
			map_append(right);
			appended = 1;
		}
		/* CPU time split (see KP_SPIN_FOR): hot copy 3/6, native
		 * 2/6, odd copy 1/6 */
		KP_SPIN_FOR(0.015, run_jit_kprof((jit_fn)(uintptr_t)hot, 1000000));
		KP_SPIN_FOR(0.010, native_spin_kprof(500000));
		KP_SPIN_FOR(0.005, run_jit_kprof((jit_fn)(uintptr_t)odd, 1000000));
	}
	if (!appended)
		map_append(right);
	if (unlink_at_exit && unlink(map_path) != 0)
		die(map_path);
	return 0;
#endif
}
