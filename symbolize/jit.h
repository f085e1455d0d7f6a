/* kp_jittab: the perf maps of JIT processes (/tmp/perf-NSPID.map under the
 * process's root), reached through a descriptor of /proc/PID/root taken
 * while the process lives, read when it exits and checked again when its
 * frames are resolved. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_JIT_H
#define KP_SYMBOLIZE_JIT_H

#include <stdint.h>
#include <sys/types.h>

#include "symbolize/notes.h"

struct kp_jittab;

struct kp_jittab *kp_jittab_new(struct kp_sym_notelist *notes);
void kp_jittab_free(struct kp_jittab *jt);

/* The id (>= 1) of the live process pid's map, created on first call. */
uint32_t kp_jittab_get(struct kp_jittab *jt, pid_t pid);
/* Reads the map of the live process pid if it changed; the next
 * kp_jittab_get(pid) then belongs to a new process. */
void kp_jittab_exit(struct kp_jittab *jt, pid_t pid);
/* The (folded-safe) name covering addr in map id, or NULL. The first
 * lookup in a map re-reads it if it changed since. Owned by the table. */
const char *kp_jittab_lookup(struct kp_jittab *jt, uint32_t id, uint64_t addr);
/* Malformed lines skipped, summed over the maps as last read. */
uint64_t kp_jittab_bad_lines(const struct kp_jittab *jt);

/* Largest perf map read (a bigger one is read up to this size). */
#define KP_PERFMAP_MAX_BYTES (1024ull << 20)

#endif
