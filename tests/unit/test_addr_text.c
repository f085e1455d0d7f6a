/* symbolize/addr_text (kprof symbolize's addresses): what is an address and
 * what is not, a stream's read up to its first bad line (named by line),
 * the ELF check refusing what is not a regular ELF file, and one line
 * written per address. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kp_test.h"
#include "symbolize/addr_text.h"

static void test_parse(void)
{
	uint64_t v = 0;

	CHECK(kp_addr_text_parse("7f3a", &v) && v == 0x7f3a);
	CHECK(kp_addr_text_parse("  0x10 \r\n", &v) && v == 0x10);
	CHECK(kp_addr_text_parse("0XFFFFFFFFFFFFFFFF", &v) && v == UINT64_MAX);
	CHECK(!kp_addr_text_parse("", &v));
	CHECK(!kp_addr_text_parse("0x", &v));
	CHECK(!kp_addr_text_parse("-1", &v));
	CHECK(!kp_addr_text_parse("+1", &v));
	CHECK(!kp_addr_text_parse("12 34", &v));
	CHECK(!kp_addr_text_parse("10000000000000000", &v)); /* past 64 bits */
	CHECK(!kp_addr_text_parse("zz", &v));
}

static void test_read(void)
{
	char good[] = "0x10\n\n  20\r\n", bad[] = "1\n2\n  nothex\n3\n";
	struct kp_addrs a = {0};
	struct kp_diag d = {""};
	FILE *f = fmemopen(good, strlen(good), "r");

	CHECK_EQ_INT(kp_addr_text_read(f, "stdin", &a, &d), 0);
	fclose(f);
	CHECK(a.n == 2 && a.v[0] == 0x10 && a.v[1] == 0x20);
	f = fmemopen(bad, strlen(bad), "r");
	CHECK(kp_addr_text_read(f, "in", &a, &d) < 0);
	fclose(f);
	CHECK_EQ_STR(d.msg, "in:3: not a hex address: \"  nothex\"");
	CHECK(a.n == 4); /* the lines before the bad one were taken */
	free(a.v);
}

static void test_elf_path(void)
{
	char name[] = "/tmp/kp-addr-text-XXXXXX", *text_file = NULL;
	int fd = mkstemp(name);
	struct kp_diag d = {""};
	char *p = kp_addr_text_elf_path("/dev/null", &d);

	if (fd >= 0 && write(fd, "not an ELF file\n", 16) == 16)
		text_file = name;
	if (fd >= 0)
		close(fd);

	CHECK(p == NULL);
	CHECK_EQ_STR(d.msg, "/dev/null: not an ELF file (not a regular file)");
	CHECK(kp_addr_text_elf_path("/nonexistent-kp", &d) == NULL);
	CHECK_EQ_STR(d.msg, "/nonexistent-kp: No such file or directory");
	CHECK(text_file != NULL && kp_addr_text_elf_path(text_file, &d) == NULL);
	CHECK(strstr(d.msg, ": not an ELF file (of this machine's byte order)") != NULL);
	p = kp_addr_text_elf_path("/proc/self/exe", &d);
	CHECK(p != NULL && p[0] == '/');
	free(p);
	if (fd >= 0)
		unlink(name);
}

static void test_write(void)
{
	struct kp_symbolizer *sym = kp_sym_new(NULL);
	struct kp_mapping m = {0};
	struct kp_addrs a = {0};
	char *out = NULL, *abs = realpath("/proc/self/exe", NULL);
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	m.path = abs;
	kp_addrs_add(&a, 0x1);
	kp_addrs_add(&a, 0x2);
	kp_addr_text_write(f, sym, kp_sym_object_get(sym, &m), &a, true, true);
	fclose(f);
	/* one line an address, each starting with it */
	CHECK(strncmp(out, "0x1 ", 4) == 0);
	CHECK(strstr(out, "\n0x2 ") != NULL);
	CHECK(len > 0 && out[len - 1] == '\n' && strchr(out, '\n') != out + len - 1);
	free(out);
	free(a.v);
	free(abs);
	kp_sym_free(sym);
}

KP_TEST_MAIN(test_parse, test_read, test_elf_path, test_write)
