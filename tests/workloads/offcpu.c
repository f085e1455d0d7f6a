/* Off-CPU waits whose stacks and times are known (tests/e2e/offcpu_*.sh).
 * Every function below is called from main and prints its own accounting:
 * "NAME WALL CPU SWITCHES", the seconds it took on CLOCK_MONOTONIC and on
 * its thread's CPU clock, so that WALL - CPU is the time its thread spent
 * off CPU whatever the load, and how many times the thread left the CPU
 * meanwhile (getrusage's context switches: each is a wait).
 *
 *   offcpu phases DIR     main -> phase_spin (0.5 s on CPU), phase_sleep
 *                         (nanosleep 0.5 s), phase_pipe (a read of a pipe
 *                         another thread writes 0.5 s later), phase_fsync
 *                         (writes and fdatasync of DIR/offcpu.data, 0.5 s)
 *   offcpu exact DIR      main -> blocked_in_futex (a mutex another thread
 *                         holds for 0.3 s), blocked_in_pipe (0.3 s),
 *                         blocked_in_fsync (0.3 s in DIR, as above)
 *   offcpu sleep SECONDS  main -> sleep_kprof (nanosleep)
 *   offcpu mix THREADS SECONDS LONG_US SHORT_US NSHORT
 *                         THREADS threads, each for SECONDS alternating
 *                         one long_wait (nanosleep LONG_US) with NSHORT
 *                         short_wait (nanosleep SHORT_US): mix_thread ->
 *                         long_wait | short_wait. Each wait is timed by
 *                         its thread; "long_wait" and "short_wait" sum
 *                         every thread's, and "share long_wait PCT" is
 *                         long_wait's share of their time off CPU.
 * The first line is "pid PID", the last "main WALL CPU SWITCHES", main's
 * own. */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "workload.h"

static volatile unsigned long sink;
static double feed_delay;
static int feed_pipe[2];
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static int started;
static char block[16384];

#define KEEP_CALL() __asm__ volatile("" ::: "memory") /* a call, not a tail jump */

static void sleep_for(double seconds)
{
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};

	while (nanosleep(&ts, &ts) != 0)
		;
}

struct account {
	double wall, cpu;
	long switches;
};

/* The thread's context switches so far (getrusage's voluntary and
 * involuntary ones): each is a wait. */
static long switches(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw + ru.ru_nivcsw;
}

static struct account account_start(void)
{
	return (struct account){kp_seconds(CLOCK_MONOTONIC), kp_seconds(CLOCK_THREAD_CPUTIME_ID),
				switches()};
}

static void account_print(const char *name, struct account a)
{
	printf("%s %.6f %.6f %ld\n", name, kp_seconds(CLOCK_MONOTONIC) - a.wall,
	       kp_seconds(CLOCK_THREAD_CPUTIME_ID) - a.cpu, switches() - a.switches);
	fflush(stdout);
}

/* The feeding thread: writes one byte after feed_delay seconds. */
static void *feed(void *arg)
{
	(void)arg;
	sleep_for(feed_delay);
	if (write(feed_pipe[1], "x", 1) != 1)
		exit(1);
	return NULL;
}

/* The holding thread: takes the mutex, says so, holds it feed_delay s. */
static void *hold(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	pthread_mutex_lock(&started_lock);
	started = 1;
	pthread_cond_signal(&started_cond);
	pthread_mutex_unlock(&started_lock);
	sleep_for(feed_delay);
	pthread_mutex_unlock(&held);
	return NULL;
}

static pthread_t start_feeder(double delay)
{
	pthread_t t;

	feed_delay = delay;
	if (pipe(feed_pipe) != 0 || pthread_create(&t, NULL, feed, NULL) != 0)
		exit(1);
	return t;
}

static void read_fed(pthread_t t)
{
	char c;

	if (read(feed_pipe[0], &c, 1) != 1)
		exit(1);
	pthread_join(t, NULL);
	close(feed_pipe[0]);
	close(feed_pipe[1]);
}

