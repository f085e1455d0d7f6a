/* V8's postmortem metadata from an ELF file (see v8meta.h): the v8dbg_*
 * symbols of its dynamic symbol table, else of its symbol table, each
 * value read from the section that holds it (0 in .bss). */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtimes/v8meta.h"

/* A symbol kprof needs, by the start of its name: a class field's type
 * suffix differs between versions (__Object, __HeapObject), so
 * "class_X__field__" matches any. */
struct want {
	const char *name;
	size_t off; /* of the field of struct kp_v8meta */
	bool optional;
};

#define F(field) offsetof(struct kp_v8meta, field)
static const struct want wants[] = {
	{"HeapObjectTag", F(heap_tag), false},
	{"HeapObjectTagMask", F(heap_tag_mask), false},
	{"SmiTagMask", F(smi_tag_mask), false},
	{"SmiShiftSize", F(smi_shift), false},
	{"TaggedSize", F(tagged_size), true},
	{"IsNotStringMask", F(not_string_mask), false},
	{"StringEncodingMask", F(encoding_mask), false},
	{"OneByteStringTag", F(one_byte_tag), false},
	{"StringRepresentationMask", F(repr_mask), false},
	{"SeqStringTag", F(seq_tag), false},
	{"ConsStringTag", F(cons_tag), false},
	{"ThinStringTag", F(thin_tag), false},
	{"SlicedStringTag", F(sliced_tag), false},
	{"FirstNonstringType", F(first_nonstring_type), false},
	{"type_JSFunction__JS_FUNCTION_TYPE", F(type_js_function), false},
	{"type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE", F(type_sfi), false},
	{"type_ScopeInfo__SCOPE_INFO_TYPE", F(type_scope_info), false},
	{"type_Script__SCRIPT_TYPE", F(type_script), false},
	{"type_FixedArray__FIXED_ARRAY_TYPE", F(type_fixed_array), false},
	{"type_BytecodeArray__BYTECODE_ARRAY_TYPE", F(type_bytecode_array), false},
	{"type_Code__CODE_TYPE", F(type_code), true},
	{"class_HeapObject__map__", F(obj_map), false},
	{"class_Map__instance_type__", F(map_instance_type), false},
	{"class_JSFunction__shared__", F(fn_shared), false},
	{"class_JSFunction__context__", F(fn_context), false},
	{"class_JSFunction__prototype_or_initial_map__", F(fn_proto), true},
	{"type_ByteArray__BYTE_ARRAY_TYPE", F(type_byte_array), true},
	{"type_WeakFixedArray__WEAK_FIXED_ARRAY_TYPE", F(type_weak_fixed_array), true},
	{"class_Code__deoptimization_data__", F(code_deopt), true},
	{"class_Code__source_position_table__", F(code_positions), true},
	{"context_idx_prev", F(context_prev), false},
	{"class_SharedFunctionInfo__name_or_scope_info__", F(sfi_name_or_scope), false},
	{"class_SharedFunctionInfo__script_or_debug_info__", F(sfi_script), true},
	{"class_SharedFunctionInfo__script__", F(sfi_script), true},
	{"class_SharedFunctionInfo__function_data__", F(sfi_function_data), true},
	{"class_Script__name__", F(script_name), false},
	{"class_Script__line_ends__", F(script_line_ends), false},
	{"class_Script__source__", F(script_source), true},
	{"class_FixedArrayBase__length__", F(array_length), false},
	{"class_FixedArray__data__", F(array_data), false},
	{"class_String__length__", F(string_length), false},
	{"class_SeqOneByteString__chars__", F(seq_one_chars), false},
	{"class_SeqTwoByteString__chars__", F(seq_two_chars), false},
	{"class_ConsString__first__", F(cons_first), false},
	{"class_ConsString__second__", F(cons_second), false},
	{"class_ThinString__actual__", F(thin_actual), false},
	{"class_SlicedString__parent__", F(sliced_parent), false},
	{"class_SlicedString__offset__", F(sliced_offset), false},
	{"class_Code__bytecode_or_interpreter_data__", F(code_bytecode), true},
	{"scopeinfo_idx_first_vars", F(scope_first_vars), false},
	{"scopeinfo_idx_ncontextlocals", F(scope_ncontextlocals), false},
	{"off_fp_function", F(fp_function), false},
	{"off_fp_context", F(fp_context), false},
	{"off_fp_bytecode_array", F(fp_bytecode_array), true},
};
#define NWANTS (sizeof(wants) / sizeof(wants[0]))
#undef F

/* The value of symbol sym (its st_size bytes: 1, 2, 4 or 8, signed) from
 * the section holding it; false when it cannot be read. */
