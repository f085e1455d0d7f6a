/* The run's metadata record and its KEY=VALUE form (see run_meta.h). */
#include "profile/run_meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cpulist.h"
#include "util/xalloc.h"

/* The names of the location kinds in the unresolved.KIND keys. */
static const char *const unresolved_kinds[KP_LOC_NKINDS] = {
	[KP_LOC_UNKNOWN] = "other",
	[KP_LOC_KERNEL] = "kernel",
	[KP_LOC_USER] = "user",
	[KP_LOC_JIT] = "jit",
};

/* by enum kp_run_end */
static const char *const end_names[] = {"", "exit", "signal", "duration", "stopped"};

static const char *const roots_names[] = {
	[KP_RUN_ROOTS_COMM] = "comm",
	[KP_RUN_ROOTS_PID] = "comm-pid",
	[KP_RUN_ROOTS_TID] = "comm-pid/tid",
};

/* What the events were and when they started. */
static void write_sampling(const struct kp_run_meta *m, struct kp_profile *p)
{
	char list[256];
	struct tm tm;

	kp_profile_set_meta(p, KP_META_EVENT, "%s", m->event);
	if (m->frequency)
		kp_profile_set_meta(p, KP_META_FREQUENCY, "%llu", (unsigned long long)m->frequency);
	else
		kp_profile_set_meta(p, KP_META_PERIOD, "%llu", (unsigned long long)m->period);
	kp_cpulist_format(m->cpus, (int)m->ncpus, list, sizeof(list));
	kp_profile_set_meta(p, KP_META_CPUS, "%s", list);
	gmtime_r(&m->start, &tm);
	if (m->start_ns)
		kp_profile_set_meta(p, KP_META_START, "%04d-%02d-%02dT%02d:%02d:%02d.%09uZ",
				    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				    tm.tm_min, tm.tm_sec, m->start_ns % 1000000000u);
	else
		kp_profile_set_meta(p, KP_META_START, "%04d-%02d-%02dT%02d:%02d:%02dZ",
				    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
				    tm.tm_min, tm.tm_sec);
}

/* The kprof command line as one line: argv[0] is "kprof" whatever the
 * path it was run by. */
static void write_command(const struct kp_run_meta *m, struct kp_profile *p)
{
	char cmd[4096];
	size_t len = 0;

	cmd[0] = '\0';
	for (size_t i = 0; i < m->argc && len + 1 < sizeof(cmd); i++)
		len += (size_t)snprintf(cmd + len, sizeof(cmd) - len, "%s%s", i ? " " : "",
					i == 0 ? "kprof" : m->argv[i]);
	kp_profile_set_meta(p, KP_META_COMMAND, "%s", cmd);
}

static void write_unresolved(const struct kp_run_meta *m, struct kp_profile *p)
{
	for (size_t k = 0; k < KP_LOC_NKINDS; k++) {
		char key[32], num[KP_COUNT_BUF];

		if (!unresolved_kinds[k])
			continue;
		snprintf(key, sizeof(key), KP_META_UNRESOLVED, unresolved_kinds[k]);
		kp_count_format(m->unresolved[k], 0, num);
		kp_profile_set_meta(p, key, "%s", num);
	}
}

void kp_run_meta_write(const struct kp_run_meta *m, struct kp_profile *p)
{
	write_sampling(m, p);
	if (m->have_end) {
		/* a window's (its start to the ns): to the ns too, so that
		 * start + duration is the next window's start */
		kp_profile_set_meta(p, KP_META_DURATION, m->start_ns ? "%.9f" : "%.3f",
				    m->duration);
		kp_profile_set_meta(p, KP_META_SAMPLES, "%llu", (unsigned long long)m->samples);
		kp_profile_set_meta(p, KP_META_LOST, "%llu", (unsigned long long)m->lost);
		/* samples not taken at all: a loss a reader of the window
		 * should see, as the lost records */
		if (m->throttled)
			kp_profile_set_meta(p, KP_META_THROTTLED, "%llu",
					    (unsigned long long)m->throttled);
		if (m->end != KP_RUN_END_NONE &&
		    (size_t)m->end < sizeof(end_names) / sizeof(end_names[0]))
			kp_profile_set_meta(p, KP_META_END, "%s", end_names[m->end]);
	}
	if (m->version)
		kp_profile_set_meta(p, KP_META_VERSION, "%s", m->version);
	if (m->argv)
		write_command(m, p);
	if (m->host)
		kp_profile_set_meta(p, KP_META_HOST, "%s", m->host);
	if (m->kernel)
		kp_profile_set_meta(p, KP_META_KERNEL, "%s", m->kernel);
	kp_profile_set_meta(p, KP_META_ROOTS, "%s", roots_names[m->roots]);
	if (m->system_wide)
		kp_profile_set_meta(p, KP_META_SCOPE, "system");
	if (m->have_unresolved)
		write_unresolved(m, p);
}

/* A decimal number of metadata ("30.02", "999") in units of 10^-digits,
 * the digits past those cut; false when it is none or does not fit. */
