/* kp_cpulist: the kernel's CPU list text ("0-3,6"), as /sys/devices/system/
 * cpu/online writes it, -C takes it and a recording's metadata keeps it.
 * Text only: procfs/cpus.h reads the online list. */
#ifndef KP_UTIL_CPULIST_H
#define KP_UTIL_CPULIST_H

#include <stddef.h>

/* Parses a CPU list like "0-3,6" (a trailing newline ends it). Returns the
 * number of CPUs (array in *cpus, caller frees) or -EINVAL. */
int kp_cpulist_parse(const char *s, int **cpus);
/* "0-3,6" for the sorted list v[0..n), cut to fit buf. */
void kp_cpulist_format(const int *v, int n, char *buf, size_t size);

#endif
