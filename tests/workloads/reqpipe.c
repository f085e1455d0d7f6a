/* A benchmark of fixed work shaped like a request pipeline
 * (scripts/bench-gate): requests from a fixed list of HTTP-like lines, each
 *   rp_handle_kprof -> rp_tokenize_kprof  split the request line, its query
 *                                         and headers into fields
 *                      rp_lookup_kprof    probes in a 64 MiB table: a cache
 *                                         miss a probe
 *                      rp_format_kprof    the response, with snprintf
 *                      rp_crc_kprof       a bitwise software CRC-32 of it
 *                                         (about 9% of the time)
 *                      rp_write_kprof     small writes of it to a file
 * under rp_round_kprof, ROUNDS times. crc=PERCENT (or tokenize, lookup,
 * format, write=PERCENT) makes that stage do PERCENT% more work; dir=PATH is where
 * the file goes (removed at the end).
 * Usage: reqpipe [rounds=N] [dir=PATH] [tokenize|lookup|format|crc|write=PERCENT] */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "knob.h"

#define REQUESTS   2048
#define TABLE_BITS 22 /* 4 Mi slots of 16 bytes */
#define LINE_BYTES 256

enum { TOKENIZE, LOOKUP, FORMAT, CRC, WRITE, NSTAGES };
/* per request: passes over the line, probes, snprintf calls, CRC bytes,
 * writes */
static struct kp_knob knobs[NSTAGES] = {
	{"tokenize", 7, 0}, {"lookup", 80, 0}, {"format", 4, 0}, {"crc", 64, 0}, {"write", 2, 0}};

struct request {
	char method[8];
	char path[64];
	uint64_t item, user;
	unsigned fields;
	unsigned long checksum;
};

struct slot {
	uint64_t key, value;
};

static char lines[REQUESTS][LINE_BYTES];
static struct slot *table;
static char response[1024];
static int out_fd = -1;
static volatile uint64_t sink;

static uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static uint64_t parse_number(const char *s, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		v = v * 10 + (uint64_t)(s[i] - '0');
	return v;
}

/* The request line, query and headers into fields, passes times over (a
 * parser's cost is linear in the bytes it reads). */
KP_STAGE static void rp_tokenize_kprof(const char *line, struct request *req, unsigned long passes)
{
	for (unsigned long p = 0; p < passes; p++) {
		const char *s = line, *tok = line;
		unsigned field = 0;

		req->fields = 0;
		for (;; s++) {
			char c = *s;

			if (c == ' ' || c == '?' || c == '&' || c == '\n' || c == ':' ||
			    c == '\0') {
				size_t n = (size_t)(s - tok);

				if (field == 0 && n < sizeof(req->method)) {
					memcpy(req->method, tok, n);
					req->method[n] = '\0';
				} else if (field == 1 && n < sizeof(req->path)) {
					memcpy(req->path, tok, n);
					req->path[n] = '\0';
				} else if (n > 5 && memcmp(tok, "item=", 5) == 0) {
					req->item = parse_number(tok + 5, n - 5);
				} else if (n > 5 && memcmp(tok, "user=", 5) == 0) {
					req->user = parse_number(tok + 5, n - 5);
				}
				field++;
				req->fields += n > 0;
				tok = s + 1;
				if (c == '\0')
					break;
			}
		}
	}
}

/* Session, item and permission rows of the request: probes into the
 * table, a cache miss each. */
KP_STAGE static void rp_lookup_kprof(struct request *req, unsigned long probes)
{
	const uint64_t mask = (1u << TABLE_BITS) - 1;
	uint64_t acc = 0;

	for (unsigned long i = 0; i < probes; i++) {
		uint64_t key = (req->item * 0x9e3779b97f4a7c15ULL) ^
			       (req->user + i * 0xff51afd7ed558ccdULL);
		uint64_t h = (key ^ (key >> 31)) & mask;

		if (table[h].key == key)
			acc += table[h].value;
		else
			table[h].key = key, table[h].value = i;
	}
	req->checksum = acc;
}

