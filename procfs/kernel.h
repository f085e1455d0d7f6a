/* What /proc says of the running kernel: its symbol table (kallsyms,
 * which symbolize/kallsyms.c streams from the path below), and as small
 * text files its boot id (sys/kernel/random/boot_id) and its modules
 * (modules), which name a boot's copy of /proc/kallsyms
 * (symbolize/ksymcache.c). */
#ifndef KP_PROCFS_KERNEL_H
#define KP_PROCFS_KERNEL_H

#include <stddef.h>
#include <sys/types.h>

/* The text of /proc/NAME whole (at most 16 MiB), as a new NUL-terminated
 * string (caller frees), or NULL when it cannot be opened. */
char *kp_kernel_read(const char *name);

/* The first bytes of /proc/NAME (at most size - 1, one read), as a
 * NUL-terminated string in buf; the count read, or -1 when it cannot be
 * opened or read. */
ssize_t kp_kernel_read_start(const char *name, char *buf, size_t size);

/* The running kernel's symbol table. */
#define KP_KERNEL_KALLSYMS "/proc/kallsyms"

#endif
