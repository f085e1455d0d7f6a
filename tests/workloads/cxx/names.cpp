// C++ names a profiler must demangle well: a function in an anonymous
// namespace, a member of a class template, a function template in a
// namespace, and a lambda's call operator. Each spins for a quarter of the
// CPU time (in slices of CPU time, see KP_SPIN_FOR). Usage: names CPU_SECONDS
#include <cstdlib>

#include "../workload.h"

static volatile unsigned long sink;

namespace
{
__attribute__((noinline, noclone)) void hot_anon(unsigned long n)
{
	volatile unsigned long acc = 0; // a frame of its own, see spin.c
	for (unsigned long i = 0; i < n; i++)
		acc += i * i;
	sink += acc;
}
} // namespace

template <typename T> struct Holder {
	__attribute__((noinline, noclone)) static void spin(T n)
	{
		volatile T acc = 0;
		for (T i = 0; i < n; i++)
			acc += i ^ 5;
		sink += (unsigned long)acc;
	}
};

namespace kpns
{
template <typename T> __attribute__((noinline, noclone)) T twice_kprof(T n)
{
	volatile T acc = 0;
	for (T i = 0; i < n; i++)
		acc += i << 1;
	return acc;
}
} // namespace kpns

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
	// CPU time, as spin.c: a loaded machine changes the run's length, not
	// its number of samples
	double end = kp_seconds(CLOCK_THREAD_CPUTIME_ID) + seconds;
	auto lam = [](unsigned long n) __attribute__((noinline, noclone))
	{
		volatile unsigned long acc = 0;
		for (unsigned long i = 0; i < n; i++)
			acc += i + 3;
		return (unsigned long)acc;
	};

	while (kp_seconds(CLOCK_THREAD_CPUTIME_ID) < end) {
		KP_SPIN_FOR(0.01, hot_anon(100000));
		KP_SPIN_FOR(0.01, Holder<int>::spin(100000));
		KP_SPIN_FOR(0.01, sink += (unsigned long)kpns::twice_kprof<long>(100000));
		KP_SPIN_FOR(0.01, sink += lam(100000));
	}
	return 0;
}
