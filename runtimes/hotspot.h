/* kp_hotspot: a running HotSpot JVM read from outside, through the
 * description of itself that libjvm.so exports (the "VM structs" that
 * OpenJDK's serviceability agent reads): gHotSpotVMStructs (type, field,
 * offset or address of each field the JVM describes), gHotSpotVMTypes
 * (each type's size), gHotSpotVMIntConstants and the layout of their
 * entries (gHotSpotVMStructEntry*Offset, ...ArrayStride). From them:
 *
 *   the code cache      its heaps, each heap's segment map, the code blob
 *                       holding a pc (its kind, name, frame size)
 *   compiled frames     an nmethod's Method and, at a pc, its scopes (the
 *                       methods inlined there, innermost first)
 *   interpreted frames  the Method in the frame (at fp + the interpreter's
 *                       method offset)
 *   names               Method -> ConstMethod -> ConstantPool -> holder
 *                       Klass, name and signature Symbols, written as the
 *                       JVM's perf map writes them: "int pkg.Cls.m(long)"
 *
 * Nothing read is trusted: the process may be a fake that exports crafted
 * tables. Every read is bounded (kp_hotspot_read_fn, never more than a
 * few KiB at once), every count and string length capped, every pointer a
 * structure follows checked for alignment and range, and what does not
 * check out is an error with a reason (a static string), never a crash,
 * a loop or unbounded memory. The JVM is never stopped: memory is read
 * as it is (process_vm_readv), so a structure may change under a read;
 * such a read gives a wrong name at worst, or an error.
 *
 * What is read is cached (per pc of code, per Method) until
 * kp_hotspot_flush, which the caller calls every so often: code blobs are
 * freed and their memory reused as the JVM runs (docs/java.md). */
#ifndef KP_RUNTIMES_HOTSPOT_H
#define KP_RUNTIMES_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct kp_diag;
struct kp_hotspot;

/* Reads len bytes of the JVM's memory at addr into buf: bytes read, or
 * -errno. */
typedef ssize_t (*kp_hotspot_read_fn)(void *arg, uint64_t addr, void *buf, size_t len);

/* The symbols of libjvm.so the reader starts from. */
enum kp_hotspot_sym {
	KP_HS_STRUCTS,
	KP_HS_STRUCT_TYPE,
	KP_HS_STRUCT_FIELD,
	KP_HS_STRUCT_STATIC,
	KP_HS_STRUCT_OFFSET,
	KP_HS_STRUCT_ADDRESS,
	KP_HS_STRUCT_STRIDE,
	KP_HS_TYPES,
	KP_HS_TYPE_NAME,
	KP_HS_TYPE_SIZE,
	KP_HS_TYPE_STRIDE,
	KP_HS_INTS,
	KP_HS_INT_NAME,
	KP_HS_INT_VALUE,
	KP_HS_INT_STRIDE,
	KP_HS_STRUCT_TYPESTRING, /* optional: the fields' C types (their widths) */
	KP_HS_NSYMS
};

/* Their addresses in the process (0: not exported). */
struct kp_hotspot_syms {
	uint64_t addr[KP_HS_NSYMS];
};

/* The names of the symbols, for the capture of fixtures and messages. */
const char *kp_hotspot_sym_name(enum kp_hotspot_sym s);

/* Finds the symbols in libjvm.so open on fd, mapped executable at
 * [map_start, ...) from file offset map_pgoff. 0, or -errno with d set
 * (-ENOENT: not a HotSpot that exports VM structs). */
int kp_hotspot_symbols(int fd, uint64_t map_start, uint64_t map_pgoff, struct kp_hotspot_syms *out,
		       struct kp_diag *d);

/* A reader of the JVM whose memory read(arg, ...) reads: the VM structs
 * read now (about 2,000 reads for a JDK 17, once). NULL with d set when
 * they do not check out (or the JVM is of a layout kprof does not know). */
struct kp_hotspot *kp_hotspot_new(const struct kp_hotspot_syms *syms, kp_hotspot_read_fn read,
				  void *arg, struct kp_diag *d);
void kp_hotspot_free(struct kp_hotspot *h);

/* Forgets what was cached of code blobs and methods. */
void kp_hotspot_flush(struct kp_hotspot *h);
/* How many times the caches were forgotten (by kp_hotspot_flush, or when
 * full): a pointer the reader returned is valid while this stays. */
uint64_t kp_hotspot_generation(const struct kp_hotspot *h);

/* The dictionary: the offset of a field (or a static field's address),
 * a type's size. False when the JVM does not describe it. */
bool kp_hotspot_field(const struct kp_hotspot *h, const char *type, const char *field,
		      uint64_t *val);
bool kp_hotspot_type_size(const struct kp_hotspot *h, const char *type, uint64_t *size);

enum kp_hotspot_kind {
	KP_HSF_NONE = 0,    /* not in the code cache */
	KP_HSF_COMPILED,    /* an nmethod: stepped by its frame size */
	KP_HSF_INTERPRETED, /* the interpreter: stepped by its frame pointer */
	KP_HSF_STUB,	    /* another blob (stubs, adapters, the call stub) */
	KP_HSF_BAD,	    /* in the code cache, but what was read there does not check out */
};

/* Inlining is followed this deep, and no further. */
#define KP_HOTSPOT_MAX_SCOPES 16

/* What the JVM says of the code at a pc. Method pointers and names are
 * the reader's (valid until kp_hotspot_flush). */
struct kp_hotspot_frame {
	uint8_t kind;	     /* enum kp_hotspot_kind */
	bool in_prologue;    /* the pc is before the frame is complete */
	uint32_t frame_size; /* bytes, return address included (compiled, stubs) */
	const char *why;     /* KP_HSF_BAD: what did not check out */
	const char *blob;    /* the blob's name ("Interpreter", "nmethod", ...) */
	size_t nscopes;	     /* compiled: the methods at the pc, innermost first */
	uint64_t methods[KP_HOTSPOT_MAX_SCOPES];
};

/* The code at pc (exact: the sampled pc; else a return address, whose
 * scopes are those of its call). *out is the reader's, valid until the
 * next call. */
const struct kp_hotspot_frame *kp_hotspot_frame_at(struct kp_hotspot *h, uint64_t pc, bool exact);

/* The offset from an interpreted frame's fp of its Method (words), its
 * sender's sp: fp + 8 * the offset holds them. */
int kp_hotspot_interp_method_slot(const struct kp_hotspot *h);
int kp_hotspot_interp_sender_sp_slot(const struct kp_hotspot *h);

/* The name of Method method ("int pkg.Cls.m(long)"), escaped: the
 * reader's, valid until kp_hotspot_flush; NULL with *why when the Method
 * does not check out. */
const char *kp_hotspot_method_name(struct kp_hotspot *h, uint64_t method, const char **why);

struct kp_hotspot_stats {
	uint64_t reads, read_bytes, read_fails;
	uint64_t pcs, methods; /* cache misses */
	uint64_t flushes;
};
void kp_hotspot_stats(const struct kp_hotspot *h, struct kp_hotspot_stats *st);

#endif
