/* A process that plays node to kprof (tests/e2e/node_hostile.sh): its
 * executable exports V8's postmortem metadata (the values of node 20, so
 * kprof takes them), and its main thread spins in anonymous executable
 * memory inside a frame that looks like a JavaScript frame, whose context
 * and function slots lead into a heap crafted as VARIANT says:
 *   selfmap    the function is its own map and its own shared info
 *   conscycle  the name a cons string whose halves are itself, 2^28 long
 *   hugelines  a script whose line ends claim 2^24 entries past the heap
 *   bigsource  no line ends, a source of 2^28 characters, a position 1 GiB in
 *   unmapped   the function slot pointing at unmapped memory
 *   kernel     the function slot pointing into the kernel's half
 *   race       a good function whose words a second thread changes all
 *              the time (map, shared info, name, lengths)
 *   loop       a frame-pointer chain that points to itself
 * Usage: v8_hostile VARIANT SECONDS */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define V(name, val) __attribute__((used, visibility("default"))) const int v8dbg_##name = val;
V(HeapObjectTag, 1)
V(HeapObjectTagMask, 3)
V(SmiTagMask, 1)
V(SmiShiftSize, 31)
V(TaggedSize, 8)
V(IsNotStringMask, -128)
V(StringEncodingMask, 8)
V(OneByteStringTag, 8)
V(StringRepresentationMask, 7)
V(SeqStringTag, 0)
V(ConsStringTag, 1)
V(ThinStringTag, 5)
V(SlicedStringTag, 3)
V(FirstNonstringType, 128)
V(type_JSFunction__JS_FUNCTION_TYPE, 2066)
V(type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE, 262)
V(type_ScopeInfo__SCOPE_INFO_TYPE, 261)
V(type_Script__SCRIPT_TYPE, 167)
V(type_FixedArray__FIXED_ARRAY_TYPE, 175)
V(type_BytecodeArray__BYTECODE_ARRAY_TYPE, 191)
V(type_Code__CODE_TYPE, 245)
V(class_HeapObject__map__int, 0)
V(class_Map__instance_type__int, 12)
V(class_JSFunction__shared__int, 24)
V(class_JSFunction__context__int, 32)
V(context_idx_prev, 1)
V(class_SharedFunctionInfo__name_or_scope_info__int, 16)
V(class_SharedFunctionInfo__script_or_debug_info__int, 32)
V(class_SharedFunctionInfo__function_data__int, 8)
V(class_Script__name__int, 16)
V(class_Script__line_ends__int, 56)
V(class_Script__source__int, 8)
V(class_FixedArrayBase__length__int, 8)
V(class_FixedArray__data__int, 16)
V(class_String__length__int, 12)
V(class_SeqOneByteString__chars__int, 16)
V(class_SeqTwoByteString__chars__int, 16)
V(class_ConsString__first__int, 16)
V(class_ConsString__second__int, 24)
V(class_ThinString__actual__int, 16)
V(class_SlicedString__parent__int, 16)
V(class_SlicedString__offset__int, 24)
V(class_Code__bytecode_or_interpreter_data__int, 16)
V(scopeinfo_idx_first_vars, 3)
V(scopeinfo_idx_ncontextlocals, 2)
V(off_fp_function, -16)
V(off_fp_context, -8)
V(off_fp_bytecode_array, -32)

/* the offsets and types above, for building the heap */
enum {
	MAPTYPE_OFF = 12,
	FN_SHARED = 24,
	FN_CONTEXT = 32,
	SFI_NAME = 16,
	SFI_SCRIPT = 32,
	SCRIPT_NAME = 16,
	SCRIPT_LINE_ENDS = 56,
	SCRIPT_SOURCE = 8,
	ARRAY_LENGTH = 8,
	STR_LENGTH = 12,
	STR_CHARS = 16,
	CONS_FIRST = 16,
	CONS_SECOND = 24,
	T_FUNCTION = 2066,
	T_SFI = 262,
	T_SCOPE = 261,
	T_SCRIPT = 167,
	T_FIXED = 175,
	T_ONE_BYTE = 8,
	T_CONS = 9,
};

static uint64_t heap[8192] __attribute__((aligned(64)));
static size_t top = 16;

static uint64_t smi(int64_t v)
{
	return (uint64_t)v << 32;
}

/* A new object of n bytes; its tagged address. */
static uint64_t alloc(size_t n)
{
	uint64_t a = (uint64_t)(uintptr_t)&heap[top];

	top += (n + 15) / 8 + 1;
	if (top >= sizeof(heap) / 8)
		abort();
	return a + 1;
}

static void set(uint64_t obj, int off, uint64_t v)
{
	memcpy((char *)(uintptr_t)(obj - 1 + (uint64_t)off), &v, 8);
}

static uint64_t map_of(unsigned type)
{
	uint64_t m = alloc(80);
	uint16_t t = (uint16_t)type;

	memcpy((char *)(uintptr_t)(m - 1 + MAPTYPE_OFF), &t, 2);
	return m;
}

static uint64_t object(unsigned type, size_t n)
{
	uint64_t o = alloc(n);

	set(o, 0, map_of(type));
	return o;
}

