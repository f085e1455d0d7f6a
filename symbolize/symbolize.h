/* kp_symbolizer: names for code locations. symbolize/ names and does
 * nothing else: it samples nothing and unwinds nothing (unwind/ reads the
 * unwind tables of the same open files, which profiler/ hands it through
 * kp_sym_object_fd).
 *
 * The recorder talks to it twice:
 *  1. while recording, when a process maps a file or starts/exits: it
 *     registers the binary object (kp_sym_object_get) or the process's JIT
 *     map (kp_sym_jit_get) and gets back a small id it stores in its
 *     location stacks, so a file can be identified (build-id, opened through
 *     /proc/PID/root or /proc/PID/map_files) while the process still lives;
 *  2. at the end, once per distinct location (kp_sym_resolve), after
 *     handing over the addresses to be resolved where that lets a source
 *     be read for just those (kp_sym_kernel_hint, kp_sym_jit_hint); or all
 *     of this for every location of a profile (kp_sym_name_profile).
 *
 * Each distinct (object, offset) is resolved once per run and cached. */
#ifndef KP_SYMBOLIZE_SYMBOLIZE_H
#define KP_SYMBOLIZE_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "procfs/mapping.h"
#include "profile/profile.h"
#include "util/diag.h"
#include "util/frame.h"

struct kp_symbolizer;

struct kp_sym_options {
	bool no_inline;	 /* --no-inline: no inline frames */
	bool full_names; /* --full-names: keep demangled parameter lists */
	/* no source file and line in the frames (file NULL, line 0): what
	 * folded text and SVG need, and then DWARF line tables are not read
	 * (a build's saved index holds them either way) */
	bool no_lines;
	const char *const *debuginfo_dirs; /* --debuginfo-dir, may be NULL */
	size_t n_debuginfo_dirs;
	/* kprof's cache directory, NULL for none: a copy of /proc/kallsyms
	 * for the running boot (symbolize/ksymcache.h) and the symbol index
	 * of each build with DWARF, by build-id (symbolize/symidx.h). Used
	 * only when it is the user's own, mode 0700, not a symbolic link
	 * (util/cachefile.h); otherwise a note says so. */
	const char *cache_dir;
	/* a continuous recording (kprof --every): its profiles are named
	 * window after window, so naming one releases no object; what the
	 * windows no longer need goes at kp_sym_next_window */
	bool continuous;
	/* -a samples kprof too: its own executable and libraries (the files
	 * it maps when the symbolizer is made) are left out of the note about
	 * stripped files, which is about the programs profiled */
	bool quiet_own;
};

/* Returns a new symbolizer (never NULL; allocation failure aborts). */
struct kp_symbolizer *kp_sym_new(const struct kp_sym_options *opts);
void kp_sym_free(struct kp_symbolizer *sym);

/* Reads kernel symbols from path instead of /proc/kallsyms (tests, or a
 * saved copy); takes effect at the next kernel lookup. */
void kp_sym_set_kallsyms_path(struct kp_symbolizer *sym, const char *path);

/* Registers the file behind a mapping (procfs/mapping.h, as the process
 * table keeps it: its pid reaches the file through /proc/PID/root and
 * map_files, its build-id is the MMAP2 record's; kind and obj are not
 * read) and returns its object id (>= 1).
 * The same file (by build-id, else by device+inode+path) always gets the
 * same id, whatever the process. The file is opened or referenced now, so
 * it can be read after the process exits or the file is deleted. Never
 * fails: a file that cannot be opened still gets an id and resolves to
 * [unknown] later (counted). */
uint32_t kp_sym_object_get(struct kp_symbolizer *sym, const struct kp_mapping *m);
/* The file descriptor object obj holds open while its file has not been
 * read for symbols yet (during the recording), or -1: for a reader of the
 * same file's other bytes (the unwinder's tables, which profiler/ hands
 * it through this). Owned by the symbolizer; do not close. */
int kp_sym_object_fd(struct kp_symbolizer *sym, uint32_t obj);

