/* Time spent in the vDSO and in PLT stubs: time() and
 * clock_gettime(CLOCK_MONOTONIC_COARSE) are answered by the kernel's vDSO
 * without a system call, and both are called through the PLT.
 *   main -> vdso_time_kprof -> time (PLT) -> __vdso_time
 *   main -> vdso_coarse_kprof -> clock_gettime (PLT, libc) -> __vdso_clock_gettime
 * The vDSO's functions set up no frame, so a frame-pointer walk from them
 * skips the *_kprof caller (as with perf -g); CFI (kprof's default, and its
 * leaf repair in -g fp) keeps it.
 * Usage: vdso SECONDS */
#include <stdlib.h>
#include <time.h>

static volatile long sink;

__attribute__((noinline, noclone)) static void vdso_time_kprof(void)
{
	/* more calls than vdso_coarse_kprof: each is cheaper */
	for (int i = 0; i < 4000; i++)
		sink += time(NULL);
}

__attribute__((noinline, noclone)) static void vdso_coarse_kprof(void)
{
	struct timespec ts;

	for (int i = 0; i < 1000; i++) {
		clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
		sink += ts.tv_nsec;
	}
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1.0;
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (double)(time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	do {
		vdso_time_kprof();
		vdso_coarse_kprof();
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	return 0;
}
