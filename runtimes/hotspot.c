/* The HotSpot reader's start (hotspot.h): libjvm.so's exported symbols,
 * found with libelf in the file, and the VM structs they point at, read
 * from the process into the dictionary of the fields kprof uses. The
 * tables are read in chunks of entries, every string through a bounded
 * read, at most MAX_ENTRIES entries of each: a fake JVM's table that never
 * ends costs that many reads, no more. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtimes/hotspotP.h"
#include "util/diag.h"
#include "util/xalloc.h"

/* A JDK 17 lists about 2,000 fields; a table past this is not a JVM's. */
#define MAX_ENTRIES 20000
/* Type and field names are short identifiers (the longest near 60). */
#define MAX_NAME 128
/* Entries read at once. */
#define CHUNK 32

static const char *const sym_names[KP_HS_NSYMS] = {
	[KP_HS_STRUCTS] = "gHotSpotVMStructs",
	[KP_HS_STRUCT_TYPE] = "gHotSpotVMStructEntryTypeNameOffset",
	[KP_HS_STRUCT_FIELD] = "gHotSpotVMStructEntryFieldNameOffset",
	[KP_HS_STRUCT_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[KP_HS_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[KP_HS_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[KP_HS_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[KP_HS_TYPES] = "gHotSpotVMTypes",
	[KP_HS_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[KP_HS_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
	[KP_HS_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[KP_HS_INTS] = "gHotSpotVMIntConstants",
	[KP_HS_INT_NAME] = "gHotSpotVMIntConstantEntryNameOffset",
	[KP_HS_INT_VALUE] = "gHotSpotVMIntConstantEntryValueOffset",
	[KP_HS_INT_STRIDE] = "gHotSpotVMIntConstantEntryArrayStride",
	[KP_HS_STRUCT_TYPESTRING] = "gHotSpotVMStructEntryTypeStringOffset",
};

static const struct {
	const char *type, *field;
} fields[F_N] = {
	[F_CC_HEAPS] = {"CodeCache", "_heaps"},
	[F_GA_LEN] = {"GrowableArrayBase", "_len"},
	[F_GA_DATA] = {"GrowableArray<int>", "_data"},
	[F_CH_MEMORY] = {"CodeHeap", "_memory"},
	[F_CH_SEGMAP] = {"CodeHeap", "_segmap"},
	[F_CH_LOG2] = {"CodeHeap", "_log2_segment_size"},
	[F_VS_LOW] = {"VirtualSpace", "_low_boundary"},
	[F_VS_HIGH] = {"VirtualSpace", "_high_boundary"},
	[F_CB_NAME] = {"CodeBlob", "_name"},
	[F_CB_SIZE] = {"CodeBlob", "_size"},
	[F_CB_FRAME_DONE] = {"CodeBlob", "_frame_complete_offset"},
	[F_CB_FRAME_SIZE] = {"CodeBlob", "_frame_size"},
	[F_CB_CODE_BEGIN] = {"CodeBlob", "_code_begin"},
	[F_CB_CODE_OFF] = {"CodeBlob", "_code_offset"},
	[F_CM_METHOD] = {"CompiledMethod", "_method"},
	[F_NM_METHOD] = {"nmethod", "_method"},
	[F_CM_SCOPES_DATA] = {"CompiledMethod", "_scopes_data_begin"},
	[F_NM_SCOPES_DATA] = {"nmethod", "_scopes_data_offset"},
	[F_NM_METADATA] = {"nmethod", "_metadata_offset"},
	[F_NM_SCOPES_PCS] = {"nmethod", "_scopes_pcs_offset"},
	[F_NM_DEPS] = {"nmethod", "_dependencies_offset"},
	[F_PC_PC] = {"PcDesc", "_pc_offset"},
	[F_PC_SCOPE] = {"PcDesc", "_scope_decode_offset"},
	[F_M_CONST] = {"Method", "_constMethod"},
	[F_CM_CONSTANTS] = {"ConstMethod", "_constants"},
	[F_CM_NAME_IDX] = {"ConstMethod", "_name_index"},
	[F_CM_SIG_IDX] = {"ConstMethod", "_signature_index"},
	[F_CP_HOLDER] = {"ConstantPool", "_pool_holder"},
	[F_CP_LENGTH] = {"ConstantPool", "_length"},
	[F_K_NAME] = {"Klass", "_name"},
	[F_SYM_LENGTH] = {"Symbol", "_length"},
	[F_SYM_BODY] = {"Symbol", "_body"},
};

static const char *const types[T_N] = {
	[T_HEAP_BLOCK] = "HeapBlock",
	[T_CONSTANT_POOL] = "ConstantPool",
	[T_PC_DESC] = "PcDesc",
};

const char *kp_hotspot_sym_name(enum kp_hotspot_sym s)
{
	return s < KP_HS_NSYMS ? sym_names[s] : "?";
}

/* The load bias of the file mapped at map_start from map_pgoff: the
 * PT_LOAD segment holding that offset places it. */
static bool load_bias(Elf *elf, uint64_t map_start, uint64_t map_pgoff, uint64_t *bias)
{
	size_t n;

	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	for (size_t i = 0; i < n && i < 64; i++) {
		GElf_Phdr ph;
		uint64_t off;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		off = ph.p_offset & ~(uint64_t)4095;
		if (map_pgoff < off || map_pgoff >= ph.p_offset + ph.p_filesz)
			continue;
		*bias = map_start - (map_pgoff - off) - (ph.p_vaddr & ~(uint64_t)4095);
		return true;
	}
	return false;
}

int kp_hotspot_symbols(int fd, uint64_t map_start, uint64_t map_pgoff, struct kp_hotspot_syms *out,
		       struct kp_diag *d)
{
	Elf *elf;
	Elf_Scn *scn = NULL;
	uint64_t bias;
	size_t found = 0;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return elf_end(elf), kp_diag_set(d, -EINVAL, "libjvm.so is not an ELF file");
	if (!load_bias(elf, map_start, map_pgoff, &bias)) {
		elf_end(elf);
		return kp_diag_set(d, -EINVAL, "libjvm.so's mapping matches none of its segments");
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    strncmp((name = elf_strptr(elf, sh.sh_link, sym.st_name)) ? name : "",
				    "gHotSpotVM", 10) != 0)
				continue;
			for (size_t s = 0; s < KP_HS_NSYMS; s++) {
				if (!out->addr[s] && strcmp(name, sym_names[s]) == 0) {
					out->addr[s] = sym.st_value + bias;
					found++;
				}
			}
		}
	}
	elf_end(elf);
	if (!out->addr[KP_HS_STRUCTS])
		return kp_diag_set(d, -ENOENT, "libjvm.so exports no gHotSpotVMStructs");
	for (size_t s = 0; s < KP_HS_STRUCT_TYPESTRING; s++)
		if (!out->addr[s])
			return kp_diag_set(d, -ENOENT, "libjvm.so exports no %s", sym_names[s]);
	(void)found;
	return 0;
}

bool kp_hs_read(struct kp_hotspot *h, uint64_t addr, void *buf, size_t len)
{
	ssize_t n;

	if (len > HS_MAX_READ || !addr || addr + len < addr)
		return false;
	h->st.reads++;
	n = h->read(h->arg, addr, buf, len);
	if (n != (ssize_t)len) {
		h->st.read_fails++;
		return false;
	}
	h->st.read_bytes += len;
	return true;
}

bool kp_hs_u64(struct kp_hotspot *h, uint64_t addr, uint64_t *v)
{
	return kp_hs_read(h, addr, v, 8);
}

bool kp_hs_read_str(struct kp_hotspot *h, uint64_t addr, char *buf, size_t max)
{
	ssize_t n;

	if (!addr || max < 2 || max > HS_MAX_READ)
		return false;
	/* up to the page's end first: the next page may be unmapped */
	size_t first = 4096 - (addr & 4095);

	h->st.reads++;
	n = h->read(h->arg, addr, buf, first < max - 1 ? first : max - 1);
	if (n > 0 && !memchr(buf, 0, (size_t)n) && (size_t)n < max - 1) {
		ssize_t m = h->read(h->arg, addr + (uint64_t)n, buf + n, max - 1 - (size_t)n);

		h->st.reads++;
		n = m > 0 ? n + m : n;
	}
	if (n <= 0) {
		h->st.read_fails++;
		return false;
	}
	buf[n] = 0;
	return memchr(buf, 0, (size_t)n) != NULL;
}

/* Reads the word the symbol s points at (its variable's value). */
static bool sym_u64(struct kp_hotspot *h, const struct kp_hotspot_syms *syms, enum kp_hotspot_sym s,
		    uint64_t *v)
{
	return syms->addr[s] && kp_hs_u64(h, syms->addr[s], v);
}

/* One table's layout: the array, its stride, where the fields lie. */
struct table {
	uint64_t base, stride;
	uint64_t off[6];
	size_t noff;
};

/* A string an entry points at, through a one-entry cache (entries of one
 * type come together). */
static bool entry_str(struct kp_hotspot *h, uint64_t p, uint64_t *last, char *buf)
{
	if (p && p == *last)
		return true;
	*last = 0;
	if (!kp_hs_read_str(h, p, buf, MAX_NAME))
		return false;
	*last = p;
	return true;
}

/* Reads the table's entries in chunks, calling visit on each with its
 * bytes; stops at an entry whose first name pointer is null. */
static bool table_walk(struct kp_hotspot *h, const struct table *tb,
		       bool (*visit)(struct kp_hotspot *h, const struct table *tb,
				     const unsigned char *e, void *ctx),
		       void *ctx)
{
	unsigned char buf[HS_MAX_READ];
	size_t per = HS_MAX_READ / tb->stride;

	if (per > CHUNK)
		per = CHUNK;
	for (size_t i = 0; i < MAX_ENTRIES; i += per) {
		if (!kp_hs_read(h, tb->base + i * tb->stride, buf, per * tb->stride)) {
			/* the table's end may be the mapping's: one at a time */
			per = 1;
			if (!kp_hs_read(h, tb->base + i * tb->stride, buf, tb->stride))
				return false;
		}
		for (size_t j = 0; j < per; j++) {
			uint64_t name;

			memcpy(&name, buf + j * tb->stride + tb->off[0], 8);
			if (!name)
				return true;
			if (!visit(h, tb, buf + j * tb->stride, ctx))
				return false;
		}
	}
	return false; /* no end: not a JVM's table */
}

struct walk_names {
	uint64_t last_type, last_field, last_ctype;
	char type[MAX_NAME], field[MAX_NAME], ctype[MAX_NAME];
};

/* An integer field's width from its C type ("int16_t", "u2", "int"). */
static uint8_t ctype_width(const char *t)
{
	static const char *const two[] = {"int16_t", "uint16_t", "u2", "jshort", "short"};

	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++)
		if (strcmp(t, two[i]) == 0)
			return 2;
	return 4;
}

static bool visit_struct(struct kp_hotspot *h, const struct table *tb, const unsigned char *e,
			 void *ctx)
{
	struct walk_names *w = ctx;
	uint64_t tp, fp, off, addr;
	int32_t is_static;

	memcpy(&tp, e + tb->off[0], 8);
	memcpy(&fp, e + tb->off[1], 8);
	memcpy(&is_static, e + tb->off[2], 4);
	memcpy(&off, e + tb->off[3], 8);
	memcpy(&addr, e + tb->off[4], 8);
	if (!fp)
		return true;
	if (!entry_str(h, tp, &w->last_type, w->type) ||
	    !entry_str(h, fp, &w->last_field, w->field))
		return true; /* an unreadable name: that entry is not used */
	for (size_t f = 0; f < F_N; f++) {
		if (h->have[f] || strcmp(fields[f].field, w->field) != 0 ||
		    strcmp(fields[f].type, w->type) != 0)
			continue;
		h->f[f] = is_static ? addr : off;
		h->have[f] = true;
		h->width[f] = 4;
		if (tb->noff > 5) {
			uint64_t cp;

			memcpy(&cp, e + tb->off[5], 8);
			if (entry_str(h, cp, &w->last_ctype, w->ctype))
				h->width[f] = ctype_width(w->ctype);
		}
	}
	return true;
}

static bool visit_type(struct kp_hotspot *h, const struct table *tb, const unsigned char *e,
		       void *ctx)
{
	struct walk_names *w = ctx;
	uint64_t tp, size;

	memcpy(&tp, e + tb->off[0], 8);
	memcpy(&size, e + tb->off[1], 8);
	if (!entry_str(h, tp, &w->last_type, w->type))
		return true;
	for (size_t t = 0; t < T_N; t++)
		if (!h->t[t] && strcmp(types[t], w->type) == 0)
			h->t[t] = size;
	return true;
}

static bool visit_int(struct kp_hotspot *h, const struct table *tb, const unsigned char *e,
		      void *ctx)
{
	struct walk_names *w = ctx;
	uint64_t np;
	int32_t v;

	memcpy(&np, e + tb->off[0], 8);
	memcpy(&v, e + tb->off[1], 4);
	if (!entry_str(h, np, &w->last_type, w->type))
		return true;
	if (strcmp(w->type, "frame::interpreter_frame_method_offset") == 0)
		h->method_slot = v;
	else if (strcmp(w->type, "frame::interpreter_frame_sender_sp_offset") == 0)
		h->sender_sp_slot = v;
	return true;
}

/* A table's layout from its symbols: the array's address (the variable
 * holds a pointer to it), its stride and its fields' offsets, each
 * within the stride. */
static bool table_layout(struct kp_hotspot *h, const struct kp_hotspot_syms *syms,
			 enum kp_hotspot_sym arr, enum kp_hotspot_sym stride,
			 const enum kp_hotspot_sym *offs, const size_t *widths, size_t n,
			 struct table *tb)
{
	memset(tb, 0, sizeof(*tb));
	if (!sym_u64(h, syms, arr, &tb->base) || !sym_u64(h, syms, stride, &tb->stride) ||
	    !hs_ptr_ok(tb->base) || tb->stride < 8 || tb->stride > 256)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!sym_u64(h, syms, offs[i], &tb->off[i]) || tb->off[i] + widths[i] > tb->stride)
			return false;
	}
	tb->noff = n;
	return true;
}

/* Reads the three tables into the dictionary. */
static const char *read_tables(struct kp_hotspot *h, const struct kp_hotspot_syms *syms)
{
	static const enum kp_hotspot_sym so[] = {KP_HS_STRUCT_TYPE,    KP_HS_STRUCT_FIELD,
						 KP_HS_STRUCT_STATIC,  KP_HS_STRUCT_OFFSET,
						 KP_HS_STRUCT_ADDRESS, KP_HS_STRUCT_TYPESTRING};
	static const size_t sw[] = {8, 8, 4, 8, 8, 8};
	static const enum kp_hotspot_sym to[] = {KP_HS_TYPE_NAME, KP_HS_TYPE_SIZE};
	static const enum kp_hotspot_sym io[] = {KP_HS_INT_NAME, KP_HS_INT_VALUE};
	static const size_t tw[] = {8, 8}, iw[] = {8, 4};
	struct walk_names *w = kp_xcalloc(1, sizeof(*w));
	struct table tb;
	const char *why = NULL;

	if (!table_layout(h, syms, KP_HS_STRUCTS, KP_HS_STRUCT_STRIDE, so, sw,
			  syms->addr[KP_HS_STRUCT_TYPESTRING] ? 6 : 5, &tb) ||
	    !table_walk(h, &tb, visit_struct, w))
		why = "its VM structs table does not check out";
	memset(w, 0, sizeof(*w));
	if (!why && (!table_layout(h, syms, KP_HS_TYPES, KP_HS_TYPE_STRIDE, to, tw, 2, &tb) ||
		     !table_walk(h, &tb, visit_type, w)))
		why = "its VM types table does not check out";
	memset(w, 0, sizeof(*w));
	if (!why && (!table_layout(h, syms, KP_HS_INTS, KP_HS_INT_STRIDE, io, iw, 2, &tb) ||
		     !table_walk(h, &tb, visit_int, w)))
		why = "its VM int constants table does not check out";
	free(w);
	return why;
}

/* The fields kprof cannot do without, whichever form the JDK has. */
static const char *check_fields(struct kp_hotspot *h)
{
	static const enum hs_field need[] = {
		F_CC_HEAPS,	 F_GA_LEN,	  F_GA_DATA, F_CH_MEMORY,    F_CH_SEGMAP,
		F_CH_LOG2,	 F_VS_LOW,	  F_VS_HIGH, F_CB_NAME,	     F_CB_SIZE,
		F_CB_FRAME_DONE, F_CB_FRAME_SIZE, F_M_CONST, F_CM_CONSTANTS, F_CM_NAME_IDX,
		F_CM_SIG_IDX,	 F_CP_HOLDER,	  F_K_NAME,  F_SYM_LENGTH,   F_SYM_BODY};

	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		if (!h->have[need[i]]) {
			snprintf(h->missing, sizeof(h->missing),
				 "its VM structs have no %s::%s (a JDK kprof does not know)",
				 fields[need[i]].type, fields[need[i]].field);
			return h->missing;
		}
	}
	if (!h->have[F_CB_CODE_BEGIN] && !h->have[F_CB_CODE_OFF])
		return "no CodeBlob code start in its VM structs";
	if (!h->have[F_CM_METHOD] && !h->have[F_NM_METHOD])
		return "no nmethod Method in its VM structs";
	/* the inlined methods need the nmethod's scopes and metadata (JDK 25
	 * moved its metadata where its VM structs do not say: its compiled
	 * frames are named by their own method alone) */
	h->scopes_ok = (h->have[F_CM_SCOPES_DATA] || h->have[F_NM_SCOPES_DATA]) &&
		       h->have[F_NM_METADATA] && h->have[F_NM_SCOPES_PCS] && h->have[F_NM_DEPS] &&
		       h->have[F_PC_PC] && h->have[F_PC_SCOPE] && h->t[T_PC_DESC] &&
		       h->t[T_PC_DESC] <= 64;
	if (!h->t[T_CONSTANT_POOL] || h->t[T_CONSTANT_POOL] > 4096 || h->t[T_HEAP_BLOCK] > 256)
		return "a type's size in its VM types does not check out";
	for (size_t f = 0; f < F_N; f++)
		if (h->have[f] && f != F_CC_HEAPS && h->f[f] > 4096)
			return "a field's offset in its VM structs does not check out";
	return NULL;
}

struct kp_hotspot *kp_hotspot_new(const struct kp_hotspot_syms *syms, kp_hotspot_read_fn read,
				  void *arg, struct kp_diag *d)
{
	struct kp_hotspot *h = kp_xcalloc(1, sizeof(*h));
	const char *why;

	h->read = read;
	h->arg = arg;
	/* x86-64's interpreter frame (frame_x86.hpp), when not exported */
	h->method_slot = -3;
	h->sender_sp_slot = -1;
	why = read_tables(h, syms);
	if (!why)
		why = check_fields(h);
	if (!why && (h->method_slot < -32 || h->method_slot > -1 || h->sender_sp_slot < -32 ||
		     h->sender_sp_slot > -1))
		why = "its interpreter frame layout does not check out";
	if (!why) {
		if (!h->t[T_HEAP_BLOCK])
			h->t[T_HEAP_BLOCK] = 16;
		/* JDK 17 keeps debug info in the CompressedStream form that
		 * later JDKs replaced with UNSIGNED5 */
		h->jdk17_streams = h->have[F_CM_SCOPES_DATA];
		h->heaps_addr = h->f[F_CC_HEAPS];
		/* a JVM sampled as it starts may have no code heap yet: they
		 * are read again at every kp_hotspot_flush */
		kp_hs_heaps_read(h);
	}
	if (why) {
		kp_diag_set(d, -EINVAL, "%s", why);
		kp_hotspot_free(h);
		return NULL;
	}
	h->strs = kp_strtab_new();
	kp_u64map_init(&h->blob_names);
	kp_u64map_init(&h->method_names);
	kp_u64map_init(&h->pcs);
	return h;
}

void kp_hotspot_free(struct kp_hotspot *h)
{
	if (!h)
		return;
	if (h->strs) {
		kp_strtab_free(h->strs);
		kp_u64map_fini(&h->blob_names);
		kp_u64map_fini(&h->method_names);
		kp_u64map_fini(&h->pcs);
	}
	free(h->frames);
	free(h);
}

void kp_hotspot_flush(struct kp_hotspot *h)
{
	kp_strtab_free(h->strs);
	h->strs = kp_strtab_new();
	kp_u64map_fini(&h->blob_names);
	kp_u64map_init(&h->blob_names);
	kp_u64map_fini(&h->method_names);
	kp_u64map_init(&h->method_names);
	kp_u64map_fini(&h->pcs);
	kp_u64map_init(&h->pcs);
	h->nframes = 0;
	h->st.flushes++;
	kp_hs_heaps_read(h); /* the heaps grow as code is committed */
}

uint64_t kp_hotspot_generation(const struct kp_hotspot *h)
{
	return h->st.flushes;
}

bool kp_hotspot_field(const struct kp_hotspot *h, const char *type, const char *field,
		      uint64_t *val)
{
	for (size_t f = 0; f < F_N; f++) {
		if (h->have[f] && strcmp(fields[f].type, type) == 0 &&
		    strcmp(fields[f].field, field) == 0) {
			*val = h->f[f];
			return true;
		}
	}
	return false;
}

bool kp_hotspot_type_size(const struct kp_hotspot *h, const char *type, uint64_t *size)
{
	for (size_t t = 0; t < T_N; t++) {
		if (h->t[t] && strcmp(types[t], type) == 0) {
			*size = h->t[t];
			return true;
		}
	}
	return false;
}

int kp_hotspot_interp_method_slot(const struct kp_hotspot *h)
{
	return h->method_slot;
}

int kp_hotspot_interp_sender_sp_slot(const struct kp_hotspot *h)
{
	return h->sender_sp_slot;
}

void kp_hotspot_stats(const struct kp_hotspot *h, struct kp_hotspot_stats *st)
{
	*st = h->st;
}
