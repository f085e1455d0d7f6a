/* Tracepoint ids and formats from tracefs (see tracefs.h). */
#include "procfs/tracefs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const roots[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};

/* Opens ROOT/events/SYSTEM/NAME/FILE from the first root that has it. */
static FILE *open_event_file(const char *system, const char *name, const char *file, int *err)
{
	*err = -ENOENT;
	for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
		char path[512];
		FILE *f;

		snprintf(path, sizeof(path), "%s/events/%s/%s/%s", roots[i], system, name, file);
		f = fopen(path, "re");
		if (f)
			return f;
		if (errno == EACCES || errno == EPERM)
			*err = -EACCES;
	}
	return NULL;
}

/* A line of the format file: "\tfield:long prev_state;\toffset:32;\tsize:8;..." */
static int find_field(FILE *f, const char *field, struct kp_tracefs_field *out)
{
	char line[512];
	size_t flen = strlen(field);

	while (fgets(line, sizeof(line), f)) {
		const char *decl = strstr(line, "field:"), *semi, *off, *size;

		if (!decl || !(semi = strchr(decl, ';')))
			continue;
		/* the declaration ends in the field's name (an array: NAME[N]) */
		if ((size_t)(semi - decl) < flen || memcmp(semi - flen, field, flen) != 0 ||
		    !(semi[-(long)flen - 1] == ' ' || semi[-(long)flen - 1] == '*'))
			continue;
		off = strstr(semi, "offset:");
		size = strstr(semi, "size:");
		if (!off || !size || sscanf(off, "offset:%u", &out->offset) != 1 ||
		    sscanf(size, "size:%u", &out->size) != 1)
			return -EINVAL;
		return 0;
	}
	return -ENOENT;
}

int kp_tracefs_event(const char *system, const char *name, const char *field, uint64_t *id,
		     struct kp_tracefs_field *f)
{
	int err;
	FILE *fp = open_event_file(system, name, "id", &err);
	unsigned long long v;

	if (!fp)
		return err;
	err = fscanf(fp, "%llu", &v) == 1 ? 0 : -EINVAL;
	fclose(fp);
	if (err < 0)
		return err;
	*id = v;
	if (!field)
		return 0;
	fp = open_event_file(system, name, "format", &err);
	if (!fp)
		return err;
	err = find_field(fp, field, f);
	fclose(fp);
	return err;
}
