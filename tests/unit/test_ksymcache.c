/* The per-boot copy of /proc/kallsyms (symbolize/ksymcache.h), damaged:
 * with a copy of the real file in the cache, one byte of it changed (a
 * flipped bit, or another value) at every byte of its header, at the
 * first letter of 40 names that are looked up and at 64 offsets spread
 * through it (fixed seed), or the file cut short, never changes a name: every
 * address is named as without the cache; the damage is counted and said
 * once, and the copy is written anew (whole, its checksum right). A name
 * changed with the checksum made to match is read from the copy: the
 * copy really answers when it is whole. Needs /proc/kallsyms with
 * addresses (root, or kptr_restrict 0). */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/kallsyms.h"
#include "symbolize/symbolize.h"
#include "util/checksum.h"

#define MAX_ADDRS 200
#define HEADER	  51 /* "kprof-kallsyms 1 " SIZE " " XXH3 "\n" */

static char top[64], cache[96];
static uint64_t addrs[MAX_ADDRS];
static size_t naddrs;
static char *want[MAX_ADDRS]; /* as named without the cache */

/* Text symbols of the core kernel, between _stext and _etext, spread over
 * it: the copy answers for those. */
static bool pick_addresses(void)
{
	FILE *fp = fopen("/proc/kallsyms", "r");
	uint64_t stext = 0, etext = 0, *all = NULL;
	char line[512], name[256];
	size_t n = 0, cap = 0;

	if (!fp)
		return false;
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long a;
		char type;

		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || strchr(line, '['))
			continue;
		if (strcmp(name, "_stext") == 0)
			stext = a;
		if (strcmp(name, "_etext") == 0)
			etext = a;
		if ((type == 't' || type == 'T') && a) {
			if (n == cap) {
				cap = cap ? 2 * cap : 4096;
				all = realloc(all, cap * sizeof(*all));
			}
			all[n++] = a;
		}
	}
	fclose(fp);
	if (!stext || !etext || n < MAX_ADDRS) {
		free(all);
		return false;
	}
	for (size_t i = 0; i < n && naddrs < MAX_ADDRS; i += n / MAX_ADDRS + 1)
		if (all[i] > stext && all[i] < etext)
			addrs[naddrs++] = all[i] + 1;
	free(all);
	return naddrs > 50;
}

/* Names every picked address with a new symbolizer using the cache (or
 * none): into names[] (heap); the stats and the notes' text. */
static void name_all(const char *dir, char **names, struct kp_sym_stats *st, char *notes,
		     size_t size)
{
	struct kp_sym_options opts = {.cache_dir = dir};
	struct kp_symbolizer *sym = kp_sym_new(&opts);
	struct kp_sym_frames f = {0};
	const char *const *v;
	size_t n, len = 0;

	kp_sym_kernel_hint(sym, addrs, naddrs);
	for (size_t i = 0; i < naddrs; i++) {
		struct kp_loc loc = {.addr = addrs[i], .kind = KP_LOC_KERNEL};

		kp_sym_resolve(sym, &loc, &f);
		names[i] = strdup(f.n ? f.frames[0].name : "-");
	}
	kp_sym_stats(sym, st);
	v = kp_sym_notes(sym, &n);
	notes[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(notes + len, size - len, "%s\n", v[i]);
	kp_sym_frames_fini(&f);
	kp_sym_free(sym);
}

/* How many of names differ from want[] (printing the first few). */
static size_t differences(char **names, const char *what)
{
	size_t n = 0;

	for (size_t i = 0; i < naddrs; i++) {
		if (strcmp(names[i], want[i]) != 0 && n++ < 3)
			fprintf(stderr, "%s: %#" PRIx64 " named %s, not %s\n", what, addrs[i],
				names[i], want[i]);
		free(names[i]);
	}
	return n;
}

/* The path of the copy in the cache (one kallsyms-* file), or "". */
static const char *copy_path(void)
{
	static char path[512];
	DIR *d = opendir(cache);
	struct dirent *e;

	path[0] = '\0';
	while (d && (e = readdir(d)))
		if (strncmp(e->d_name, "kallsyms-", 9) == 0)
			snprintf(path, sizeof(path), "%s/%s", cache, e->d_name);
	if (d)
		closedir(d);
	return path;
}

static char *read_all(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	long n;

	*len = 0;
	if (!fp)
		return NULL;
	if (fseek(fp, 0, SEEK_END) == 0 && (n = ftell(fp)) > 0) {
		rewind(fp);
		buf = malloc((size_t)n);
		if (fread(buf, 1, (size_t)n, fp) == (size_t)n)
			*len = (size_t)n;
	}
	fclose(fp);
	return buf;
}

static void put(const char *path, const char *buf, size_t len)
{
	int fd;

	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len);
	if (fd >= 0)
		close(fd);
}