/* Writes and fdatasync of dir/offcpu.data for seconds. */
static void sync_for(const char *dir, double seconds)
{
	static char path[4096]; /* off the stack: the stack copy stays small */
	double end = kp_seconds(CLOCK_MONOTONIC) + seconds;
	int fd;

	snprintf(path, sizeof(path), "%s/offcpu.data", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	memset(block, 'k', sizeof(block));
	do {
		if (pwrite(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) ||
		    fdatasync(fd) != 0) {
			perror(path);
			exit(1);
		}
	} while (kp_seconds(CLOCK_MONOTONIC) < end);
	close(fd);
	unlink(path);
}

__attribute__((noinline, noclone)) static void phase_spin(double seconds)
{
	struct account a = account_start();
	double end = a.wall + seconds;

	do {
		for (int i = 0; i < 20000; i++)
			sink += (unsigned long)i * 7;
	} while (kp_seconds(CLOCK_MONOTONIC) < end);
	account_print("phase_spin", a);
}

__attribute__((noinline, noclone)) static void phase_sleep(double seconds)
{
	struct account a = account_start();

	sleep_for(seconds);
	account_print("phase_sleep", a);
}

__attribute__((noinline, noclone)) static void phase_pipe(double seconds)
{
	struct account a = account_start();

	read_fed(start_feeder(seconds));
	account_print("phase_pipe", a);
}

__attribute__((noinline, noclone)) static void phase_fsync(const char *dir, double seconds)
{
	struct account a = account_start();

	sync_for(dir, seconds);
	account_print("phase_fsync", a);
}

/* Each calls libc itself (no helper of ours between it and libc). */
__attribute__((noinline, noclone)) static void blocked_in_futex(void)
{
	struct account a = account_start();

	pthread_mutex_lock(&held);
	pthread_mutex_unlock(&held);
	account_print("blocked_in_futex", a);
}

__attribute__((noinline, noclone)) static void blocked_in_pipe(int fd)
{
	struct account a = account_start();
	char c;

	if (read(fd, &c, 1) != 1)
		exit(1);
	account_print("blocked_in_pipe", a);
}

__attribute__((noinline, noclone)) static void blocked_in_fsync(int fd, double seconds)
{
	struct account a = account_start();

	do {
		if (pwrite(fd, block, sizeof(block), 0) != (ssize_t)sizeof(block) ||
		    fdatasync(fd) != 0)
			exit(1);
	} while (kp_seconds(CLOCK_MONOTONIC) < a.wall + seconds);
	account_print("blocked_in_fsync", a);
}

/* The mix: each thread's own clock of its waits, summed at its end. */
struct mix {
	double seconds, long_s, short_s;
	int nshort;
};
static struct account mix_long, mix_short; /* under started_lock */

static void account_add(struct account *sum, struct account a)
{
	sum->wall += a.wall;
	sum->cpu += a.cpu;
	sum->switches += a.switches;
}

/* One wait of seconds, its time (wall, CPU, switches) added to *acc. */
static void timed_sleep(struct account *acc, double seconds)
{
	struct account a = account_start();

	sleep_for(seconds);
	acc->wall += kp_seconds(CLOCK_MONOTONIC) - a.wall;
	acc->cpu += kp_seconds(CLOCK_THREAD_CPUTIME_ID) - a.cpu;
	acc->switches += switches() - a.switches;
}

/* Their bodies differ (the sink's step), or the compiler folds them into
 * one function. */
__attribute__((noinline, noclone)) static void long_wait(struct account *acc, double seconds)
{
	timed_sleep(acc, seconds);
	sink += 1;
}

__attribute__((noinline, noclone)) static void short_wait(struct account *acc, double seconds)
{
	timed_sleep(acc, seconds);
	sink += 2;
}

__attribute__((noinline, noclone)) static void *mix_thread(void *arg)
{
	const struct mix *m = arg;
	struct account l = {0}, sh = {0};
	double end = kp_seconds(CLOCK_MONOTONIC) + m->seconds;

	do {
		long_wait(&l, m->long_s);
		for (int i = 0; i < m->nshort; i++)
			short_wait(&sh, m->short_s);
	} while (kp_seconds(CLOCK_MONOTONIC) < end);
	pthread_mutex_lock(&started_lock);
	account_add(&mix_long, l);
	account_add(&mix_short, sh);
	pthread_mutex_unlock(&started_lock);
	return NULL;
}

static int mix(int nthreads, const struct mix *m)
{
	pthread_t t[64];
	double off_long, off_short;

	if (nthreads < 1 || nthreads > 64 || m->nshort < 0)
		return 2;
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, mix_thread, (void *)m) != 0)
			return 1;
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	off_long = mix_long.wall - mix_long.cpu;
	off_short = mix_short.wall - mix_short.cpu;
	printf("long_wait %.6f %.6f %ld\n", mix_long.wall, mix_long.cpu, mix_long.switches);
	printf("short_wait %.6f %.6f %ld\n", mix_short.wall, mix_short.cpu, mix_short.switches);
	printf("share long_wait %.3f\n", 100 * off_long / (off_long + off_short));
	return 0;
}

__attribute__((noinline, noclone)) static void sleep_kprof(double seconds)
{
	struct account a = account_start();

	sleep_for(seconds);
	account_print("sleep_kprof", a);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	struct account all = account_start();
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(mode, "phases") && argc > 2) {
		phase_spin(0.5);
		KEEP_CALL();
		phase_sleep(0.5);
		KEEP_CALL();
		phase_pipe(0.5);
		KEEP_CALL();
		phase_fsync(argv[2], 0.5);
		KEEP_CALL();
	} else if (!strcmp(mode, "exact") && argc > 2) {
		/* in main itself, so that each blocked_in_ is right under it */
		pthread_t t;
		static char path[4096];
		int fd;

		feed_delay = 0.3;
		if (pthread_create(&t, NULL, hold, NULL) != 0)
			return 1;
		pthread_mutex_lock(&started_lock);
		while (!started) /* the mutex is held before blocked_in_futex */
			pthread_cond_wait(&started_cond, &started_lock);
		pthread_mutex_unlock(&started_lock);
		blocked_in_futex();
		KEEP_CALL();
		pthread_join(t, NULL);
		t = start_feeder(0.3);
		blocked_in_pipe(feed_pipe[0]);
		KEEP_CALL();
		pthread_join(t, NULL);
		snprintf(path, sizeof(path), "%s/offcpu.data", argv[2]);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644)) < 0)
			return 1;
		blocked_in_fsync(fd, 0.3);
		KEEP_CALL();
		close(fd);
		unlink(path);
	} else if (!strcmp(mode, "mix") && argc > 6) {
		struct mix m = {atof(argv[3]), atof(argv[4]) / 1e6, atof(argv[5]) / 1e6,
				atoi(argv[6])};
		int err = mix(atoi(argv[2]), &m);

		if (err)
			return err;
	} else if (!strcmp(mode, "sleep") && argc > 2) {
		sleep_kprof(atof(argv[2]));
		KEEP_CALL();
	} else {
		fprintf(stderr,
			"usage: offcpu phases DIR | exact DIR | sleep SECONDS | mix THREADS "
			"SECONDS LONG_US SHORT_US NSHORT\n");
		return 2;
	}
	account_print("main", all);
	return 0;
}