/* For a mapping of a memfd (kp_mapping_path_is_memfd), which holds either a
 * program run from memory (fexecve: container runtimes, programs that
 * re-execute themselves) or code a JIT wrote into it: when the file behind
 * the mapping is ELF, registers it as kp_sym_object_get does and returns
 * its object id; when it is not, returns 0 and registers nothing (JIT
 * code: the caller names it from the process's perf map). A memfd that
 * cannot be reached any more (the process gone, or map_files not ours to
 * read) counts as ELF only when the mapping carries a build-id, which the
 * kernel reads from ELF notes alone. */
uint32_t kp_sym_memfd_get(struct kp_symbolizer *sym, const struct kp_mapping *m);

/* Returns the JIT map id (>= 1) for process pid, whose perf map is
 * /tmp/perf-NSPID.map under /proc/PID/root. Call when a sample lands in
 * anonymous executable memory; cheap on repeat. */
uint32_t kp_sym_jit_get(struct kp_symbolizer *sym, pid_t pid);
/* Whether path names a JIT's jitdump file ("DIR/jit-N.dump"), which a
 * process maps (PROT_EXEC, as perf expects) for its MMAP2 record to name
 * it. */
bool kp_sym_path_is_jitdump(const char *path);
/* Process m->pid mapped the jitdump m->path: it is opened and checked
 * now, while the process lives (docs/symbolize.md, "Jitdump files"), and
 * kept open; a file already open for another process (the same device
 * and inode) is shared, not read again. It is read as it grows
 * (kp_sym_jit_poll), also after the process's exit, and on at the first
 * lookup of a window (at most 256 MiB more); its loads name the process's
 * JIT code, with source lines, before its perf map does. */
void kp_sym_jitdump_mapped(struct kp_symbolizer *sym, const struct kp_mapping *m);
/* Reads what the jitdumps gained since the last call (8 MiB of file in
 * all at most, each in turn): call once a round while recording. */
void kp_sym_jit_poll(struct kp_symbolizer *sym);
/* The recorder's answer to whether [start, end) of process pid is JIT
 * code (not in a file mapping of it): a jitdump's loads elsewhere (V8's
 * builtins, which lie in node's binary) are ignored and counted. */
typedef bool (*kp_sym_jit_code_fn)(void *arg, pid_t pid, uint64_t start, uint64_t end);
void kp_sym_set_jit_code_check(struct kp_symbolizer *sym, kp_sym_jit_code_fn fn, void *arg);
/* The unwinding info of the JIT code covering addr in live process pid,
 * as its jitdump gave it so far (JIT_CODE_UNWINDING_INFO): the code's
 * range, a key no other code of the run shares, the .eh_frame and
 * .eh_frame_hdr bytes (owned by the symbolizer, valid until its next
 * call). False when none is known. For the unwinder, through profiler/. */
struct kp_sym_jit_unwind {
	uint64_t start, end, key;
	const uint8_t *eh_frame, *hdr;
	size_t eh_frame_len, hdr_len;
};
bool kp_sym_jit_unwind_info(struct kp_symbolizer *sym, pid_t pid, uint64_t addr,
			    struct kp_sym_jit_unwind *out);
/* The process is exiting: its perf map is opened and checked now, while
 * its path still leads to it, and that file is what its frames are named
 * from later; its jitdump is read on by the polls, within their budget,
 * not here (no long read while recording). No perf map is read: call it
 * while recording. Safe to call for pids without a JIT
 * id. */
void kp_sym_process_exit(struct kp_symbolizer *sym, pid_t pid);

/* The caller will resolve no more locations in object obj (a
 * KP_LOC_USER object id): its file is closed and its indexes are freed, so
 * memory holds one object's debuginfo at a time when locations are
 * resolved object by object. Names already returned stay valid; a later
 * resolve in obj gives [unknown]. */
void kp_sym_object_done(struct kp_symbolizer *sym, uint32_t obj);

/* The kernel addresses about to be resolved (optional): kallsyms is then
 * read once keeping only what these lookups need, instead of indexing all
 * of it. Resolving another kernel address later still works (the full
 * table is loaded then). */
void kp_sym_kernel_hint(struct kp_symbolizer *sym, const uint64_t *addrs, size_t n);

/* The addresses of JIT map id about to be resolved (optional, any order,
 * repeats allowed; give each map's all at once): the map is then read
 * once at its first lookup, streamed, keeping only the names of these
 * addresses, so memory grows with them and not with the map (JIT maps
 * grow to gigabytes). Resolving another address of that map later still
 * works, at the price of reading the map again. */
