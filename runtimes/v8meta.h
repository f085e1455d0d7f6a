/* runtimes/ is what kprof knows of language runtimes' own data.
 *
 * kp_v8meta: V8's postmortem metadata, the v8dbg_* symbols node (or
 * libnode) exports for debuggers (llnode, mdb_v8): each symbol's value is
 * a constant of that build of V8: an object's field offset
 * (v8dbg_class_CLASS__FIELD__TYPE), an instance type
 * (v8dbg_type_CLASS__TYPE), a frame slot (v8dbg_off_fp_*), a tag. Read
 * from the object's ELF file with libelf; every value kprof uses is
 * checked against what it can be, so a crafted file gives "no metadata",
 * never offsets that point anywhere (runtimes/v8.c bounds each read
 * anyway). */
#ifndef KP_RUNTIMES_V8META_H
#define KP_RUNTIMES_V8META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The constants runtimes/v8.c reads the heap with. Offsets are bytes
 * from an object's start (its tagged address minus the heap tag). */
struct kp_v8meta {
	/* tags */
	int64_t heap_tag, heap_tag_mask, smi_tag_mask, smi_shift, tagged_size;
	/* strings: instance type bits */
	int64_t not_string_mask, encoding_mask, one_byte_tag, repr_mask, seq_tag, cons_tag,
		thin_tag, sliced_tag;
	int64_t first_nonstring_type;
	/* instance types */
	int64_t type_js_function, type_sfi, type_scope_info, type_script, type_fixed_array,
		type_bytecode_array, type_code, type_byte_array, type_weak_fixed_array;
	/* offsets */
	int64_t obj_map, map_instance_type, fn_shared, fn_context, fn_proto, context_prev,
		sfi_name_or_scope, sfi_script, sfi_function_data, script_name, script_source,
		script_line_ends, array_length, array_data, string_length, seq_one_chars,
		seq_two_chars, cons_first, cons_second, thin_actual, sliced_parent, sliced_offset,
		code_bytecode, code_deopt, code_positions;
	int64_t scope_first_vars, scope_ncontextlocals;
	/* frame slots, from the frame pointer */
	int64_t fp_function, fp_context, fp_bytecode_array;
	/* where the embedded builtins lie in the file (file offsets of its
	 * Builtins_* symbols, when its symbol table has them): only code
	 * there and JIT code holds JavaScript frames; 0, 0 when unknown */
	uint64_t builtins_lo, builtins_hi;
	uint32_t nsyms; /* v8dbg_* symbols found */
};

/* Reads the metadata of the ELF file open on fd (not closed). Returns 0,
 * or -1 with why[0..size) saying what is missing or wrong ("no v8dbg
 * symbols", "pointer compression", "bad value of v8dbg_..."). */
int kp_v8meta_read(int fd, struct kp_v8meta *out, char *why, size_t size);
/* The same from values given by name ("v8dbg_..."), as a file would give
 * them (names not of the metadata are skipped): for the tests' captures
 * and the fuzzer. The builtins' range stays 0, 0. */
int kp_v8meta_from(const char *const *names, const int64_t *values, size_t n, struct kp_v8meta *out,
		   char *why, size_t size);
/* The metadata kprof took from m, as (name without "v8dbg_", value)
 * pairs into names and values (room for max); returns how many: what a
 * capture writes for kp_v8meta_from to read back (a class field's name
 * is its prefix, "class_X__field__", which kp_v8meta_from matches). */
size_t kp_v8meta_names(const struct kp_v8meta *m, const char **names, int64_t *values, size_t max);

#endif
