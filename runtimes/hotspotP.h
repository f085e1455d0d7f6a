/* What the files of the HotSpot reader share (hotspot.h): hotspot.c reads
 * the symbols and the VM structs into the dictionary below, hotspot_code.c
 * the code cache, blobs and scopes, hotspot_names.c the Methods' names. */
#ifndef KP_RUNTIMES_HOTSPOTP_H
#define KP_RUNTIMES_HOTSPOTP_H

#include <string.h>

#include "runtimes/hotspot.h"
#include "util/strtab.h"
#include "util/u64map.h"

/* The fields kprof reads, by (type, field); a JDK names some otherwise
 * (both are listed, whichever the JVM describes is used). */
enum hs_field {
	F_CC_HEAPS,	  /* CodeCache::_heaps: GrowableArray<CodeHeap*>* (static) */
	F_GA_LEN,	  /* GrowableArrayBase::_len */
	F_GA_DATA,	  /* GrowableArray<int>::_data */
	F_CH_MEMORY,	  /* CodeHeap::_memory: VirtualSpace */
	F_CH_SEGMAP,	  /* CodeHeap::_segmap: VirtualSpace */
	F_CH_LOG2,	  /* CodeHeap::_log2_segment_size */
	F_VS_LOW,	  /* VirtualSpace::_low_boundary */
	F_VS_HIGH,	  /* VirtualSpace::_high_boundary */
	F_CB_NAME,	  /* CodeBlob::_name */
	F_CB_SIZE,	  /* CodeBlob::_size */
	F_CB_FRAME_DONE,  /* CodeBlob::_frame_complete_offset */
	F_CB_FRAME_SIZE,  /* CodeBlob::_frame_size (words) */
	F_CB_CODE_BEGIN,  /* CodeBlob::_code_begin (JDK 17) */
	F_CB_CODE_OFF,	  /* CodeBlob::_code_offset (later) */
	F_CM_METHOD,	  /* CompiledMethod::_method (JDK 17) */
	F_NM_METHOD,	  /* nmethod::_method (later) */
	F_CM_SCOPES_DATA, /* CompiledMethod::_scopes_data_begin (JDK 17) */
	F_NM_SCOPES_DATA, /* nmethod::_scopes_data_offset (later) */
	F_NM_METADATA,	  /* nmethod::_metadata_offset */
	F_NM_SCOPES_PCS,  /* nmethod::_scopes_pcs_offset */
	F_NM_DEPS,	  /* nmethod::_dependencies_offset */
	F_PC_PC,	  /* PcDesc::_pc_offset */
	F_PC_SCOPE,	  /* PcDesc::_scope_decode_offset */
	F_M_CONST,	  /* Method::_constMethod */
	F_CM_CONSTANTS,	  /* ConstMethod::_constants */
	F_CM_NAME_IDX,	  /* ConstMethod::_name_index */
	F_CM_SIG_IDX,	  /* ConstMethod::_signature_index */
	F_CP_HOLDER,	  /* ConstantPool::_pool_holder */
	F_CP_LENGTH,	  /* ConstantPool::_length */
	F_K_NAME,	  /* Klass::_name */
	F_SYM_LENGTH,	  /* Symbol::_length */
	F_SYM_BODY,	  /* Symbol::_body */
	F_N
};

enum hs_type { T_HEAP_BLOCK, T_CONSTANT_POOL, T_PC_DESC, T_N };

/* At most this many code heaps (JDK 17 has 3 with segmented code cache). */
#define HS_MAX_HEAPS 8

struct hs_heap {
	uint64_t low, high; /* the code's reserved range */
	uint64_t segmap;    /* its segment map: a byte per segment */
	uint32_t log2_seg;
};

struct kp_hotspot {
	kp_hotspot_read_fn read;
	void *arg;
	uint64_t f[F_N];
	bool have[F_N];
	uint8_t width[F_N]; /* an integer field's bytes (its C type): 4 unless told */
	bool scopes_ok;	    /* the fields of an nmethod's scopes are all known */
	uint64_t t[T_N];
	int method_slot, sender_sp_slot; /* interpreter frame, words from fp */
	uint64_t heaps_addr;		 /* CodeCache::_heaps's address */
	struct hs_heap heaps[HS_MAX_HEAPS];
	size_t nheaps;
	bool jdk17_streams; /* debug info in the old CompressedStream form */
	char missing[128];  /* the field a JVM's VM structs lacked */
	/* caches until kp_hotspot_flush */
	struct kp_strtab *strs;	       /* names read */
	struct kp_u64map blob_names;   /* CodeBlob::_name pointer -> strs id */
	struct kp_u64map method_names; /* Method* -> strs id, or 0 with why index */
	struct kp_u64map pcs;	       /* pc << 1 | exact -> index in frames */
	struct kp_hotspot_frame *frames;
	size_t nframes, capframes;
	struct kp_hotspot_frame scratch;
	struct kp_hotspot_stats st;
};

/* Reads exactly len bytes (len <= HS_MAX_READ): false when it cannot. */
#define HS_MAX_READ 4096
bool kp_hs_read(struct kp_hotspot *h, uint64_t addr, void *buf, size_t len);
/* Reads a NUL-terminated string of at most max - 1 bytes into buf. */
bool kp_hs_read_str(struct kp_hotspot *h, uint64_t addr, char *buf, size_t max);
bool kp_hs_u64(struct kp_hotspot *h, uint64_t addr, uint64_t *v);

/* The code heaps, read again (hotspot_code.c). false: none check out. */
bool kp_hs_heaps_read(struct kp_hotspot *h);

/* The integer field f of the structure whose bytes are at p, as wide as
 * its C type (2 or 4 bytes; JDK 25's _frame_complete_offset is an
 * int16_t), sign-extended. */
static inline int32_t hs_int(const struct kp_hotspot *h, const unsigned char *p, enum hs_field f)
{
	int16_t s;
	int32_t v;

	if (h->width[f] == 2) {
		memcpy(&s, p + h->f[f], 2);
		return s;
	}
	memcpy(&v, p + h->f[f], 4);
	return v;
}

/* An address that may point at a structure of the JVM: not null, aligned,
 * below the user half's end. */
static inline bool hs_ptr_ok(uint64_t p)
{
	return p >= 4096 && !(p & 7) && p < ((uint64_t)1 << 47);
}

#endif