/* Is buf[0..len) a copy as kprof writes it: its header's size and
 * checksum those of the rest? */
static bool sealed(const char *buf, size_t len)
{
	char want_hdr[HEADER + 1];

	if (len < HEADER)
		return false;
	snprintf(want_hdr, sizeof(want_hdr), "kprof-kallsyms 1 %016zx %016" PRIx64 "\n",
		 len - HEADER, kp_checksum(buf + HEADER, len - HEADER));
	return memcmp(buf, want_hdr, HEADER) == 0;
}

static void reseal(char *buf, size_t len)
{
	char hdr[HEADER + 1];

	snprintf(hdr, sizeof(hdr), "kprof-kallsyms 1 %016zx %016" PRIx64 "\n", len - HEADER,
		 kp_checksum(buf + HEADER, len - HEADER));
	memcpy(buf, hdr, HEADER);
}

/* Where the name of picked address i starts in the copy, or 0. */
static size_t name_offset(const char *buf, size_t len, size_t i)
{
	char key[32];
	int klen = snprintf(key, sizeof(key), "\n%016" PRIx64 " ", addrs[i] - 1);

	for (const char *p = memmem(buf, len, key, (size_t)klen); p;
	     p = memmem(p + 1, len - (size_t)(p + 1 - buf), key, (size_t)klen))
		if ((size_t)(p - buf) + (size_t)klen + 2 < len)
			return (size_t)(p - buf) + (size_t)klen + 2; /* past "t " */
	return 0;
}

static size_t tried, damaged_missed, notes_wrong, not_rewritten, renamed;

/* Puts the damaged copy, names everything with it, and checks the rules. */
static void try_damaged(const char *path, const char *bad, size_t len, size_t off, bool counted)
{
	char *names[MAX_ADDRS], notes[8192], *after;
	struct kp_sym_stats st;
	size_t alen;

	put(path, bad, len);
	name_all(cache, names, &st, notes, sizeof(notes));
	tried++;
	renamed += differences(names, "damaged copy");
	if (counted && !st.kallsyms_copy_damaged) {
		if (damaged_missed++ < 3)
			fprintf(stderr, "damage at %zu (of %zu) not counted\n", off, len);
	}
	if (st.kallsyms_copy_damaged && (!strstr(notes, "was damaged") ||
					 strstr(strstr(notes, "was damaged") + 1, "was damaged")))
		notes_wrong++;
	after = read_all(path, &alen);
	if (!after || !sealed(after, alen) || (alen == len && memcmp(after, bad, len) == 0))
		not_rewritten++;
	free(after);
}

/* Each damaged copy costs a reread of /proc/kallsyms (some 0.15 s, the
 * kernel's time, in every build): under ASan, whose suite shares CI's 10
 * minutes with two builds, a quarter of the names and random offsets and
 * a third of the header bytes of the normal build's (the same kinds of
 * damage, alternating as there; fuzz/kallsyms takes every byte). */
#ifdef __SANITIZE_ADDRESS__
#define STRIDE	    4
#define HEADER_STEP 6
#else
#define STRIDE	    1
#define HEADER_STEP 2
#endif

