/* A short-lived process: spends SECONDS (default 0.02) in a shared
 * library's function, then exits. Usage: kpshort [SECONDS] */
#include <stdlib.h>

double kpshort_lib_kprof(double seconds);

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 0.02;

	return kpshort_lib_kprof(seconds) >= seconds ? 0 : 1;
}