static bool sym_value(Elf *elf, int fd, const GElf_Sym *sym, int64_t *out)
{
	Elf_Scn *scn = elf_getscn(elf, sym->st_shndx);
	GElf_Shdr sh;
	unsigned char b[8] = {0};

	if (!scn || !gelf_getshdr(scn, &sh) || sym->st_value < sh.sh_addr ||
	    sym->st_value - sh.sh_addr > sh.sh_size ||
	    sh.sh_size - (sym->st_value - sh.sh_addr) < sym->st_size)
		return false;
	if (sh.sh_type == SHT_NOBITS) {
		*out = 0;
		return true;
	}
	if (sym->st_size != 1 && sym->st_size != 2 && sym->st_size != 4 && sym->st_size != 8)
		return false;
	if (pread(fd, b, sym->st_size, (off_t)(sh.sh_offset + sym->st_value - sh.sh_addr)) !=
	    (ssize_t)sym->st_size)
		return false;
	switch (sym->st_size) {
	case 1:
		*out = (int8_t)b[0];
		break;
	case 2:
		*out = (int16_t)(b[0] | b[1] << 8);
		break;
	case 4:
		*out = (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
				 (uint32_t)b[3] << 24);
		break;
	default: {
		uint64_t v = 0;

		for (int i = 7; i >= 0; i--)
			v = v << 8 | b[i];
		*out = (int64_t)v;
	}
	}
	return true;
}

struct scan {
	struct kp_v8meta *m;
	bool found[NWANTS];
};

/* The want a metadata name (without "v8dbg_") answers and that has no
 * value yet, or NWANTS. */
static size_t want_of(const struct scan *s, const char *name)
{
	for (size_t w = 0; w < NWANTS; w++) {
		size_t len = strlen(wants[w].name);

		if (s->found[w] || strncmp(name, wants[w].name, len) != 0)
			continue;
		/* a whole name unless the want ends in "__" (any type) */
		if (name[len] && wants[w].name[len - 1] != '_')
			continue;
		return w;
	}
	return NWANTS;
}

static void take(struct scan *s, size_t w, int64_t v)
{
	*(int64_t *)((char *)s->m + wants[w].off) = v;
	s->found[w] = true;
}

/* One symbol table: its v8dbg_* symbols into s, the range of its
 * Builtins_* functions. */
static void scan_table(Elf *elf, int fd, Elf_Scn *scn, const GElf_Shdr *sh, struct scan *s)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;

	for (size_t i = 0; data && i < n; i++) {
		GElf_Sym sym;
		const char *name;
		size_t w;
		int64_t v;

		if (!gelf_getsym(data, (int)i, &sym) ||
		    !(name = elf_strptr(elf, sh->sh_link, sym.st_name)))
			continue;
		if (strncmp(name, "Builtins_", 9) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC &&
		    sym.st_value) {
			if (!s->m->builtins_lo || sym.st_value < s->m->builtins_lo)
				s->m->builtins_lo = sym.st_value;
			if (sym.st_value + sym.st_size > s->m->builtins_hi)
				s->m->builtins_hi = sym.st_value + (sym.st_size ? sym.st_size : 1);
			continue;
		}
		if (strncmp(name, "v8dbg_", 6) != 0)
			continue;
		s->m->nsyms++;
		w = want_of(s, name + 6);
		if (w < NWANTS && sym_value(elf, fd, &sym, &v))
			take(s, w, v);
	}
}

/* The builtins' range as file offsets (what a mapping's pgoff counts),
 * through the loadable segment that holds it; 0, 0 when none does. */
static void to_offsets(Elf *elf, struct kp_v8meta *m)
{
	size_t n = 0;

	if (m->builtins_lo && elf_getphdrnum(elf, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    m->builtins_lo < ph.p_vaddr ||
			    m->builtins_hi > ph.p_vaddr + ph.p_filesz)
				continue;
			m->builtins_lo = m->builtins_lo - ph.p_vaddr + ph.p_offset;
			m->builtins_hi = m->builtins_hi - ph.p_vaddr + ph.p_offset;
			return;
		}
	m->builtins_lo = m->builtins_hi = 0;
}