static bool meta_number(const char *s, unsigned digits, uint64_t *out)
{
	kp_count v;
	unsigned dec;

	if (!s || kp_count_parse(s, strlen(s), &v, &dec) < 0)
		return false;
	if (dec <= digits) {
		if (!kp_count_shift(&v, digits - dec))
			return false;
	} else {
		for (unsigned i = digits; i < dec; i++)
			v /= 10;
	}
	if (v > (kp_count)INT64_MAX)
		return false;
	*out = (uint64_t)v;
	return true;
}

static uint64_t meta_u64(const struct kp_profile *p, const char *key)
{
	uint64_t v = 0;

	return meta_number(kp_profile_meta(p, key), 0, &v) ? v : 0;
}

/* "2026-12-01T07:42:53Z", or with a fraction of a second, into *start and
 * *ns; false (both left 0) otherwise. */
static bool meta_start(const char *s, time_t *start, uint32_t *ns)
{
	struct tm tm = {0};
	const char *e = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;
	uint32_t frac = 0;
	int digits = 0;
	time_t t;

	if (!e)
		return false;
	if (*e == '.') {
		for (e++; *e >= '0' && *e <= '9'; e++) {
			if (digits < 9) {
				frac = frac * 10 + (uint32_t)(*e - '0');
				digits++;
			}
		}
	}
	for (; digits < 9; digits++)
		frac *= 10;
	if (strcmp(e, "Z") != 0)
		return false;
	t = timegm(&tm);
	if (t < 0 || t > INT64_MAX / 1000000000 - 1)
		return false;
	*start = t;
	*ns = frac;
	return true;
}

void kp_run_meta_read(const struct kp_profile *p, struct kp_run_meta *m)
{
	const char *duration = kp_profile_meta(p, KP_META_DURATION);
	const char *roots = kp_profile_meta(p, KP_META_ROOTS);
	const char *end = kp_profile_meta(p, KP_META_END);

	memset(m, 0, sizeof(*m));
	m->version = kp_profile_meta(p, KP_META_VERSION);
	m->command = kp_profile_meta(p, KP_META_COMMAND);
	m->host = kp_profile_meta(p, KP_META_HOST);
	m->kernel = kp_profile_meta(p, KP_META_KERNEL);
	m->event = kp_profile_meta(p, KP_META_EVENT);
	m->frequency = meta_u64(p, KP_META_FREQUENCY);
	m->have_period = meta_number(kp_profile_meta(p, KP_META_PERIOD), 0, &m->period);
	meta_start(kp_profile_meta(p, KP_META_START), &m->start, &m->start_ns);
	m->have_end = duration != NULL;
	m->duration = duration ? strtod(duration, NULL) : 0;
	if (!meta_number(duration, 9, &m->duration_ns))
		m->duration_ns = 0;
	m->range = kp_profile_meta(p, KP_META_RANGE);
	m->samples = meta_u64(p, KP_META_SAMPLES);
	m->lost = meta_u64(p, KP_META_LOST);
	m->throttled = meta_u64(p, KP_META_THROTTLED);
	for (size_t i = 0; roots && i < sizeof(roots_names) / sizeof(roots_names[0]); i++)
		if (strcmp(roots, roots_names[i]) == 0)
			m->roots = (enum kp_run_roots)i;
	for (size_t i = 1; end && i < sizeof(end_names) / sizeof(end_names[0]); i++)
		if (strcmp(end, end_names[i]) == 0)
			m->end = (enum kp_run_end)i;
	m->system_wide = kp_profile_meta(p, KP_META_SCOPE) &&
			 strcmp(kp_profile_meta(p, KP_META_SCOPE), "system") == 0;
	m->text.frequency = kp_profile_meta(p, KP_META_FREQUENCY);
	m->text.period = kp_profile_meta(p, KP_META_PERIOD);
	m->text.duration = duration;
	m->text.samples = kp_profile_meta(p, KP_META_SAMPLES);
	m->text.lost = kp_profile_meta(p, KP_META_LOST);
}

void kp_run_meta_set_span(struct kp_profile *p, double duration, uint64_t samples)
{
	kp_profile_set_meta(p, KP_META_DURATION, "%.3f", duration);
	if (kp_profile_meta(p, KP_META_SAMPLES))
		kp_profile_set_meta(p, KP_META_SAMPLES, "%llu", (unsigned long long)samples);
}

char *kp_run_meta_program(const char *cmd)
{
	const char *dashes = strstr(cmd, " -- ");
	char *copy, *out, *save = NULL, *w;
	bool skip = false;
	size_t n = 0;

	if (dashes)
		return kp_xstrdup(dashes + 4);
	copy = kp_xstrdup(cmd);
	out = kp_xmalloc(strlen(cmd) + 1);
	for (w = strtok_r(copy, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (skip) {
			skip = false;
			continue;
		}
		if (strcmp(w, "-o") == 0 || strcmp(w, "-f") == 0 || strcmp(w, "--output") == 0 ||
		    strcmp(w, "--format") == 0) {
			skip = true;
			continue;
		}
		if (strncmp(w, "-o", 2) == 0 || strncmp(w, "-f", 2) == 0 ||
		    strncmp(w, "--output=", 9) == 0 || strncmp(w, "--format=", 9) == 0)
			continue;
		n += (size_t)sprintf(out + n, "%s%s", n ? " " : "", w);
	}
	out[n] = '\0';
	free(copy);
	return out;
}
