/* A benchmark of fixed work in branchy string code (scripts/bench-gate):
 * log lines of key=value fields, the same every run, each
 *   sp_line_kprof -> sp_tokenize_kprof  split into key=value tokens, with
 *                                       quotes and escapes
 *                    sp_lookup_kprof    each key in a sorted keyword list
 *                                       (binary search with strcmp)
 *                    sp_parse_kprof     the values: numbers with units,
 *                                       timestamps, booleans
 *                    sp_match_kprof     the values against glob patterns
 *                                       (* and ?, backtracking; about 12%
 *                                       of the time)
 *                    sp_escape_kprof    the fields as escaped JSON
 * under sp_round_kprof, ROUNDS times. match=PERCENT (or tokenize, lookup,
 * parse, escape=PERCENT) makes that stage do PERCENT% more work.
 * Usage: strparse [rounds=N] [tokenize|lookup|parse|match|escape=PERCENT] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "knob.h"

#define LINES	   1024
#define LINE_BYTES 192
#define MAX_TOKENS 16

enum { TOKENIZE, LOOKUP, PARSE, MATCH, ESCAPE, NSTAGES };
/* per line: passes of the tokenizer, the lookup, the parser and the
 * escaper; pattern matches */
static struct kp_knob knobs[NSTAGES] = {
	{"tokenize", 4, 0}, {"lookup", 4, 0}, {"parse", 4, 0}, {"match", 18, 0}, {"escape", 3, 0}};

struct token {
	char key[24];
	char value[72];
};

static char lines[LINES][LINE_BYTES];
static struct token tokens[MAX_TOKENS];
static char json[2048];
static volatile uint64_t sink;

static const char *const keywords[] = {"agent", "bytes",   "cache", "code",  "host",   "id",
				       "ip",	"latency", "level", "msg",   "path",   "peer",
				       "proto", "region",  "retry", "route", "status", "took",
				       "trace", "ts",	   "user",  "zone"};
static const char *const patterns[] = {
	"*error*", "/api/v?/items*", "*timeout*",	 "a*b*c*d", "2026-12-0?T*", "*.*.*.*",
	"*smith",  "?*@*.*",	     "*/users/*/orders", "*[*",	    "*done",	    "GET *"};
#define NPATTERNS (sizeof(patterns) / sizeof(patterns[0]))

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* key=value and key="quoted \"value\"" fields of a line into tokens[];
 * the count. */
KP_STAGE static unsigned sp_tokenize_kprof(const char *line, unsigned long passes)
{
	unsigned n = 0;

	for (unsigned long p = 0; p < passes; p++) {
		const char *s = line;

		n = 0;
		while (*s && n < MAX_TOKENS) {
			size_t k = 0, v = 0;

			while (*s == ' ')
				s++;
			while (*s && *s != '=' && *s != ' ' && k + 1 < sizeof(tokens[n].key))
				tokens[n].key[k++] = *s++;
			tokens[n].key[k] = '\0';
			if (*s == '=')
				s++;
			if (*s == '"') {
				for (s++; *s && *s != '"'; s++) {
					if (*s == '\\' && s[1])
						s++;
					if (v + 1 < sizeof(tokens[n].value))
						tokens[n].value[v++] = *s;
				}
				if (*s == '"')
					s++;
			} else {
				while (*s && *s != ' ' && v + 1 < sizeof(tokens[n].value))
					tokens[n].value[v++] = *s++;
			}
			tokens[n].value[v] = '\0';
			if (k)
				n++;
		}
	}
	return n;
}

/* Each key's index in the keyword list. */
KP_STAGE static void sp_lookup_kprof(unsigned n, unsigned long passes)
{
	unsigned long found = 0;

	for (unsigned long p = 0; p < passes; p++)
		for (unsigned t = 0; t < n; t++) {
			size_t lo = 0, hi = sizeof(keywords) / sizeof(keywords[0]);

			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				int c = strcmp(tokens[t].key, keywords[mid]);

				if (c == 0) {
					found += mid;
					break;
				}
				if (c < 0)
					hi = mid;
				else
					lo = mid + 1;
			}
		}
	sink += found;
}

/* The values: 12.5ms, 1.2e3, -42, 2026-12-01T10:22:33Z, true, false. */
KP_STAGE static void sp_parse_kprof(unsigned n, unsigned long passes)
{
	double sum = 0;

	for (unsigned long p = 0; p < passes; p++)
		for (unsigned t = 0; t < n; t++) {
			const char *s = tokens[t].value;
			double v = 0, scale = 1;
			int neg = 0, digits = 0, fields = 0;

			if (strcmp(s, "true") == 0) {
				sum += 1;
				continue;
			}
			if (strcmp(s, "false") == 0)
				continue;
			if (*s == '-')
				neg = 1, s++;
			for (; *s; s++) {
				if (*s >= '0' && *s <= '9') {
					v = v * 10 + (*s - '0');
					if (scale < 1)
						scale /= 10;
					digits++;
				} else if (*s == '.' && scale == 1) {
					scale = 0.1;
				} else if (*s == '-' || *s == ':' || *s == 'T') {
					fields++; /* a timestamp's separators */
				} else if (*s == 'm' && s[1] == 's') {
					v /= 1000;
					break;
				} else if (*s == 'e' || *s == 'E') {
					v *= 1000;
				} else {
					break;
				}
			}
			if (digits)
				sum += (neg ? -v : v) * (scale < 1 ? scale * 10 : 1) + fields;
		}
	sink += (uint64_t)sum;
}