/* Whether a symbol of a want starting with prefix was found. */
static bool found_prefix(const struct scan *s, const char *prefix)
{
	for (size_t w = 0; w < NWANTS; w++)
		if (s->found[w] && strncmp(wants[w].name, prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* Whether the values can be what V8 makes them: offsets small and
 * aligned where they must be, tags of V8's 64-bit layout. kprof reads
 * only a full-pointer heap (no pointer compression). */
static const char *check(const struct kp_v8meta *m)
{
	const int64_t offs[] = {
		m->map_instance_type, m->fn_shared,	   m->sfi_name_or_scope, m->sfi_script,
		m->script_name,	      m->script_line_ends, m->script_source,	 m->array_length,
		m->array_data,	      m->string_length,	   m->seq_one_chars,	 m->seq_two_chars,
		m->cons_first,	      m->cons_second,	   m->thin_actual,	 m->sliced_parent,
		m->sliced_offset,     m->code_bytecode,	   m->sfi_function_data, m->fn_context,
		m->fn_proto,	      m->code_deopt,	   m->code_positions};

	if (m->tagged_size && m->tagged_size != 8)
		return "pointer compression (4-byte tagged values), which kprof does not read";
	if (m->heap_tag != 1 || m->heap_tag_mask != 3 || m->smi_tag_mask != 1 || m->smi_shift != 31)
		return "tags other than V8's 64-bit ones";
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		if (offs[i] < 0 || offs[i] > 256)
			return "an object field offset out of range";
	if (m->obj_map != 0)
		return "a map not at an object's start";
	if (m->fp_function % 8 || m->fp_context % 8 || m->fp_bytecode_array % 8 ||
	    m->fp_function < -64 || m->fp_function >= 0 || m->fp_context < -64 ||
	    m->fp_context >= 0 || m->fp_bytecode_array < -64 || m->fp_bytecode_array > 0)
		return "frame slots out of range";
	if (m->context_prev < 0 || m->context_prev > 16)
		return "context indexes out of range";
	if (m->scope_first_vars < 1 || m->scope_first_vars > 16 || m->scope_ncontextlocals < 1 ||
	    m->scope_ncontextlocals >= m->scope_first_vars)
		return "scope info indexes out of range";
	if (m->first_nonstring_type <= 0 || m->first_nonstring_type > 0xffff ||
	    m->type_js_function <= 0 || m->type_js_function > 0xffff || m->type_sfi <= 0 ||
	    m->type_sfi > 0xffff)
		return "instance types out of range";
	return NULL;
}

static int finish(struct scan *s, char *why, size_t size);

int kp_v8meta_read(int fd, struct kp_v8meta *out, char *why, size_t size)
{
	struct scan s = {.m = out};
	Elf_Scn *scn = NULL;
	Elf *elf;

	memset(out, 0, sizeof(*out));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		snprintf(why, size, "not an ELF file");
		return -1;
	}
	/* .dynsym first: node exports the metadata; then .symtab for the
	 * builtins' range */
	for (int pass = 0; pass < 2 && (!pass || out->nsyms); pass++) {
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (gelf_getshdr(scn, &sh) &&
			    sh.sh_type == (pass ? SHT_SYMTAB : SHT_DYNSYM) && sh.sh_entsize)
				scan_table(elf, fd, scn, &sh, &s);
		}
	}
	to_offsets(elf, out);
	elf_end(elf);
	return finish(&s, why, size);
}

int kp_v8meta_from(const char *const *names, const int64_t *values, size_t n, struct kp_v8meta *out,
		   char *why, size_t size)
{
	struct scan s = {.m = out};

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		size_t w;

		if (strncmp(names[i], "v8dbg_", 6) != 0)
			continue;
		out->nsyms++;
		if ((w = want_of(&s, names[i] + 6)) < NWANTS)
			take(&s, w, values[i]);
	}
	return finish(&s, why, size);
}

/* What was found, checked: 0, or -1 and why. */
static int finish(struct scan *s, char *why, size_t size)
{
	struct kp_v8meta *out = s->m;
	const char *bad;

	if (!out->nsyms) {
		snprintf(why, size, "no v8dbg symbols");
		return -1;
	}
	for (size_t w = 0; w < NWANTS; w++)
		if (!s->found[w] && !wants[w].optional) {
			snprintf(why, size, "no v8dbg_%s", wants[w].name);
			return -1;
		}
	if (!found_prefix(s, "class_SharedFunctionInfo__script")) {
		snprintf(why, size, "no v8dbg_class_SharedFunctionInfo__script_or_debug_info");
		return -1;
	}
	if (!out->fp_bytecode_array)
		out->fp_bytecode_array = out->fp_function - 16;
	if ((bad = check(out))) {
		snprintf(why, size, "%s", bad);
		return -1;
	}
	return 0;
}

size_t kp_v8meta_names(const struct kp_v8meta *m, const char **names, int64_t *values, size_t max)
{
	size_t n = 0;

	for (size_t w = 0; w < NWANTS && n < max; w++) {
		int64_t v = *(const int64_t *)((const char *)m + wants[w].off);
		bool dup = false;

		for (size_t j = 0; j < w; j++)
			dup |= wants[j].off == wants[w].off;
		if (dup)
			continue;
		names[n] = wants[w].name;
		values[n++] = v;
	}
	return n;
}
