/* The online CPUs, from /sys/devices/system/cpu/online, and checking a -C
 * list against them. */
#ifndef KP_PROCFS_CPUS_H
#define KP_PROCFS_CPUS_H

#include <stddef.h>

#include "util/diag.h"

/* The online CPUs (array in *cpus, caller frees); their number. Without
 * /sys, the CPUs 0..sysconf(_SC_NPROCESSORS_ONLN)-1. */
int kp_cpus_online(int **cpus);
/* 0 when every CPU of want is online; else -ENODEV and d names it ("does
 * not exist" or "is offline") with the online list. */
int kp_cpus_check(const int *want, size_t nwant, const int *online, int nonline, struct kp_diag *d);

#endif