/* Whether s matches the glob pattern p (* any run, ? one character). */
static int glob(const char *p, const char *s)
{
	const char *star = NULL, *back = NULL;

	while (*s) {
		if (*p == '*') {
			star = ++p;
			back = s;
		} else if (*p == '?' || *p == *s) {
			p++;
			s++;
		} else if (star) {
			p = star;
			s = ++back;
		} else {
			return 0;
		}
	}
	while (*p == '*')
		p++;
	return *p == '\0';
}

/* The values against the patterns, matches of them in all, from the first
 * pattern again after the last. */
KP_STAGE static void sp_match_kprof(unsigned n, unsigned long matches)
{
	unsigned long hits = 0;

	if (!n)
		return;
	for (unsigned long m = 0; m < matches; m++)
		hits += (unsigned long)glob(patterns[m % NPATTERNS], tokens[m % n].value);
	sink += hits;
}

/* The fields as a JSON object, escaped, passes times over. */
KP_STAGE static void sp_escape_kprof(unsigned n, unsigned long passes)
{
	size_t o = 0;

	for (unsigned long p = 0; p < passes; p++) {
		o = 0;
		json[o++] = '{';
		for (unsigned t = 0; t < n && o + 200 < sizeof(json); t++) {
			const char *parts[2] = {tokens[t].key, tokens[t].value};

			for (int i = 0; i < 2; i++) {
				json[o++] = '"';
				for (const char *s = parts[i]; *s; s++) {
					unsigned char c = (unsigned char)*s;

					if (c == '"' || c == '\\') {
						json[o++] = '\\';
						json[o++] = (char)c;
					} else if (c < 0x20) {
						static const char hex[] = "0123456789abcdef";

						memcpy(json + o, "\\u00", 4);
						json[o + 4] = hex[c >> 4];
						json[o + 5] = hex[c & 15];
						o += 6;
					} else if (c >= 'A' && c <= 'Z' && i == 0) {
						json[o++] = (char)(c + 32);
					} else {
						json[o++] = (char)c;
					}
				}
				json[o++] = '"';
				json[o++] = i ? ',' : ':';
			}
		}
		json[o - 1] = '}';
	}
	sink += o;
}

KP_STAGE static void sp_line_kprof(const char *line)
{
	unsigned n = sp_tokenize_kprof(line, knobs[TOKENIZE].work);

	sp_lookup_kprof(n, knobs[LOOKUP].work);
	sp_parse_kprof(n, knobs[PARSE].work);
	sp_match_kprof(n, knobs[MATCH].work);
	sp_escape_kprof(n, knobs[ESCAPE].work);
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

KP_STAGE static void sp_round_kprof(void)
{
	for (unsigned l = 0; l < LINES; l++)
		sp_line_kprof(lines[l]);
}

/* The log lines, the same every run. */
static void setup(void)
{
	static const char *const users[] = {"alice smith", "bob", "carol \\\"cj\\\" jones",
					    "dave@example.org"};
	static const char *const msgs[] = {"request done", "upstream timeout after retry",
					   "cache miss", "error: connection reset by peer"};
	uint64_t x = 88172645463325252ULL;

	for (unsigned l = 0; l < LINES; l++) {
		uint64_t a = next_random(&x), b = next_random(&x);

		snprintf(lines[l], LINE_BYTES,
			 "ts=2026-12-0%uT%02u:%02u:%02uZ level=%s user=\"%s\" "
			 "path=/api/v%u/items/%u status=%u took=%u.%ums msg=\"%s\" cache=%s",
			 (unsigned)(a % 9 + 1), (unsigned)(a >> 8) % 24, (unsigned)(a >> 16) % 60,
			 (unsigned)(a >> 24) % 60, (b & 1) ? "info" : "warn", users[(b >> 1) & 3],
			 (unsigned)(b >> 3) % 3 + 1, (unsigned)(b >> 8) % 100000,
			 (b & 16) ? 200u : 503u, (unsigned)(b >> 20) % 900,
			 (unsigned)(b >> 30) % 10, msgs[(a >> 40) & 3],
			 (a & 32) ? "true" : "false");
	}
}

int main(int argc, char **argv)
{
	unsigned rounds = 640;
	const char *dir = NULL;

	kp_knob_parse(argc, argv, "strparse", knobs, NSTAGES, &rounds, &dir);
	setup();
	for (unsigned r = 0; r < rounds; r++)
		sp_round_kprof();
	return 0;
}
