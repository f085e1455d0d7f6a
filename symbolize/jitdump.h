/* kp_jitdump: a JIT's jitdump file (perf's format: a header, then
 * JIT_CODE_LOAD, MOVE, DEBUG_INFO, CLOSE and UNWINDING_INFO records;
 * Linux's tools/perf/Documentation/jitdump-specification.txt), parsed as
 * it grows: only complete records are taken, a record still being written
 * is read by a later call. What names need is kept (each load's range,
 * name, source lines, and its unwinding info's bytes), never its code.
 * For every address the last load covering it wins; a MOVE moves a load's
 * range. Internal to symbolize/ (jit.c opens and reads the file). */
#ifndef KP_SYMBOLIZE_JITDUMP_H
#define KP_SYMBOLIZE_JITDUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/strtab.h"
#include "util/u64map.h"

/* Decides whether a load's code [start, end) is JIT code of the process
 * (false: ignored and counted). */
typedef bool (*kp_jitdump_keep_fn)(void *arg, uint64_t start, uint64_t end);

/* A line's file when the record's name was not text: the script the
 * load's name ends with (V8's "NAME SCRIPT:LINE:COLUMN"). */
#define KP_JITDUMP_LOAD_SCRIPT UINT32_MAX

struct kp_jitdump_line {
	uint32_t off;  /* from the code's start */
	uint32_t line; /* from 1 */
	uint32_t file; /* strings id, or KP_JITDUMP_LOAD_SCRIPT */
};

/* A debug entry as read, before its load. */
struct kp_jitdump_entry {
	uint64_t addr;
	uint32_t line, file;
};

/* One load. */
struct kp_jitdump_code {
	uint64_t start, size, index;
	/* its name, as the JIT wrote it (cut at KP_JITDUMP_NAME_MAX): a
	 * strings id, or 0 when read through a file (kp_jitdump_read): then
	 * name_len bytes at offset name_off, read again when named, so that
	 * a load's name costs nothing until one of its addresses is sampled */
	uint32_t name, name_len;
	uint64_t name_off;
	uint32_t nlines;
	struct kp_jitdump_line *lines; /* sorted by off */
	/* the load's unwinding info as the record held it: .eh_frame, then
	 * .eh_frame_hdr (its last hdr_len bytes); NULL when none */
	uint8_t *unwind;
	uint32_t unwind_len, hdr_len;
	uint32_t refs; /* pieces that cover part of it: freed at 0 */
};

/* A piece of the address space and the load covering it: a node of a
 * treap ordered by start (loads come in any address order; a sorted
 * array cost a memmove per load, quadratic for descending addresses). */
struct kp_jitdump_piece {
	uint64_t start, end;
	uint32_t code;	      /* index in codes */
	uint32_t left, right; /* node indexes, 0: none */
	uint32_t prio;
};

enum kp_jitdump_state {
	KP_JITDUMP_HEADER = 0, /* waiting for the header */
	KP_JITDUMP_RECORDS,    /* reading records */
	KP_JITDUMP_CLOSED,     /* JIT_CODE_CLOSE seen: nothing more is read */
	KP_JITDUMP_REFUSED,    /* not a jitdump kprof reads (error says why) */
	KP_JITDUMP_BROKEN,     /* a record that cannot be skipped (error says why) */
	KP_JITDUMP_FULL,       /* its state reached max_bytes: read no further */
};

/* Longest name kept of a load or a debug entry's file: longer ones are
 * cut (a frame's name is cut at 4 KiB anyway, as a perf map's, so the
 * rest could never show; a JIT's real names are under 1 KiB). */
#define KP_JITDUMP_NAME_MAX 4096

struct kp_jitdump_stats {
	uint64_t loads;		/* loads taken */
	uint64_t ignored;	/* loads outside the process's JIT code (keep said no) */
	uint64_t bad_records;	/* records skipped: sizes or fields that do not hold */
	uint64_t unmatched;	/* debug info for another address, moves of unknown code */
	uint64_t unknown_types; /* records of types after UNWINDING_INFO, skipped */
};

