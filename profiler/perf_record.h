/* profiler/ is sampling (profile/ is the model it fills).
 *
 * kp_perf_record: perf ring-buffer records parsed into plain structs (a
 * .kprof file is a recording, formats/recording.h; `kprof record` is the
 * command).
 *
 * The layout of a record depends on the event's sample_type; kprof always
 * uses the layout described by struct kp_perf_record_layout, which
 * kp_perf_attr_init (perf_event.c) sets up. Pointers inside a parsed record
 * (callchain, filename, stack) point into the raw record: valid as long as
 * it is. */
#ifndef KP_PROFILER_PERF_RECORD_H
#define KP_PROFILER_PERF_RECORD_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the events' sample_type / sample_id_all carry. */
struct kp_perf_record_layout {
	uint64_t sample_type;
	uint64_t sample_regs_user; /* mask, for PERF_SAMPLE_REGS_USER */
};

/* The sample_id trailer every non-sample record carries (sample_id_all). */
struct kp_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t id; /* PERF_SAMPLE_IDENTIFIER (or ID): which event */
};

struct kp_sample {
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu;
	uint64_t period;
	uint64_t nr;	      /* callchain length */
	const uint64_t *ips;  /* callchain, leaf first, with PERF_CONTEXT_* markers */
	uint64_t regs_abi;    /* PERF_SAMPLE_REGS_USER: 0 = none */
	const uint64_t *regs; /* one per bit of sample_regs_user, in bit order */
	uint64_t nregs;
	uint64_t stack_size; /* PERF_SAMPLE_STACK_USER: bytes copied */
	const unsigned char *stack;
	uint64_t stack_dyn_size;  /* bytes of those that are valid */
	bool user_mode;		  /* the sample hit user code (misc) */
	uint64_t id;		  /* PERF_SAMPLE_IDENTIFIER: which event */
	const unsigned char *raw; /* PERF_SAMPLE_RAW: a tracepoint's fields */
	uint32_t raw_size;
};

/* SWITCH and SWITCH_CPU_WIDE: a task went off or came on a CPU (the task
 * is the record's sample_id: pid, tid, time). */
struct kp_switch {
	bool out;	    /* switched out (else in) */
	bool preempt;	    /* out while runnable (PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) */
	uint32_t other_pid; /* CPU-wide: the task coming in (out) or going out (in) */
	uint32_t other_tid;
};

struct kp_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t maj, min;
	uint64_t ino;
	const uint8_t *build_id; /* NULL unless PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint8_t build_id_size;
	uint32_t prot, flags;
	const char *filename; /* NUL-terminated inside the record (checked) */
};

struct kp_comm {
	uint32_t pid, tid;
	const char *comm;
	bool exec; /* PERF_RECORD_MISC_COMM_EXEC */
};

struct kp_task { /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
	uint64_t time;
};

struct kp_perf_record {
	uint32_t type; /* PERF_RECORD_* */
	struct kp_sample_id id;
	union {
		struct kp_sample sample;
		struct kp_mmap2 mmap2;
		struct kp_comm comm;
		struct kp_task task;
		struct kp_switch sw;
		uint64_t lost; /* LOST and LOST_SAMPLES: how many */
	};
};

/* Parses hdr (hdr->size bytes). Returns 0, -EINVAL for a record too short
 * or inconsistent for its type (counted by the caller, never trusted), or
 * -ENOTSUP for a record type kprof does not use. */
int kp_perf_record_parse(const struct kp_perf_record_layout *layout,
			 const struct perf_event_header *hdr, struct kp_perf_record *rec);

/* Time of any record (the sample's time, or the sample_id trailer's);
 * 0 when it has none. Cheap: used to order records before parsing. */
uint64_t kp_perf_record_time(const struct kp_perf_record_layout *layout,
			     const struct perf_event_header *hdr);

/* Copies hdr into dst (hdr->size bytes of room) without the bytes of its
 * user stack copy past dyn_size (the kernel reserves the whole requested
 * size, 8 KiB by default, and fills what the stack used), the copy's size
 * rounded up to 8; any other record, or one that does not parse, whole.
 * Returns the size written. */
size_t kp_perf_record_compact(const struct kp_perf_record_layout *layout,
			      const struct perf_event_header *hdr, void *dst);
#endif
