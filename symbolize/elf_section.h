/* kp_elf_section: an ELF file's sections by name (libelf), the one search
 * elf_object.c and fde_start.c share. Internal to symbolize/. */
#ifndef KP_SYMBOLIZE_ELF_SECTION_H
#define KP_SYMBOLIZE_ELF_SECTION_H

#include <gelf.h>
#include <stdbool.h>

/* The first section named name after `after` (NULL: from the first), its
 * header in *sh; NULL when there is none, or no section name table. With
 * in_file, sections that hold no bytes of the file (SHT_NOBITS: a debug
 * file's stripped code) are passed over. */
Elf_Scn *kp_elf_section(Elf *elf, Elf_Scn *after, const char *name, bool in_file, GElf_Shdr *sh);

#endif
