/* What a mapping's path says it maps (see mapping.h). */
#include "procfs/mapping.h"

#include <string.h>

bool kp_mapping_path_is_memfd(const char *path)
{
	static const char prefix[] = "/memfd:", suffix[] = " (deleted)";
	size_t len = path ? strlen(path) : 0;

	/* a memfd is born unlinked, so the kernel always adds the suffix */
	return len >= sizeof(prefix) - 1 + sizeof(suffix) - 1 &&
	       memcmp(path, prefix, sizeof(prefix) - 1) == 0 &&
	       memcmp(path + len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) == 0;
}

enum kp_mapping_kind kp_mapping_kind_of(const char *path)
{
	if (strcmp(path, "//anon") == 0)
		return KP_MAPPING_ANON;
	if (kp_mapping_path_is_memfd(path))
		return KP_MAPPING_MEMFD;
	if (path[0] == '/')
		return strncmp(path, "/dev/zero", 9) == 0 || strncmp(path, "/SYSV", 5) == 0
			       ? KP_MAPPING_ANON
			       : KP_MAPPING_FILE;
	if (strcmp(path, "[vdso]") == 0)
		return KP_MAPPING_VDSO;
	if (path[0] == '\0' || strncmp(path, "[anon", 5) == 0 || strcmp(path, "[heap]") == 0)
		return KP_MAPPING_ANON;
	return KP_MAPPING_OTHER;
}