/* The response: headers and a small JSON body, with snprintf. */
KP_STAGE static size_t rp_format_kprof(const struct request *req, unsigned long calls)
{
	size_t n = 0;

	for (unsigned long c = 0; c < calls; c++) {
		n = 0;
		n += (size_t)snprintf(response + n, sizeof(response) - n,
				      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				      "X-Request: %s %s\r\n",
				      req->method, req->path);
		n += (size_t)snprintf(response + n, sizeof(response) - n,
				      "{\"item\": %llu, \"user\": %llu, \"score\": %.3f, ",
				      (unsigned long long)req->item, (unsigned long long)req->user,
				      (double)(req->checksum % 100000) / 7.0);
		n += (size_t)snprintf(response + n, sizeof(response) - n,
				      "\"fields\": %u, \"tag\": \"%08lx-%04x\"}\r\n", req->fields,
				      req->checksum, (unsigned)(req->item & 0xffff));
	}
	return n;
}

/* A bitwise CRC-32 (no table) over bytes of the response, from its start
 * again at its end. */
KP_STAGE static uint32_t rp_crc_kprof(size_t len, unsigned long bytes)
{
	uint32_t crc = 0xffffffffu;

	for (unsigned long n = 0, i = 0; n < bytes; n++) {
		crc ^= (unsigned char)response[i];
		for (int b = 0; b < 8; b++)
			crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1)));
		if (++i == len)
			i = 0;
	}
	return ~crc;
}

/* The response out in small writes, as a server's (headers, body). */
KP_STAGE static void rp_write_kprof(size_t len, unsigned long writes)
{
	for (unsigned long w = 0; w < writes; w++) {
		size_t from = len * w / writes, to = len * (w + 1) / writes;

		if (write(out_fd, response + from, to - from) != (ssize_t)(to - from)) {
			perror("reqpipe: write");
			exit(1);
		}
	}
}

KP_STAGE static void rp_handle_kprof(const char *line)
{
	struct request req = {{0}, {0}, 0, 0, 0, 0};
	size_t len;

	rp_tokenize_kprof(line, &req, knobs[TOKENIZE].work);
	rp_lookup_kprof(&req, knobs[LOOKUP].work);
	len = rp_format_kprof(&req, knobs[FORMAT].work);
	sink += rp_crc_kprof(len, knobs[CRC].work);
	rp_write_kprof(len, knobs[WRITE].work);
	__asm__ volatile("" ::: "memory"); /* keep the last call a call */
}

KP_STAGE static void rp_round_kprof(void)
{
	for (unsigned r = 0; r < REQUESTS; r++)
		rp_handle_kprof(lines[r]);
	if (lseek(out_fd, 0, SEEK_SET) < 0 || ftruncate(out_fd, 0) < 0) {
		perror("reqpipe: truncate");
		exit(1);
	}
}

/* The requests, the same every run. */
static void setup(void)
{
	static const char *const agents[] = {"curl/8.5.0", "Mozilla/5.0 (X11; Linux x86_64)",
					     "python-requests/2.31", "Go-http-client/1.1"};
	uint64_t x = 88172645463325252ULL;

	table = calloc((size_t)1 << TABLE_BITS, sizeof(*table));
	if (!table) {
		fputs("reqpipe: out of memory\n", stderr);
		exit(1);
	}
	memset(table, 0xff, ((size_t)1 << TABLE_BITS) * sizeof(*table)); /* its pages, now */
	for (unsigned r = 0; r < REQUESTS; r++) {
		uint64_t a = next_random(&x), b = next_random(&x);

		snprintf(lines[r], LINE_BYTES,
			 "%s /api/v%u/items/%llu?item=%llu&user=%llu&sort=name&limit=%u HTTP/1.1\n"
			 "Host: shop.example\nUser-Agent: %s\nAccept: */*",
			 (a & 3) ? "GET" : "POST", (unsigned)(a % 3 + 1),
			 (unsigned long long)(a % 100000), (unsigned long long)(a % 1000003),
			 (unsigned long long)(b % 50021), (unsigned)(b % 90 + 10), agents[b & 3]);
	}
}

int main(int argc, char **argv)
{
	unsigned rounds = 90;
	const char *dir = getenv("TMPDIR");
	char path[4096];

	kp_knob_parse(argc, argv, "reqpipe", knobs, NSTAGES, &rounds, &dir);
	snprintf(path, sizeof(path), "%s/reqpipe.%d.out", dir, (int)getpid());
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out_fd < 0) {
		perror(path);
		return 1;
	}
	setup();
	for (unsigned r = 0; r < rounds; r++)
		rp_round_kprof();
	close(out_fd);
	unlink(path);
	return 0;
}
