/* The tasks /proc lists: every process, the threads of one, and a task's
 * comm. */
#ifndef KP_PROCFS_TASKS_H
#define KP_PROCFS_TASKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The pids of every process in /proc, in its order: their number, the
 * array in *out (caller frees; NULL when there are none). */
size_t kp_tasks_processes(pid_t **out);

/* The threads of process pid (/proc/PID/task): 0 with their number in *n
 * and the array in *out (caller frees), or a negative errno when the
 * directory cannot be read (the process is gone). */
int kp_tasks_threads(pid_t pid, pid_t **out, size_t *n);

/* The threads of process pid, or just pid when /proc lists none: their
 * number, the array in *out (caller frees). */
size_t kp_tasks_of(pid_t pid, pid_t **out);

/* The owner of process pid (of /proc/PID): 0 with the uid in *uid, or a
 * negative errno (the process is gone). */
int kp_tasks_owner(pid_t pid, uid_t *uid);

/* Reads len bytes of process pid's memory at addr (/proc/PID/mem) into
 * buf. Returns the number read (short at an unmapped page), a negative
 * errno when the memory cannot be opened, or -EIO when it cannot be read. */
ssize_t kp_tasks_read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);

/* Reads /proc/PID/task/TID/comm (or /proc/PID/comm when tid is 0) into buf
 * without the newline. Returns 0 or a negative errno. */
int kp_tasks_comm(pid_t pid, pid_t tid, char *buf, size_t size);

#endif