static uint64_t string(const char *s)
{
	uint64_t o = object(T_ONE_BYTE, STR_CHARS + strlen(s));
	int32_t len = (int32_t)strlen(s);

	memcpy((char *)(uintptr_t)(o - 1 + STR_LENGTH), &len, 4);
	memcpy((char *)(uintptr_t)(o - 1 + STR_CHARS), s, strlen(s));
	return o;
}

static uint64_t fn, ctx, sfi, script;
static volatile int racing = 1;

/* A good function named NAME in /h/hostile.js. */
static void good(const char *name)
{
	ctx = object(T_FIXED, 32);
	script = object(T_SCRIPT, 128);
	set(script, SCRIPT_NAME, string("/h/hostile.js"));
	set(script, SCRIPT_LINE_ENDS, smi(0));
	sfi = object(T_SFI, 64);
	set(sfi, SFI_NAME, string(name));
	set(sfi, SFI_SCRIPT, script);
	fn = object(T_FUNCTION, 64);
	set(fn, FN_SHARED, sfi);
	set(fn, FN_CONTEXT, ctx);
}

static void *race(void *arg)
{
	uint64_t words[] = {fn, sfi, ctx, script, smi(0), 0xffff888000000001ull, 1, smi(1 << 30)};
	uint64_t x = 88172645463325252ull;

	(void)arg;
	while (racing) {
		uint64_t *objs[] = {(uint64_t *)(uintptr_t)(fn - 1),
				    (uint64_t *)(uintptr_t)(sfi - 1),
				    (uint64_t *)(uintptr_t)(script - 1)};

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		objs[x % 3][x / 3 % 8] = words[x / 24 % 8];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	static const unsigned char spin[] = {0x55, 0x48, 0x89, 0xe5, 0x56, 0x57, 0xeb, 0xfe};
	const char *v = argc > 1 ? argv[1] : "selfmap";
	unsigned char *code;
	pthread_t t;

	if (!strcmp(v, "selfmap")) {
		good("never");
		set(fn, 0, fn);
		memcpy((char *)(uintptr_t)(fn - 1 + MAPTYPE_OFF), &(uint16_t){T_FUNCTION}, 2);
		set(fn, FN_SHARED, fn);
	} else if (!strcmp(v, "conscycle")) {
		uint64_t c;
		int32_t len = (1 << 28) - 1;

		good("never");
		c = object(T_CONS, 32);
		memcpy((char *)(uintptr_t)(c - 1 + STR_LENGTH), &len, 4);
		set(c, CONS_FIRST, c);
		set(c, CONS_SECOND, c);
		set(sfi, SFI_NAME, c);
	} else if (!strcmp(v, "hugelines") || !strcmp(v, "bigsource")) {
		uint64_t scope = object(T_SCOPE, 96), arr;

		good("never");
		/* function scope, a function variable, its position */
		set(scope, 8, smi(2 | 1 << 12));
		set(scope, 16, smi(0));
		set(scope, 24, smi(0));
		set(scope, 32, string(v[0] == 'h' ? "hostileLines" : "hostileSource"));
		set(scope, 40, smi(-1));
		set(scope, 48, smi(v[0] == 'h' ? 1 << 30 : 1 << 20));
		set(scope, 56, smi(1 << 30));
		set(sfi, SFI_NAME, scope);
		if (v[0] == 'h') {
			arr = object(T_FIXED, 32);
			set(arr, ARRAY_LENGTH, smi(1 << 24));
			set(script, SCRIPT_LINE_ENDS, arr);
		} else {
			/* a source of 2^28 one-byte characters, 2 MiB of them mapped */
			char *src = mmap(NULL, 2 << 20, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			uint64_t s = (uint64_t)(uintptr_t)src + 1;
			int32_t len = 1 << 28;

			memset(src, '\n', 2 << 20);
			set(s, 0, map_of(T_ONE_BYTE));
			memcpy(src + STR_LENGTH, &len, 4);
			set(script, SCRIPT_SOURCE, s);
		}
	} else if (!strcmp(v, "unmapped")) {
		good("never");
		fn = 0xdead00000001ull;
	} else if (!strcmp(v, "kernel")) {
		good("never");
		fn = 0xffff888000000001ull;
		ctx = 0xffff888000000001ull;
	} else if (!strcmp(v, "race")) {
		good("raceFunction");
		pthread_create(&t, NULL, race, NULL);
	} else if (!strcmp(v, "loop")) {
		static const unsigned char selfloop[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89,
							 0x6d, 0x00, 0x56, 0x57, 0xeb, 0xfe};

		good("loopFunction");
		code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memcpy(code, selfloop, sizeof(selfloop)); /* mov %rbp, (%rbp): [fp] = fp */
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		alarm(argc > 2 ? (unsigned)atoi(argv[2]) : 5);
		((void (*)(uint64_t, uint64_t))(uintptr_t)code)(fn, ctx);
		return 0;
	} else {
		fprintf(stderr, "v8_hostile: no variant %s\n", v);
		return 2;
	}
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1,
		    0);
	if (code == MAP_FAILED)
		return 1;
	memcpy(code, spin, sizeof(spin));
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	/* the spin never returns: the alarm ends the process */
	alarm(argc > 2 ? (unsigned)atoi(argv[2]) : 5);
	((void (*)(uint64_t, uint64_t))(uintptr_t)code)(fn, ctx);
	return 0;
}