void kp_sym_jit_hint(struct kp_symbolizer *sym, uint32_t id, const uint64_t *addrs, size_t n);

/* Locations (struct kp_loc, enum kp_loc_kind) are the profile model's
 * (profile/profile.h). */

/* One frame of a location. The strings are interned by the symbolizer and
 * live until kp_sym_free. */
struct kp_sym_frame {
	const char *name; /* never NULL: "[unknown: WHY]" when nothing names it */
	/* The source position, as `addr2line -f -i` gives it: for the innermost
	 * frame the line-table row of the address, for each outer frame the
	 * call site of the inlined callee inside it (DW_AT_call_file,
	 * DW_AT_call_line). file is the path DWARF gives, made absolute with
	 * its unit's DW_AT_comp_dir when relative; NULL when unknown (no DWARF,
	 * kernel and JIT frames, no_lines). line is 0 when unknown, also for a
	 * line-0 row (which keeps its file). */
	const char *file;
	uint32_t line;
	uint8_t kind; /* enum kp_frame_kind (util/frame.h) */
};

/* What a frame nothing names is called: "[unknown: WHY]", so every tool
 * that reads folded text shows why (docs/symbolize.md, "Unknown frames").
 * A user frame of a file says which: "[unknown: FILE unreadable]" or
 * "[unknown: in FILE, outside every symbol]" (FILE the base name). All
 * start with KP_SYM_UNKNOWN_PREFIX. */
#define KP_SYM_UNKNOWN_PREFIX	      "[unknown"
#define KP_SYM_UNKNOWN_NO_MAPPING     "[unknown: no mapping]"
#define KP_SYM_UNKNOWN_NO_MAP	      "[unknown: anonymous, no perf map]"
#define KP_SYM_UNKNOWN_NOT_IN_MAP     "[unknown: anonymous, not in perf map]"
#define KP_SYM_UNKNOWN_NO_KALLSYMS    "[unknown: no kallsyms]"
#define KP_SYM_UNKNOWN_KERNEL_OUTSIDE "[unknown: outside kallsyms]"
#define KP_SYM_UNKNOWN_STOPPED	      "[unknown: naming stopped]"

/* Frames for one location, outermost first: the function, then any inlined
 * callees down to the innermost. */
struct kp_sym_frames {
	struct kp_sym_frame *frames;
	size_t n, cap;
};

/* Resolves loc into out (out->n is reset; at least one frame is always
 * written: "[unknown: WHY]" when nothing names the address, "[kernel]" when
 * kptr_restrict hides kernel addresses; both counted in the stats). Return addresses must already
 * be adjusted (pc - 1) by the caller. Returns true when something named the address, false when the
 * frame is an [unknown] placeholder. */
bool kp_sym_resolve(struct kp_symbolizer *sym, const struct kp_loc *loc, struct kp_sym_frames *out);
void kp_sym_frames_fini(struct kp_sym_frames *f);

/* For addresses given as an ELF file's virtual addresses, as addr2line
 * takes them (`kprof symbolize`): resolves vaddr in object obj into out,
 * as kp_sym_resolve does a file offset (not cached, but counted). Works
 * for separate debug files, whose code has no file offsets. */
bool kp_sym_resolve_vaddr(struct kp_symbolizer *sym, uint32_t obj, uint64_t vaddr,
			  struct kp_sym_frames *out);

/* Names every location of p (kernel, user and JIT ones; a [truncated]
 * marker as such), object by object, each object's file and debuginfo
 * released after its last location, and describes the mapping behind
 * each user and JIT location (path, build-id; the JIT map's process).
 * Locations that were named already are named again. */
void kp_sym_name_profile(struct kp_symbolizer *sym, struct kp_profile *p);

/* fn(arg) is called while kp_sym_name_profile names a profile, between
 * one object's locations and the next's (NULL: none): a continuous
 * recording reads its rings meanwhile, so that naming a window does not
 * make the next one lose samples. */
