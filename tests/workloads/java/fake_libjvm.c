// A hostile fake of libjvm.so for tests/e2e/java_hostile.sh: it exports
// the VM structs symbols kprof reads a JVM by (docs/java.md), crafted
// the way MODE says, and spins in anonymous code that its fake code
// cache claims, so that kprof's HotSpot reader reads every crafted
// structure at every sample. Built as libjvm.so; fake_jvm_run(MODE)
// never returns.
//
//   endless   a VM structs table with no end
//   wild      the tables' pointers lead to unmapped memory
//   segmap    a valid dictionary; the code heap's segment map loops
//   blob      the blob's header: a frame size of 1 GiB, a size past the heap
//   scopes    the scopes: a sender that is itself, a method index past
//             the metadata, Methods that point at themselves
//   names     names of 65535 bytes of terminal escapes and no NUL
//   deep      a frame size that sends the caller past the stack
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct sentry {
	const char *type, *field, *typestr;
	int32_t is_static;
	uint64_t offset;
	void *address;
};
struct tentry {
	const char *type, *super;
	int32_t oop, integer, unsig;
	uint64_t size;
};
struct ientry {
	const char *name;
	int32_t value;
};

struct sentry *gHotSpotVMStructs;
uint64_t gHotSpotVMStructEntryTypeNameOffset = offsetof(struct sentry, type);
uint64_t gHotSpotVMStructEntryFieldNameOffset = offsetof(struct sentry, field);
uint64_t gHotSpotVMStructEntryTypeStringOffset = offsetof(struct sentry, typestr);
uint64_t gHotSpotVMStructEntryIsStaticOffset = offsetof(struct sentry, is_static);
uint64_t gHotSpotVMStructEntryOffsetOffset = offsetof(struct sentry, offset);
uint64_t gHotSpotVMStructEntryAddressOffset = offsetof(struct sentry, address);
uint64_t gHotSpotVMStructEntryArrayStride = sizeof(struct sentry);
struct tentry *gHotSpotVMTypes;
uint64_t gHotSpotVMTypeEntryTypeNameOffset = offsetof(struct tentry, type);
uint64_t gHotSpotVMTypeEntrySizeOffset = offsetof(struct tentry, size);
uint64_t gHotSpotVMTypeEntryArrayStride = sizeof(struct tentry);
struct ientry *gHotSpotVMIntConstants;
uint64_t gHotSpotVMIntConstantEntryNameOffset = offsetof(struct ientry, name);
uint64_t gHotSpotVMIntConstantEntryValueOffset = offsetof(struct ientry, value);
uint64_t gHotSpotVMIntConstantEntryArrayStride = sizeof(struct ientry);

// the fake JVM's structures, laid out as the dictionary below says
struct vspace {
	char *low, *high;
};
struct heap {
	struct vspace memory, segmap;
	int32_t log2;
};
struct garray {
	int32_t len, cap;
	struct heap **data;
};
struct blob { // CodeBlob and nmethod in one
	const char *name;
	int32_t size, frame_done, frame_size, metadata, pcs, deps, scopes_off;
	char *code_begin;
	void *method, *scopes;
};
struct pcdesc {
	int32_t pc, scope, obj, flags;
};
struct symbol {
	uint16_t len;
	char body[65536];
};

static struct heap heap, *heaps[1] = {&heap};
static struct garray garray = {1, 1, heaps};
static struct garray *code_heaps = &garray;

#define F(t, f, off)                   \
	{                              \
#t, #f, "x", 0, off, 0 \
	}
static struct sentry fields[] = {
	{"CodeCache", "_heaps", "x", 1, 0, &code_heaps},
	F(GrowableArrayBase, _len, offsetof(struct garray, len)),
	{"GrowableArray<int>", "_data", "x", 0, offsetof(struct garray, data), 0},
	F(CodeHeap, _memory, offsetof(struct heap, memory)),
	F(CodeHeap, _segmap, offsetof(struct heap, segmap)),
	F(CodeHeap, _log2_segment_size, offsetof(struct heap, log2)),
	F(VirtualSpace, _low_boundary, offsetof(struct vspace, low)),
	F(VirtualSpace, _high_boundary, offsetof(struct vspace, high)),
	F(CodeBlob, _name, offsetof(struct blob, name)),
	F(CodeBlob, _size, offsetof(struct blob, size)),
	F(CodeBlob, _frame_complete_offset, offsetof(struct blob, frame_done)),
	F(CodeBlob, _frame_size, offsetof(struct blob, frame_size)),
	F(CodeBlob, _code_begin, offsetof(struct blob, code_begin)),
	F(CompiledMethod, _method, offsetof(struct blob, method)),
	F(CompiledMethod, _scopes_data_begin, offsetof(struct blob, scopes)),
	F(nmethod, _metadata_offset, offsetof(struct blob, metadata)),
	F(nmethod, _scopes_pcs_offset, offsetof(struct blob, pcs)),
	F(nmethod, _dependencies_offset, offsetof(struct blob, deps)),
	F(PcDesc, _pc_offset, 0),
	F(PcDesc, _scope_decode_offset, 4),
	F(Method, _constMethod, 0),
	F(ConstMethod, _constants, 0),
	F(ConstMethod, _name_index, 8),
	F(ConstMethod, _signature_index, 10),
	F(ConstantPool, _pool_holder, 0),
	F(Klass, _name, 0),
	F(Symbol, _length, 0),
	F(Symbol, _body, 2),
	{0, 0, 0, 0, 0, 0},
};
static struct tentry types[] = {
	{"HeapBlock", 0, 0, 0, 0, 16},
	{"ConstantPool", 0, 0, 0, 0, 16},
	{"PcDesc", 0, 0, 0, 0, 16},
	{0, 0, 0, 0, 0, 0},
};
static struct ientry ints[] = {{"frame::interpreter_frame_method_offset", -3}, {0, 0}};