struct kp_jitdump {
	enum kp_jitdump_state state;
	char error[96];
	uint64_t off;  /* file offset parsed to */
	uint64_t need; /* a whole record of this size must be in the buffer */
	bool v8;       /* V8's header: debug entries 0x40 above the code */
	int fd; /* the file, once kp_jitdump_read has read it (names are read from it); else -1 */
	kp_jitdump_keep_fn keep;
	void *keep_arg;
	struct kp_strtab *strings; /* borrowed */
	struct kp_jitdump_code *codes;
	size_t ncodes, codes_cap;
	struct kp_jitdump_piece *pieces; /* treap nodes from 1, disjoint ranges */
	size_t npieces, pieces_cap;	 /* live pieces; nodes allocated */
	uint32_t root, free_node;	 /* the treap's root; the free list's head */
	uint32_t seed;
	/* the state's bytes (arrays as allocated, names, lines, unwinding
	 * info); past max_bytes (0: no cap) the file is read no further */
	uint64_t bytes, max_bytes;
	/* returns true when a long read must stop now (a stop signal is
	 * pending); NULL: never */
	bool (*stop)(void);
	/* the last read stopped at its budget or a stop, with more of the
	 * file (size_seen bytes then) to read */
	bool short_read;
	uint64_t size_seen;
	struct kp_u64map by_index; /* code_index -> codes index */
	/* a DEBUG_INFO or UNWINDING_INFO record describes the next load */
	bool have_dbg;
	uint64_t dbg_addr;
	struct kp_jitdump_entry *dbg;
	size_t ndbg, dbg_cap;
	uint8_t *unw;
	uint32_t unw_len, unw_hdr_len;
	struct kp_jitdump_stats st;
};

/* strings interns names and files (borrowed: it must outlive jd, and may
 * be shared by several files); keep may be NULL (every load is kept). */
void kp_jitdump_init(struct kp_jitdump *jd, struct kp_strtab *strings, kp_jitdump_keep_fn keep,
		     void *keep_arg);
void kp_jitdump_fini(struct kp_jitdump *jd);

/* Parses buf[0..avail), the file's bytes from jd->off on, of which the
 * file holds file_left (>= avail): every whole record is taken (a load's
 * code is skipped: it may lie past avail); returns the file's bytes
 * consumed, jd->off moved by as much (more than avail when the code of
 * the last load taken lies past it). Stops at a record not yet whole in the file (read
 * later), at one that is whole in the file but not in buf (jd->need
 * says its size), and for good at CLOSE, a refused header or a broken
 * record (jd->state). */
uint64_t kp_jitdump_parse(struct kp_jitdump *jd, const uint8_t *buf, size_t avail,
			  uint64_t file_left);
/* Reads fd from jd->off on, at most budget bytes of it (0: to its end),
 * through a buffer; fd is kept (borrowed: it must stay open while jd
 * lives) to read names from. Returns 0 or a negative errno (-EINTR when
 * jd->stop said so). */
int kp_jitdump_read(struct kp_jitdump *jd, int fd, uint64_t budget);

/* The first piece whose end is above addr, or NULL: the pieces in order
 * are next(jd, 0), then next(jd, p->end) after p. Owned by jd. */
const struct kp_jitdump_piece *kp_jitdump_next(const struct kp_jitdump *jd, uint64_t addr);
/* The load covering addr, or NULL (owned by jd, valid until the next parse). */
const struct kp_jitdump_code *kp_jitdump_find(const struct kp_jitdump *jd, uint64_t addr);
/* The source line of addr in code (the last entry at or before it):
 * false when the debug info says nothing there. *file is NULL when the
 * entry's file is the script the load names (KP_JITDUMP_LOAD_SCRIPT). */
bool kp_jitdump_line(const struct kp_jitdump *jd, const struct kp_jitdump_code *code, uint64_t addr,
		     const char **file, uint32_t *line);
/* The frame name of addr in code into buf (size > 3), made safe for folded
 * text: the load's name, its trailing "SCRIPT:LINE[:COLUMN]" (V8's
 * position of the function) replaced by the script and line of addr
 * when the debug info has them ("JS:*f /a.js:12"). Returns its length. */
size_t kp_jitdump_name(const struct kp_jitdump *jd, const struct kp_jitdump_code *code,
		       uint64_t addr, char *buf, size_t size);

#endif