typedef void (*kp_sym_between_fn)(void *arg);
void kp_sym_set_between(struct kp_symbolizer *sym, kp_sym_between_fn fn, void *arg);
/* fn(arg) says whether the user asked kprof to stop (a signal; NULL:
 * never). kp_sym_name_profile asks it before each object's locations and
 * a debuginfod download asks it as it goes (at least once a second): once
 * it says yes, the download under way is cut, none starts any more this
 * run, and the locations not named yet are left KP_SYM_UNKNOWN_STOPPED
 * (counted as unresolved, and said in a note), so the profile is written
 * at once. */
typedef bool (*kp_sym_stop_fn)(void *arg);
void kp_sym_set_stop(struct kp_symbolizer *sym, kp_sym_stop_fn fn, void *arg);
/* No debuginfod download any more this run (the recording was stopped by
 * a signal: what is left to name is named from local files). */
void kp_sym_no_downloads(struct kp_symbolizer *sym);

/* The name of the kernel function at addr into buf (false: none known),
 * while recording: from a table already read, else from one read for addr
 * alone (from the per-boot copy of /proc/kallsyms when there is one) and
 * let go, so that naming the profile later reads what it needs as it
 * would have. */
bool kp_sym_kernel_name(struct kp_symbolizer *sym, uint64_t addr, char *buf, size_t size);

/* Reads the whole kernel symbol table now (a continuous recording, before
 * it starts, rather than while its first window's samples wait). */
void kp_sym_load_kernel(struct kp_symbolizer *sym);

/* Between two windows of a continuous recording, once the last one was
 * named: the cache of resolved locations keeps the named file and kernel
 * code (up to a bound; past it, it and the names handed out so far are
 * let go: a window's frames must be copied before, as
 * kp_sym_name_profile does), the JIT maps and jitdumps of processes that
 * exited go; objects no location asked for in the last `idle`
 * windows are released (their files closed, their indexes freed): their
 * number comes back and their ids in *released (the caller frees it),
 * for the recorder to ask kp_sym_object_get again at their next sample,
 * which opens the file anew (the same build only), and for the unwinder
 * to drop their tables. Memory then follows what the host runs now, not
 * what it ran over the hours. */
size_t kp_sym_next_window(struct kp_symbolizer *sym, uint32_t idle, uint32_t **released);

/* Whether the file open as fd is an ELF file of this machine's byte order. */
bool kp_sym_is_elf(int fd);

struct kp_sym_stats {
	uint64_t resolved[KP_LOC_NKINDS];   /* by enum kp_loc_kind: distinct locations named */
	uint64_t unresolved[KP_LOC_NKINDS]; /* by kind: distinct locations left [unknown] */
	uint64_t jit_bad_lines;		    /* malformed perf-map lines skipped */
	uint64_t jit_map_reads;		    /* passes over perf maps (one per map when hinted) */
	uint64_t jitdump_loads;		    /* code loads taken from jitdumps */
	uint64_t jitdump_ignored;	    /* jitdump loads outside JIT code, ignored */
	uint64_t jitdump_opens;		    /* jitdump files read: one per file, whatever maps it */
	uint64_t jitdump_cut;		    /* jitdumps read no further though not whole (noted) */
	uint64_t jitdump_bytes;		    /* what the jitdumps' state holds now */
	bool kptr_restricted;	    /* kallsyms addresses hidden: kernel shown as [kernel] */
	unsigned objects_held;	    /* objects whose file and indexes are held now */
	unsigned indexes_loaded;    /* builds named from their index in the cache */
	unsigned indexes_saved;	    /* builds indexed and saved to the cache this run */
	unsigned indexes_damaged;   /* saved indexes found damaged: ignored, removed, rebuilt */
	bool kallsyms_copy_damaged; /* the kallsyms copy was damaged: ignored, rewritten */
};
void kp_sym_stats(const struct kp_symbolizer *sym, struct kp_sym_stats *st);

/* Notes for the user (e.g. "ignored /tmp/perf-12.map: not owned by the
 * process's user"), one sentence each, collected while working. The
 * command line prints them; the array is owned by the symbolizer. */
const char *const *kp_sym_notes(const struct kp_symbolizer *sym, size_t *n);
/* Those of the notes that say a jitdump was read only in part (a cap,
 * the read budget, a stop), in the order they came: a continuous
 * recording says them with its windows. Owned by sym. */
const char *const *kp_sym_jitdump_cut_notes(const struct kp_symbolizer *sym, size_t *n);

#endif
