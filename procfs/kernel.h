/* What /proc says of the running kernel as small text files: its boot
 * id (sys/kernel/random/boot_id) and its modules (modules), which name a
 * boot's copy of /proc/kallsyms (symbolize/ksymcache.c). */
#ifndef KP_PROCFS_KERNEL_H
#define KP_PROCFS_KERNEL_H

/* The text of /proc/NAME whole (at most 16 MiB), as a new NUL-terminated
 * string (caller frees), or NULL when it cannot be opened. */
char *kp_kernel_read(const char *name);

#endif
