/* Jitdump files as a hostile JIT would make them (issue 28, items 1 and
 * 2), for tests/e2e/jitdump_attack.sh and scripts/bench-jitdump-attack:
 *
 *   jitdump_attack write FILE LOADS ORDER NAMELEN CODE
 *       writes a jitdump of LOADS loads (ORDER: asc or desc addresses),
 *       each named with NAMELEN bytes and CODE bytes of code
 *   jitdump_attack hold FILE PROCS SECONDS
 *       maps FILE (as a JIT maps its jitdump for perf to find) in PROCS
 *       processes (this one and PROCS-1 children) for SECONDS
 *   jitdump_attack grow FILE MB_PER_S NAMELEN SECONDS
 *       makes FILE, maps it, and appends loads named with NAMELEN bytes at
 *       MB_PER_S megabytes a second for SECONDS, each at a new address
 *
 * The file's format: Linux's tools/perf/Documentation/jitdump-specification.txt. */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void put(FILE *f, const void *p, size_t n)
{
	if (fwrite(p, 1, n, f) != n)
		die("write");
}

static void header(FILE *f)
{
	uint32_t h[6] = {0x4A695444, 1, 40, 62, 0, (uint32_t)getpid()};
	uint64_t t[2] = {1, 0};

	put(f, h, sizeof(h));
	put(f, t, sizeof(t));
}

/* One JIT_CODE_LOAD of code bytes at addr, named by name (nlen bytes):
 * its fixed fields in one write. */
static void load(FILE *f, uint64_t addr, uint64_t code, uint64_t index, const char *name,
		 size_t nlen, const uint8_t *bytes)
{
	uint8_t fixed[56];
	uint32_t rec[2] = {0, (uint32_t)(56 + nlen + 1 + code)}, ids[2];
	uint64_t ts = 2, v[4] = {addr, addr, code, index};
	static uint32_t pid;

	if (!pid)
		pid = (uint32_t)getpid();
	ids[0] = ids[1] = pid;
	memcpy(fixed, rec, 8);
	memcpy(fixed + 8, &ts, 8);
	memcpy(fixed + 16, ids, 8);
	memcpy(fixed + 24, v, 32);
	put(f, fixed, sizeof(fixed));
	put(f, name, nlen);
	put(f, "", 1);
	put(f, bytes, code);
}

static char *make_name(size_t len)
{
	char *n = malloc(len + 1);

	if (!n)
		die("malloc");
	memset(n, 'x', len);
	n[len] = 0;
	return n;
}

static int cmd_write(const char *path, long loads, const char *order, size_t nlen, size_t code)
{
	FILE *f = fopen(path, "we");
	char *name = make_name(nlen + 16);
	uint8_t *bytes = calloc(1, code + 1);

	if (!f || !bytes)
		die(path);
	setvbuf(f, NULL, _IOFBF, 1 << 20);
	header(f);
	for (long i = 0; i < loads; i++) {
		uint64_t k = strcmp(order, "desc") == 0 ? (uint64_t)(loads - 1 - i) : (uint64_t)i;
		int n = snprintf(name, 16, "f%ld", i);

		name[n] = nlen > (size_t)n ? 'x' : 0;
		load(f, 0x10000000000ull + k * 0x40, code ? code : 1, (uint64_t)i, name,
		     nlen > (size_t)n ? nlen : (size_t)n, bytes);
	}
	if (fclose(f))
		die(path);
	return 0;
}

/* Maps path for perf to find (executable if the folder allows it). */
static void map_it(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *at;

	if (fd < 0)
		die(path);
	at = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (at == MAP_FAILED)
		at = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	if (at == MAP_FAILED)
		die("mmap");
	close(fd);
}

static int cmd_hold(const char *path, int procs, double seconds)
{
	map_it(path);
	for (int i = 1; i < procs; i++) {
		pid_t p = fork();

		if (p == 0)
			break; /* the children hold it as long */
		if (p < 0)
			die("fork");
	}
	/* in our own process group, the parent waits: a kill of the group
	 * ends them all */
	usleep((useconds_t)(seconds * 1e6));
	while (wait(NULL) > 0)
		;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmd_grow(const char *path, double mbps, size_t nlen, double seconds)
{
	FILE *f = fopen(path, "we");
	char *name = make_name(nlen);
	uint8_t code[64] = {0};
	double t0 = now(), written = 0;
	uint64_t i = 0;

	if (!f)
		die(path);
	header(f);
	fflush(f);
	map_it(path);
	while (now() - t0 < seconds) {
		/* a burst each 10 ms, as much as the rate allows by now */
		while (written < (now() - t0) * mbps * 1e6) {
			snprintf(name, 20, "g%llu-", (unsigned long long)i);
			name[strlen(name)] = 'x';
			load(f, 0x20000000000ull + i * 0x40, sizeof(code), i, name, nlen, code);
			written += 56 + (double)nlen + 1 + sizeof(code);
			i++;
		}
		fflush(f);
		usleep(10000);
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 7 && strcmp(argv[1], "write") == 0)
		return cmd_write(argv[2], atol(argv[3]), argv[4], (size_t)atol(argv[5]),
				 (size_t)atol(argv[6]));
	if (argc == 5 && strcmp(argv[1], "hold") == 0)
		return cmd_hold(argv[2], atoi(argv[3]), atof(argv[4]));
	if (argc == 6 && strcmp(argv[1], "grow") == 0)
		return cmd_grow(argv[2], atof(argv[3]), (size_t)atol(argv[4]), atof(argv[5]));
	fprintf(stderr, "usage: jitdump_attack write FILE LOADS asc|desc NAMELEN CODE\n"
			"       jitdump_attack hold FILE PROCS SECONDS\n"
			"       jitdump_attack grow FILE MB_PER_S NAMELEN SECONDS\n");
	return 2;
}