static void test_damage(void)
{
	char *names[MAX_ADDRS], notes[8192], *good, *bad;
	struct kp_sym_stats st;
	const char *path;
	size_t len, nnames = 0;
	uint64_t x = 0x2545f4914f6cdd1dULL;

	name_all(NULL, want, &st, notes, sizeof(notes));
	name_all(cache, names, &st, notes, sizeof(notes));
	CHECK_EQ_INT(differences(names, "first run"), 0);
	path = copy_path();
	CHECK(path[0] != '\0');
	good = read_all(path, &len);
	CHECK(good && sealed(good, len));
	if (!good || !sealed(good, len))
		return;
	name_all(cache, names, &st, notes, sizeof(notes));
	CHECK_EQ_INT(differences(names, "second run"), 0);
	CHECK(!st.kallsyms_copy_damaged);

	/* a name changed, checksum made to match: the copy answers */
	bad = malloc(len);
	memcpy(bad, good, len);
	{
		size_t at = name_offset(bad, len, 0);

		CHECK(at > HEADER);
		if (at > HEADER) {
			bad[at] = 'Q';
			reseal(bad, len);
			put(path, bad, len);
			name_all(cache, names, &st, notes, sizeof(notes));
			CHECK(names[0][0] == 'Q');
			CHECK(!st.kallsyms_copy_damaged);
			CHECK_EQ_INT(differences(names, "resealed"), 1);
		}
	}

	/* every other byte of the header (every sixth under ASan), a bit
	 * flipped or another value in turn; the magic and version
	 * ("kprof-kallsyms 1 ") may read as another format (not counted then,
	 * but never used either) */
	for (size_t off = 0; off < HEADER; off += HEADER_STEP) {
		memcpy(bad, good, len);
		if (off / 2 % 2)
			bad[off] ^= (char)(1u << (off / 2 % 8));
		else
			bad[off] = bad[off] == 'Z' ? 'Y' : 'Z';
		try_damaged(path, bad, len, off, off >= 17);
	}
	/* the first letter of names looked up, likewise */
	for (size_t i = 0; i < naddrs && nnames < 40 / STRIDE; i += 4) {
		size_t at = name_offset(good, len, i);

		if (!at)
			continue;
		memcpy(bad, good, len);
		if (nnames++ % 2)
			bad[at] ^= 0x04;
		else
			bad[at] = bad[at] == 'X' ? 'W' : 'X';
		try_damaged(path, bad, len, at, true);
	}
	CHECK(nnames >= 20 / STRIDE);
	/* a spread of offsets through the rest, fixed seed */
	for (int k = 0; k < 32 / STRIDE; k++) {
		size_t off;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		off = HEADER + (size_t)(x % (len - HEADER));
		memcpy(bad, good, len);
		if (k % 2)
			bad[off] ^= (char)(1u << ((x >> 32) % 8));
		else
			bad[off] = (char)(bad[off] ^ (1 + (x >> 40) % 255));
		try_damaged(path, bad, len, off, true);
	}
	/* cut short, or longer */
	try_damaged(path, good, HEADER - 1, HEADER - 1, false);
	try_damaged(path, good, HEADER, HEADER, true);
	try_damaged(path, good, len / 2, len / 2, true);
	try_damaged(path, good, len - 1, len - 1, true);
	memcpy(bad, good, len);
	bad = realloc(bad, len + 1);
	bad[len] = '\n';
	try_damaged(path, bad, len + 1, len, true);

	printf("damaged copies: %zu tried; %zu names changed, %zu not counted, %zu notes wrong, "
	       "%zu not rewritten\n",
	       tried, renamed, damaged_missed, notes_wrong, not_rewritten);
	CHECK_EQ_INT(renamed, 0);
	CHECK_EQ_INT(damaged_missed, 0);
	CHECK_EQ_INT(notes_wrong, 0);
	CHECK_EQ_INT(not_rewritten, 0);
	free(bad);
	free(good);
	for (size_t i = 0; i < naddrs; i++)
		free(want[i]);
}

/* start_kernel is init text, freed after boot, yet the boot CPU's idle
 * task keeps it on its stack: the copy must answer for it like for the
 * core text, or every system-wide run would reread /proc/kallsyms and
 * rewrite the copy (e2e/kallsyms_cache can only see it when a CPU idles). */
static void test_init_text_is_core(void)
{
	FILE *fp = fopen("/proc/kallsyms", "r");
	char line[512], name[256];
	uint64_t start_kernel = 0;
	struct kp_kallsyms *ks = NULL;
	struct kp_diag d;

	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned long long a;
		char type;

		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    strcmp(name, "start_kernel") == 0 && !strchr(line, '[')) {
			start_kernel = a;
			break;
		}
	}
	if (fp)
		fclose(fp);
	CHECK(start_kernel != 0);
	CHECK_EQ_INT(kp_kallsyms_load("/proc/kallsyms", &ks, &d), 0);
	CHECK(ks && kp_kallsyms_in_core_text(ks, start_kernel + 1));
	kp_kallsyms_free(ks);
}

int main(void)
{
	char first[64] = "";
	FILE *fp = fopen("/proc/kallsyms", "r");

	if (fp && !fgets(first, sizeof(first), fp))
		first[0] = '\0';
	if (fp)
		fclose(fp);
	if (strspn(first, "0") >= 8 || !pick_addresses()) {
		printf("skip: /proc/kallsyms shows no addresses (kptr_restrict; not root?)\n");
		return 0;
	}
	snprintf(top, sizeof(top), "/tmp/kp-ksymcache-XXXXXX");
	if (!mkdtemp(top))
		return 1;
	snprintf(cache, sizeof(cache), "%s/kprof", top);
	test_damage();
	test_init_text_is_core();
	kp_test_sh("rm -rf %s", top);
	printf("%d passed, %d failed\n", kp_test_passed, kp_test_failed);
	return kp_test_failed ? 1 : 0;
}
