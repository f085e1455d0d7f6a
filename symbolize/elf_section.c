/* kp_elf_section: sections by name (elf_section.h). */
#include "symbolize/elf_section.h"

#include <string.h>

Elf_Scn *kp_elf_section(Elf *elf, Elf_Scn *after, const char *name, bool in_file, GElf_Shdr *sh)
{
	size_t shstrndx;
	Elf_Scn *scn = after;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n =
			gelf_getshdr(scn, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;

		if (n && strcmp(n, name) == 0 && (!in_file || sh->sh_type != SHT_NOBITS))
			return scn;
	}
	return NULL;
}
