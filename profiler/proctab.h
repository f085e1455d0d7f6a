/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_proctab: the process table built from side-band records: which thread
 * has which comm, and which code is mapped where in each process (struct
 * kp_mapping, procfs/mapping.h: its path interned in the table's strings,
 * its pid the process's). The symbolizer object behind a file mapping is
 * registered lazily, the first time a sample lands in it (its obj). */
#ifndef KP_PROFILER_PROCTAB_H
#define KP_PROFILER_PROCTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs/mapping.h"
#include "util/strtab.h"

struct kp_proctab;

/* strings: interns comms and paths; borrowed, must outlive the table. */
struct kp_proctab *kp_proctab_new(struct kp_strtab *strings);
void kp_proctab_free(struct kp_proctab *pt);

/* COMM record (exec true for PERF_RECORD_MISC_COMM_EXEC: the process's old
 * mappings are gone). */
void kp_proctab_comm(struct kp_proctab *pt, pid_t pid, pid_t tid, const char *comm, bool exec);
/* FORK: a new thread (pid == ppid) or a new process that starts with a copy
 * of its parent's mappings. */
void kp_proctab_fork(struct kp_proctab *pt, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid);
/* EXIT of a thread; the process's mappings go when its main thread exits.
 * Returns true when that was the process's exit. */
bool kp_proctab_exit(struct kp_proctab *pt, pid_t pid, pid_t tid);
/* A new executable mapping (replaces what it overlaps). build_id may be NULL. */
void kp_proctab_mmap(struct kp_proctab *pt, pid_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint32_t maj, uint32_t min, uint64_t ino, const char *path,
		     const uint8_t *build_id, size_t build_id_size);

/* Called with every mapping the table takes, from an MMAP2 record or
 * from /proc alike, once it is in. */
typedef void (*kp_proctab_map_fn)(void *arg, const struct kp_mapping *m);
void kp_proctab_on_map(struct kp_proctab *pt, kp_proctab_map_fn fn, void *arg);

/* Is anything known of pid? */
bool kp_proctab_has(const struct kp_proctab *pt, pid_t pid);
/* Describes a process from /proc (comm of every thread, executable
 * mappings); used for processes running before the recording and for
 * pids first seen in a sample. Returns 0 or a negative errno. */
int kp_proctab_synthesize(struct kp_proctab *pt, pid_t pid);
/* Every process in /proc. Returns the number described. */
size_t kp_proctab_synthesize_all(struct kp_proctab *pt);

/* The interned comm of thread tid (of process pid): falls back to the
 * process's comm, then to "[unknown]"'s id. */
uint32_t kp_proctab_comm_of(struct kp_proctab *pt, pid_t pid, pid_t tid);
/* Whether pid has an anonymous or memfd mapping, where JIT code may be
 * (a memfd's kind may later become KP_MAPPING_FILE: counted anyway). Cached
 * until its mappings change. */
bool kp_proctab_has_anon(struct kp_proctab *pt, pid_t pid);
/* The mapping containing addr in pid, or NULL. The pointer is valid until
 * the next call that changes the table. */
struct kp_mapping *kp_proctab_find_map(struct kp_proctab *pt, pid_t pid, uint64_t addr);

/* Does a file (or vDSO) mapping of pid overlap [start, end)? A new mapping
 * over one can change the code at addresses whose unwind rules are cached;
 * one over anonymous memory or nothing cannot. */
bool kp_proctab_overlaps_file(struct kp_proctab *pt, pid_t pid, uint64_t start, uint64_t end);

/* The symbolizer released objects objs[0..n) (sorted ascending): every
 * mapping of one asks the symbolizer for its object again at its next
 * sample (kprof --every, profiler/window.c). */
void kp_proctab_forget_objects(struct kp_proctab *pt, const uint32_t *objs, size_t n);

/* Number of processes seen during the run (for the summary). */
size_t kp_proctab_nprocs_seen(const struct kp_proctab *pt);

#endif
