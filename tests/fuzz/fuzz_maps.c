/* /proc/PID/maps (procfs/maps.h): the input as a maps file through
 * kp_maps_read, and each of its lines through kp_maps_parse_line, as kprof
 * reads processes that ran before the recording. The file reader must
 * skip exactly the lines the line parser refuses and report exactly the
 * executable ones it accepts; an accepted line has start < end and a path
 * inside the line. */
#include <errno.h>
#include <stdbool.h>

#include "fuzz.h"
#include "procfs/maps.h"

struct seen {
	size_t exec;
};

static void on_entry(void *arg, const struct kp_mapping *e)
{
	struct seen *s = arg;

	FUZZ_CHECK(e->exec && e->start < e->end && e->path);
	(void)strlen(e->path);
	s->exec++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t bad = 0, exec = 0;
	struct seen seen = {0};

	/* line by line: each in a buffer of its own size, so ASan sees any
	 * read past it */
	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		char *line = fuzz_strndup(p, len);
		struct kp_mapping e;
		int err = kp_maps_parse_line(line, &e);

		FUZZ_CHECK(err == 0 || err == -EINVAL);
		if (err == 0) {
			FUZZ_CHECK(e.start < e.end);
			FUZZ_CHECK(e.path >= line && e.path + strlen(e.path) <= line + len);
			exec += e.exec;
		} else {
			bad++;
		}
		free(line);
		p += len;
	}
	if (size) {
		FILE *f = fmemopen((void *)data, size, "r");

		if (!f)
			abort();
		FUZZ_CHECK(kp_maps_read(f, on_entry, &seen) == bad);
		FUZZ_CHECK(seen.exec == exec);
		fclose(f);
	}
	return 0;
}
