/* kp_mapping: a mapping of a process, the one description of it in kprof.
 * /proc/PID/maps (procfs/maps.h) and MMAP2 records fill it, the process
 * table keeps it (profiler/proctab.h), the file behind it is opened
 * through it (procfs/root.h) and named (symbolize/symbolize.h), and the
 * unwinder steps through it (unwind/unwind.h): each takes it as it is. */
#ifndef KP_PROCFS_MAPPING_H
#define KP_PROCFS_MAPPING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What a mapping's path says it maps (kp_mapping_kind_of). */
enum kp_mapping_kind {
	KP_MAPPING_FILE = 0, /* a file: symbolized from its ELF */
	KP_MAPPING_VDSO,     /* [vdso] */
	KP_MAPPING_ANON,     /* anonymous executable memory: JIT code */
	KP_MAPPING_OTHER,    /* [vsyscall], [stack] ...: nothing to name it by */
	/* "/memfd:NAME (deleted)": a program run from memory when the memfd
	 * holds ELF, else code a JIT wrote into it; the recorder decides at
	 * the first sample in it (kp_sym_memfd_get) and makes it
	 * KP_MAPPING_FILE or KP_MAPPING_ANON */
	KP_MAPPING_MEMFD,
};

/* The most a build-id from an MMAP2 record holds. */
#define KP_MAPPING_BUILD_ID_MAX 20

struct kp_mapping {
	uint64_t start, end, pgoff;
	uint64_t ino;	   /* 0: unknown, not checked */
	uint32_t maj, min; /* device, 0 if unknown */
	/* as the process sees it, maybe with " (deleted)"; "[vdso]" for the
	 * vDSO, "" for anonymous memory. Borrowed from whoever filled the
	 * mapping (the maps reader's line, the process table's strings). */
	const char *path;
	pid_t pid;	       /* the process that maps it; <= 0: none to reach it through */
	uint32_t obj;	       /* the object id the symbolizer gave the file behind it
				* (kp_sym_object_get), as the process table keeps it;
				* 0: none asked for yet, or no file (anonymous, JIT) */
	uint8_t kind;	       /* enum kp_mapping_kind */
	bool exec;	       /* executable (the process table keeps only these) */
	uint8_t build_id_size; /* 0: none given */
	uint8_t build_id[KP_MAPPING_BUILD_ID_MAX];
};

/* What path (as /proc/PID/maps or an MMAP2 record gives it) maps. */
enum kp_mapping_kind kp_mapping_kind_of(const char *path);

/* Whether path names a memfd the way the kernel prints one in
 * /proc/PID/maps and MMAP2 records: "/memfd:NAME (deleted)", where NAME
 * may hold anything (spaces, another " (deleted)"). No path leads to a
 * memfd: only /proc/PID/map_files reaches it, while the process lives.
 * False for NULL. */
bool kp_mapping_path_is_memfd(const char *path);

#endif
