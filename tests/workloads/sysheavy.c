/* A syscall-heavy benchmark of fixed work (scripts/bench-gate): most of
 * its time in the kernel, in calls a few microseconds each,
 *   sh_round_kprof -> sh_pipe_kprof     small writes into a pipe and reads
 *                                       back out of it
 *                     sh_null_kprof     small writes to /dev/null
 *                     sh_stat_kprof     stat of a file a few directories
 *                                       down, fstat of it (about 12% of the
 *                                       time)
 *                     sh_ids_kprof      getppid, getuid, a raw getpid
 *                     sh_parse_kprof    user-space work on what was read
 * ROUNDS times. stat=PERCENT (or pipe, null, ids, parse=PERCENT) makes that
 * stage do PERCENT% more work; dir=PATH is where the file goes (removed at
 * the end).
 * Usage: sysheavy [rounds=N] [dir=PATH] [pipe|null|stat|ids|parse=PERCENT] */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "knob.h"

#define MESSAGE_BYTES 64

enum { PIPE, NUL, STAT, IDS, PARSE, NSTAGES };
/* per round: pipe round trips, writes, stat and fstat pairs, id triples,
 * bytes parsed */
static struct kp_knob knobs[NSTAGES] = {{"pipe", 7600, 0},
					{"null", 25000, 0},
					{"stat", 2600, 0},
					{"ids", 7500, 0},
					{"parse", 1840000, 0}};

static int pipe_fds[2] = {-1, -1}, null_fd = -1, file_fd = -1;
static char message[MESSAGE_BYTES], received[MESSAGE_BYTES];
static char path[4096];
static volatile uint64_t sink;

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

KP_STAGE static void sh_pipe_kprof(unsigned long trips)
{
	for (unsigned long t = 0; t < trips; t++) {
		message[0] = (char)t;
		if (write(pipe_fds[1], message, sizeof(message)) != (ssize_t)sizeof(message) ||
		    read(pipe_fds[0], received, sizeof(received)) != (ssize_t)sizeof(received))
			fail("sysheavy: pipe");
	}
}

KP_STAGE static void sh_null_kprof(unsigned long writes)
{
	for (unsigned long w = 0; w < writes; w++)
		if (write(null_fd, message, 1 + w % sizeof(message)) < 0)
			fail("sysheavy: /dev/null");
}

KP_STAGE static void sh_stat_kprof(unsigned long pairs)
{
	struct stat st;
	uint64_t size = 0;

	for (unsigned long p = 0; p < pairs; p++) {
		if (stat(path, &st) < 0 || fstat(file_fd, &st) < 0)
			fail(path);
		size += (uint64_t)st.st_size;
	}
	sink += size;
}

KP_STAGE static void sh_ids_kprof(unsigned long triples)
{
	uint64_t sum = 0;

	for (unsigned long t = 0; t < triples; t++)
		sum += (uint64_t)getppid() + getuid() + (uint64_t)syscall(SYS_getpid);
	sink += sum;
}

/* Field sums over what the pipe gave back, bytes of it in all. */
KP_STAGE static void sh_parse_kprof(unsigned long bytes)
{
	uint64_t h = 1469598103934665603ULL;

	for (unsigned long n = 0; n < bytes; n++) {
		unsigned char c = (unsigned char)received[n % sizeof(received)];

		h = (h ^ c) * 1099511628211ULL;
		if (c == ',')
			h += n;
	}
	sink += h;
}

KP_STAGE static void sh_round_kprof(void)
{
	sh_pipe_kprof(knobs[PIPE].work);
	sh_null_kprof(knobs[NUL].work);
	sh_stat_kprof(knobs[STAT].work);
	sh_ids_kprof(knobs[IDS].work);
	sh_parse_kprof(knobs[PARSE].work);
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

int main(int argc, char **argv)
{
	unsigned rounds = 100;
	const char *dir = getenv("TMPDIR");
	char sub[3072]; /* shorter than path, which adds to it */

	kp_knob_parse(argc, argv, "sysheavy", knobs, NSTAGES, &rounds, &dir);
	/* a file three directories down, so that each stat walks a path */
	snprintf(sub, sizeof(sub), "%s/sysheavy.%d", dir, (int)getpid());
	if (mkdir(sub, 0700) < 0)
		fail(sub);
	snprintf(path, sizeof(path), "%s/a", sub);
	if (mkdir(path, 0700) < 0)
		fail(path);
	snprintf(path, sizeof(path), "%s/a/b", sub);
	if (mkdir(path, 0700) < 0)
		fail(path);
	snprintf(path, sizeof(path), "%s/a/b/file", sub);
	file_fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (file_fd < 0 || null_fd < 0 || pipe(pipe_fds) < 0)
		fail("sysheavy: setup");
	memset(message, 'x', sizeof(message));
	for (unsigned i = 0; i < sizeof(message); i += 8)
		message[i] = ',';
	for (unsigned r = 0; r < rounds; r++)
		sh_round_kprof();
	unlink(path);
	snprintf(path, sizeof(path), "%s/a/b", sub);
	rmdir(path);
	snprintf(path, sizeof(path), "%s/a", sub);
	rmdir(path);
	rmdir(sub);
	return 0;
}