// Method, ConstMethod, ConstantPool, Klass in one object, every pointer
// to itself: each field read from it leads back to it
static void *selfish[8];
// a Method as the dictionary lays it out, its names the Symbol given
static void *method[1], *cmethod[2], *cpool[8], *klass[1];

static void method_named(struct symbol *sym)
{
	uint16_t idx[2] = {1, 2};

	method[0] = cmethod;
	cmethod[0] = cpool;
	memcpy(&cmethod[1], idx, sizeof(idx)); // name and signature indexes
	cpool[0] = klass;
	cpool[3] = sym; // ConstantPool's 16 bytes, then the slots: 1 and 2
	cpool[4] = sym;
	klass[0] = sym;
}

int fake_jvm_run(const char *mode)
{
	size_t size = 1 << 20;
	unsigned char *code = mmap(NULL, size, PROT_READ | PROT_WRITE | PROT_EXEC,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static unsigned char segmap[1 << 14];
	// the blob from code + 16 (after its HeapBlock): its code at 512,
	// metadata at 1024, scopes at 2048, PcDescs from 4096 to 8192
	struct blob *b = (struct blob *)(code + 16);
	unsigned char *loop = code + 512, *scopes = code + 2048;
	void **metadata = (void **)(code + 1024);
	struct pcdesc *pcs = (struct pcdesc *)(code + 4096);
	static struct symbol sym;

	if (code == MAP_FAILED)
		return 1;
	gHotSpotVMStructs = fields;
	gHotSpotVMTypes = types;
	gHotSpotVMIntConstants = ints;
	heap.memory.low = (char *)code;
	heap.memory.high = (char *)code + size;
	heap.segmap.low = (char *)segmap;
	heap.log2 = 6;
	segmap[0] = 0; // one blob over the heap, hops back to its start
	for (size_t i = 1; i < sizeof(segmap); i++)
		segmap[i] = i < 255 ? (unsigned char)i : 254;
	*b = (struct blob){"nmethod", 1 << 19,	    0,	     4,	    1024 - 16, 4096 - 16, 8192 - 16,
			   0,	      (char *)loop, selfish, scopes};
	for (int i = 0; i < 8; i++)
		selfish[i] = selfish;
	for (int i = 0; i < 128; i++)
		metadata[i] = selfish;
	for (int i = 0; i < 256; i++)
		pcs[i] = (struct pcdesc){i * 8, 1 + i % 3, 0, 0};
	memset(scopes, 0xff, 2048); // ints of five bytes, no end
	if (!strcmp(mode, "endless")) {
		size_t n = 30000;
		struct sentry *e = calloc(n, sizeof(*e));

		for (size_t i = 0; e && i < n; i++)
			e[i] = (struct sentry){"CodeBlob", "_name", "x", 0, 8, 0};
		gHotSpotVMStructs = e;
	} else if (!strcmp(mode, "wild")) {
		gHotSpotVMStructs = (void *)0xdead0000;
		gHotSpotVMTypes = (void *)0x10;
	} else if (!strcmp(mode, "segmap")) {
		memset(segmap, 1, sizeof(segmap)); // each segment: "one back", to 0
	} else if (!strcmp(mode, "blob")) {
		b->frame_size = 1 << 27;
		b->size = 0x7fffffff;
		b->code_begin = (char *)code - 4096;
	} else if (!strcmp(mode, "scopes")) {
		scopes[1] = 1; // at offset 1: sender 1 (itself), method 1, bci
		scopes[2] = 1;
		scopes[3] = 1;
		scopes[5] = 0; // at offset 4 (PcDescs name 1, 2, 3): method 200
		scopes[6] = 200;
	} else if (!strcmp(mode, "names")) {
		sym.len = 65535;
		for (size_t i = 0; i < sizeof(sym.body); i++)
			sym.body[i] = "\x1b[31m\r\n\x07;("[i % 10];
		method_named(&sym);
		metadata[0] = method;
		for (int d = 1; d <= 3; d++) { // sender 0, method 1, bci 0
			scopes[d] = 0;
			scopes[d + 1] = 1;
			scopes[d + 2] = 1;
		}
		b->method = method;
	} else if (!strcmp(mode, "deep")) {
		sym.len = 4;
		memcpy(sym.body, "Deep", 4);
		method_named(&sym);
		b->method = method;
		b->frame_size = 1 << 16; // 512 KiB: the caller is past the copy
	}
	// spin where the blob's code is: jmp . (eb fe)
	loop[0] = 0xeb;
	loop[1] = 0xfe;
	((void (*)(void))loop)();
	return 0;
}
