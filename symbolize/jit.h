/* kp_jittab: the perf maps of JIT processes (/tmp/perf-NSPID.map under the
 * process's root), reached through a descriptor of /proc/PID/root taken
 * while the process lives, opened and checked while it lives and when it
 * exits (the descriptor kept), read only when its frames are resolved,
 * for the addresses hinted; and their jitdumps (jit-PID.dump, which a
 * process maps for perf to find), opened when mapped and read as they
 * grow, whose names come first. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_JIT_H
#define KP_SYMBOLIZE_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs/mapping.h"
#include "util/notes.h"

struct kp_jittab;

struct kp_jittab *kp_jit_new(struct kp_notes *notes);
void kp_jit_free(struct kp_jittab *jt);

/* The id (>= 1) of the live process pid's map, created on first call. */
uint32_t kp_jit_get(struct kp_jittab *jt, pid_t pid);
/* The live process pid exits: its map is opened and checked (not read)
 * and that file is the one read later; the next kp_jit_get(pid) then
 * belongs to a new process. */
void kp_jit_exit(struct kp_jittab *jt, pid_t pid);
/* Between two windows of a continuous recording (kp_sym_next_window):
 * the names read for the last window's addresses go, and exited
 * processes' maps and jitdumps are closed and freed (their table entry,
 * a few hundred bytes, stays: ids are not reused). */
void kp_jit_next_window(struct kp_jittab *jt);
/* Adds addrs[0..n) (any order) to the addresses map id is read for. */
void kp_jit_hint(struct kp_jittab *jt, uint32_t id, const uint64_t *addrs, size_t n);
/* The (folded-safe) name covering addr in map id, or NULL. The first
 * lookup after hints reads the map for all of them; a lookup of an
 * address never hinted reads it again, for that address too. Owned by
 * the table. */
const char *kp_jit_lookup(struct kp_jittab *jt, uint32_t id, uint64_t addr);
/* Malformed lines skipped, summed over the maps as last read. */
uint64_t kp_jit_bad_lines(const struct kp_jittab *jt);
/* Whether a map of id was found when it was last read, or a jitdump (for
 * why an address is unnamed: no map, or not in the map). */
bool kp_jit_had_map(const struct kp_jittab *jt, uint32_t id);
/* The process of JIT map id, 0 for a bad id. */
pid_t kp_jit_pid(const struct kp_jittab *jt, uint32_t id);
/* Whether the process's code [start, end) is JIT code (not in a file
 * mapping of it): the recorder's answer, from its process table. */
typedef bool (*kp_jit_code_fn)(void *arg, pid_t pid, uint64_t start, uint64_t end);
void kp_jit_set_code_check(struct kp_jittab *jt, kp_jit_code_fn fn, void *arg);

/* Whether path names a jitdump file ("jit-N.dump"). */
bool kp_jit_is_dump_path(const char *path);
/* Process m->pid mapped a jitdump: it is opened and checked now, kept
 * open, read by kp_jit_poll while the process lives, to its end at its
 * exit (kp_jit_exit) or at the first lookup. Its loads name their code
 * before the process's perf map does. */
void kp_jit_dump_mapped(struct kp_jittab *jt, const struct kp_mapping *m);
/* Reads what the jitdumps gained (8 MiB of file in all at most a call). */
void kp_jit_poll(struct kp_jittab *jt);
/* The unwinding info of the JIT code at addr of live process pid, from
 * its jitdump as read so far (symbolize.h, kp_sym_jit_unwind_info). */
struct kp_jit_unwind {
	uint64_t start, end, key;
	const uint8_t *eh_frame, *hdr;
	size_t eh_frame_len, hdr_len;
};
bool kp_jit_unwind_info(struct kp_jittab *jt, pid_t pid, uint64_t addr, struct kp_jit_unwind *out);
/* The jitdumps as read so far. */
struct kp_jit_dump_stats {
	uint64_t loads;	  /* loads taken (of the files still held) */
	uint64_t ignored; /* loads ignored: not JIT code */
	uint64_t opens;	  /* files opened to be read: one per file, whoever maps it */
	uint64_t cut;	  /* files read no further though not whole (each said in a note) */
	uint64_t bytes;	  /* what their state holds now */
};
void kp_jit_dump_stats(const struct kp_jittab *jt, struct kp_jit_dump_stats *st);
/* The notes of jitdumps read in part (also among the table's notes), in
 * order; owned by jt. */
const char *const *kp_jit_cut_notes(const struct kp_jittab *jt, size_t *n);

/* Passes over map files so far (one per map whose addresses were all
 * hinted before its first lookup). */
uint64_t kp_jit_reads(const struct kp_jittab *jt);

#endif
