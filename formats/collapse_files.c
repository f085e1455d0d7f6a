/* kprof collapse's inputs read, and what it tells of them (collapse.h). */
#include <errno.h>
#include <string.h>

#include "formats/collapse.h"
#include "util/input.h"
#include "util/notes.h"

static int read_path(struct kp_collapse *c, const char *path, struct kp_diag *d)
{
	struct kp_input in;
	int err = kp_input_open(&in, path, d);

	/* collapse names the file and the error as read(2) would */
	if (err)
		kp_diag_set(d, err, "%s: %s", in.name, strerror(-err));
	else
		err = kp_collapse_read_fd(c, fileno(in.fp), in.name, d);
	kp_input_close(&in);
	return err ? -1 : 0;
}

int kp_collapse_read_paths(struct kp_collapse *c, char *const *paths, size_t n, struct kp_diag *d)
{
	if (n == 0)
		return read_path(c, "-", d);
	for (size_t i = 0; i < n; i++)
		if (read_path(c, paths[i], d) < 0)
			return -1;
	return 0;
}

bool kp_collapse_tell(const struct kp_collapse *c, char *const *paths, size_t n,
		      struct kp_notes *said)
{
	const struct kp_collapse_stats *st = kp_collapse_stats(c);
	bool useless = st->samples == 0 && st->bad_lines > 0;

	if (st->other_event && st->event_defaulted)
		kp_notes_add(said,
			     "warning: the input has samples of several events (%s, %s, ...): kept "
			     "only %s, as stackcollapse-perf.pl does; choose with "
			     "--event-filter=EVENT",
			     st->event, st->other_event, st->event);
	else if (st->samples == 0 && st->filtered > 0 && !st->event_defaulted)
		kp_notes_add(said, "warning: no samples of event %s (the input has %s)", st->event,
			     st->other_event);
	if (st->bad_lines) {
		const char *name = "stdin";

		if (st->first_bad_input < n && strcmp(paths[st->first_bad_input], "-") != 0)
			name = paths[st->first_bad_input];
		kp_notes_add(
			said, "%s %llu line%s that %s not perf script output (first: %s:%llu)%s",
			useless ? "error:" : "note: skipped", (unsigned long long)st->bad_lines,
			st->bad_lines == 1 ? "" : "s", st->bad_lines == 1 ? "is" : "are", name,
			(unsigned long long)st->first_bad_line,
			useless ? "; no samples found" : "");
	}
	if (st->unterminated)
		kp_notes_add(
			said,
			"warning: %llu input%s ended inside a sample (no blank line after it): "
			"that sample was left out, as stackcollapse-perf.pl does",
			(unsigned long long)st->unterminated, st->unterminated == 1 ? "" : "s");
	return useless;
}

int kp_collapse_write_header(const struct kp_collapse *c, bool header, FILE *out,
			     struct kp_notes *said, struct kp_diag *d)
{
	char unit[64];

	kp_collapse_countname(c, unit, sizeof(unit));
	if (header && fprintf(out, "# countname: %s\n", unit) < 0)
		return kp_diag_errno(d, -EIO, "writing the header");
	if (!header && strcmp(unit, "samples") != 0)
		kp_notes_add(said,
			     "note: the counts are %s (the samples' periods of %s): kprof "
			     "flamegraph --countname %s says so, or collapse --header writes it in "
			     "the output",
			     strcmp(unit, "ns") == 0 ? "nanoseconds" : unit,
			     kp_collapse_stats(c)->event, unit);
	return 0;
}
