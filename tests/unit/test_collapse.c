/* kp_collapse: hand-written perf script snippets, one rule of
 * stackcollapse-perf.pl each, with the exact folded text expected. */
#include <stdlib.h>
#include <string.h>

#include "formats/collapse.h"
#include "kp_test.h"

static struct kp_collapse_stats last_stats;

/* Folds text with opts (fed in chunks of `chunk` bytes, 0: all at once)
 * and returns the folded output; caller frees. */
static char *fold_chunked(const char *text, const struct kp_collapse_opts *opts, size_t chunk)
{
	struct kp_collapse *c = kp_collapse_new(opts);
	size_t len = strlen(text), size = 0;
	char *out = NULL;
	FILE *fp;

	if (!chunk)
		chunk = len ? len : 1;
	for (size_t off = 0; off < len; off += chunk)
		kp_collapse_feed(c, text + off, len - off < chunk ? len - off : chunk);
	kp_collapse_end_input(c);
	fp = open_memstream(&out, &size);
	CHECK(kp_collapse_write(c, fp, NULL) == 0);
	fclose(fp);
	last_stats = *kp_collapse_stats(c);
	last_stats.event = NULL; /* owned by c */
	last_stats.other_event = NULL;
	kp_collapse_free(c);
	return out;
}

static void expect(const char *text, const struct kp_collapse_opts *opts, const char *want)
{
	static const struct kp_collapse_opts none;
	char *got = fold_chunked(text, opts ? opts : &none, 0);
	char *bytewise = fold_chunked(text, opts ? opts : &none, 1);

	CHECK_EQ_STR(got, want);
	/* lines split across feeds give the same result */
	CHECK_EQ_STR(bytewise, want);
	free(got);
	free(bytewise);
}

static void test_basic_and_sorting(void)
{
	expect("swapper     0 [000] 158665.570607: cpu-clock: \n"
	       "\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n"
	       "\tffffffff81013236 cpu_idle ([kernel.kallsyms])\n"
	       "\n"
	       "bash 12 [001] 158665.580000: cpu-clock: \n"
	       "\t4005d0 main (/bin/bash)\n"
	       "\n"
	       "swapper     0 [000] 158665.590607: cpu-clock: \n"
	       "\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])\n"
	       "\tffffffff81013236 cpu_idle ([kernel.kallsyms])\n"
	       "\n",
	       NULL, "bash;main 1\nswapper;cpu_idle;native_safe_halt 2\n");
	CHECK_EQ_INT(last_stats.samples, 3);
	CHECK_EQ_INT(last_stats.bad_lines, 0);
	/* a header with no frames still counts, as the bare comm */
	expect("idle 5 1.0: cycles:\n\n", NULL, "idle 1\n");
	/* byte order, shorter first (Perl's sort) */
	expect("ab 1 1.0: cycles:\n\tf B (/x)\n\nab 1 1.0: cycles:\n\tf a (/x)\n\n"
	       "ab 1 1.0: cycles:\n\tf a (/x)\n\tf a (/x)\n\n",
	       NULL, "ab;B 1\nab;a 1\nab;a;a 1\n");
}

static void test_comm_pid_tid(void)
{
	static const struct kp_collapse_opts pid = {.pid = true}, tid = {.tid = true};
	const char *in = "V8 WorkerThread 24636/25607 [000] 94564.109216: 100 cycles:\n"
			 "\t7f01 run (/usr/bin/node)\n\n";

	expect(in, NULL, "V8_WorkerThread;run 100\n");
	expect(in, &pid, "V8_WorkerThread-24636;run 100\n");
	expect(in, &tid, "V8_WorkerThread-24636/25607;run 100\n");
	/* only a TID: the PID is "?"; a TID of 0 counts as none */
	expect("java 25607 4794564.109216: cycles:\n\t1 f (/x)\n\n", &tid, "java-?/25607;f 1\n");
	expect("swapper 0/0 [000] 1.0: cycles:\n\t1 f (/x)\n\n", &tid, "swapper-?/0;f 1\n");
	/* the comm is the shortest start of two characters or more that is
	 * followed by blanks, a number and a blank: here "x 12 ab" */
	expect("x 12 ab 34 1.0: cycles:\n\t1 f (/x)\n\n", NULL, "x_12_ab;f 1\n");
	expect("kworker/0:1 42 [003] 1.0: cycles:\n\t1 f (/x)\n\n", &pid, "kworker/0:1-?;f 1\n");
}

static void test_period_and_events(void)
{
	static const struct kp_collapse_opts cyc = {.event_filter = "cycles"};
	const char *in = "a1 1 1.0:   10101010 cpu-clock:ppp: \n\t1 f (/x)\n\n"
			 "a1 1 1.0:   5 cycles:\n\t1 g (/x)\n\n"
			 "a1 1 1.0:   7 cpu-clock:ppp: \n\t1 f (/x)\n\n"
			 "a1 1 1.0:   0 cycles:\n\t1 h (/x)\n\n";

	/* default: the first event seen, the others skipped and counted */
	expect(in, NULL, "a1;f 10101017\n");
	CHECK_EQ_INT(last_stats.filtered, 2);
	CHECK(last_stats.event_defaulted);
	/* a period of 0 is false in Perl: counts 1 */
	expect(in, &cyc, "a1;g 5\na1;h 1\n");
	CHECK_EQ_INT(last_stats.filtered, 2);
	CHECK(!last_stats.event_defaulted);
	/* no period printed: each sample counts 1 */
	expect("a1 1 [000] 1.0: cycles: \n\t1 f (/x)\n\na1 1 [000] 1.0: cycles: \n\t1 f (/x)\n\n",
	       NULL, "a1;f 2\n");
	/* header with trailing fields (a tracepoint): no event, not filtered */
	expect("a1 1 1.0: cycles:\n\t1 f (/x)\n\n"
	       "a1 1 1.0: sched:sched_switch: prev_comm=a1 prev_pid=1\n\t1 g (/x)\n\n",
	       NULL, "a1;f 1\na1;g 1\n");
}

static void test_frames_tidy(void)
{
	static const struct kp_collapse_opts addrs = {.addrs = true};
	const char *unk = "dd 1 1.0: cycles:\n"
			  "\t0 [unknown] ([unknown])\n"
			  "\te5f70 [unknown] (/lib/x86_64-linux-gnu/libc-2.15.so)\n\n";

	/* offsets stripped, argument lists dropped, ';' -> ':', quotes gone */
	expect("a1 1 1.0: cycles:\n"
	       "\t7fffb84c9afc cpu_startup_entry+0x1c ([kernel.kallsyms])\n"
	       "\t400123 foo(int, char*) (/bin/a1)\n"
	       "\t400124 RegExp:[&<>\\\"\\'] (/tmp/perf-1.map)\n"
	       "\t400125 a;b (/bin/a1)\n\n",
	       NULL, "a1;a:b;RegExp:[&<>\\\\];foo;cpu_startup_entry 1\n");
	/* kept: Go method receivers and C++ anonymous namespaces (a symbol
	 * that starts with '(' would be taken for a process name) */
	expect("a1 1 1.0: cycles:\n"
	       "\t1 net/http.(*Client).Do (/bin/a1)\n"
	       "\t2 ns::(anonymous namespace)::run(int) (/bin/a1)\n\n",
	       NULL, "a1;ns::(anonymous namespace)::run;net/http.(*Client).Do 1\n");
	/* a symbol of "(comm)" is a process name: skipped */
	expect("a1 1 1.0: cycles:\n\t1 f (/x)\n\t2 (a1) (/x)\n\n", NULL, "a1;f 1\n");
	/* [unknown] becomes the module's file name, or [unknown]; --addrs adds the pc */
	expect(unk, NULL, "dd;[libc-2.15.so];[unknown] 1\n");
	expect(unk, &addrs, "dd;[libc-2.15.so <e5f70>];[unknown <0>] 1\n");
	/* perf's inline chains "a->b": the callee parts get _[i] */
	expect("a1 1 1.0: cycles:\n\t1 outer->inner->inner2 (/x)\n\n", NULL,
	       "a1;outer;inner_[i];inner2_[i] 1\n");
}

static void test_kernel_jit(void)
{
	static const struct kp_collapse_opts k = {.kernel = true}, j = {.jit = true},
					     all = {.kernel = true, .jit = true};
	const char *in = "node 7 1.0: cycles:\n"
			 "\tffffffff81 tcp_sendmsg ([kernel.kallsyms])\n"
			 "\t8c3453 vfs_read (/lib/modules/4.3.0/build/vmlinux)\n"
			 "\t7d8 ipv4_conntrack_local+0x7f ([nf_conntrack_ipv4])\n"
			 "\t13a80b LazyCompile:~body_0 (/tmp/perf-7539.map)\n"
			 "\t0 [unknown] ([unknown])\n"
			 "\t4005 main (/usr/bin/node)\n\n";

	expect(in, &k,
	       "node;main;[unknown];LazyCompile:~body_0;ipv4_conntrack_local_[k];vfs_read_[k];"
	       "tcp_sendmsg_[k] 1\n");
	expect(in, &j,
	       "node;main;[unknown];LazyCompile:~body_0_[j];ipv4_conntrack_local;vfs_read;"
	       "tcp_sendmsg 1\n");
	expect(in, &all,
	       "node;main;[unknown];LazyCompile:~body_0_[j];ipv4_conntrack_local_[k];vfs_read_[k];"
	       "tcp_sendmsg_[k] 1\n");
}

static void test_java(void)
{
	static const struct kp_collapse_opts pid = {.pid = true};
	const char *in = "java 19983 1.0: cycles:\n"
			 "\t7f72 Lorg/mozilla/javascript/MemberBox;.<init>(Ljava/lang/Object;)V "
			 "(/tmp/perf-19982.map)\n"
			 "\t7f73 LBusy;::main (/tmp/perf-19982.map)\n\n";

	/* "L...;" class names lose the L when they have a '/', ';' -> ':' */
	expect(in, NULL, "java;LBusy:::main;org/mozilla/javascript/MemberBox:.<init> 1\n");
	/* still with --pid (the root frame starts with "java") */
	expect(in, &pid, "java-?;LBusy:::main;org/mozilla/javascript/MemberBox:.<init> 1\n");
	/* not for other programs */
	expect("node 1 1.0: cycles:\n\t7f72 Lorg/Foo;.bar (/x)\n\n", NULL,
	       "node;Lorg/Foo:.bar 1\n");
}

static void test_srcline(void)
{
	static const struct kp_collapse_opts src = {.srcline = true};

	expect("a.out 35081 252436.005167:     667783 cycles:\n"
	       "\t408ebb some_method_name+0x8b (/full/path/to/a.out)\n"
	       "  uniform_int_dist.h:300\n"
	       "\t4069f5 main+0x935 (/full/path/to/a.out)\n"
	       "  file.cpp:137\n"
	       "\t7f6d2148eb25 __libc_start_main+0xd5 (/lib64/libc-2.33.so)\n"
	       "  libc-2.33.so[27b25]\n"
	       "\t7ffc71ee9580 [unknown] ([unknown])\n"
	       "\n",
	       &src,
	       "a.out;[unknown];__libc_start_main:libc-2.33.so;main:file.cpp:137;"
	       "some_method_name:uniform_int_dist.h:300 667783\n");
	CHECK_EQ_INT(last_stats.bad_lines, 0);
}

static void test_bad_lines_and_framing(void)
{
	/* garbage is skipped and counted, with the first line number */
	expect("# comment\n"
	       "a1 1 1.0: cycles:\n"
	       "\t1 f (/x)\n"
	       "what is this\n"
	       "\t1 g (/x)\n"
	       "\n"
	       "\x01\x02\xff\n",
	       NULL, "a1;g;f 1\n");
	CHECK_EQ_INT(last_stats.bad_lines, 2);
	CHECK_EQ_INT(last_stats.first_bad_line, 4);
	/* CRLF is read as LF */
	expect("a1 1 1.0: cycles:\r\n\t1 f (/x)\r\n\r\n", NULL, "a1;f 1\n");
	/* the last sample without its blank line is dropped, and counted */
	expect("a1 1 1.0: cycles:\n\t1 f (/x)\n\na1 1 1.0: cycles:\n\t1 g (/x)", NULL, "a1;f 1\n");
	CHECK_EQ_INT(last_stats.unterminated, 1);
	/* empty input: nothing, no complaint */
	expect("", NULL, "");
	CHECK_EQ_INT(last_stats.bad_lines, 0);
}

static void test_several_inputs(void)
{
	static const struct kp_collapse_opts none;
	struct kp_collapse *c = kp_collapse_new(&none);
	const char *a = "a1 1 1.0: cycles:\n\t1 f (/x)\n\n", *b = "a1 1 1.0: cycles:\n\t1 f (/x)";
	char *out = NULL;
	size_t size = 0;
	FILE *fp;

	/* an input that ends inside a sample does not leak into the next one */
	kp_collapse_feed(c, b, strlen(b));
	kp_collapse_end_input(c);
	kp_collapse_feed(c, a, strlen(a));
	kp_collapse_end_input(c);
	kp_collapse_feed(c, a, strlen(a));
	kp_collapse_end_input(c);
	fp = open_memstream(&out, &size);
	CHECK(kp_collapse_write(c, fp, NULL) == 0);
	fclose(fp);
	CHECK_EQ_STR(out, "a1;f 2\n");
	CHECK_EQ_INT(kp_collapse_nstacks(c), 1);
	CHECK_EQ_INT(kp_collapse_stats(c)->unterminated, 1);
	free(out);
	kp_collapse_free(c);
}

/* A line over the 64 MiB limit is skipped and counted whether it comes in
 * one feed or in several (found by tests/fuzz/fuzz_collapse_limits: fed
 * whole, it used to be processed as a frame). */
static void test_long_line_any_chunking(void)
{
	static const char head[] = "a1 1 1.0: cycles:\n\t1 f (/x)", tail[] = "\n\t1 g (/x)\n\n";
	size_t pad = (64u << 20) + 1, len = strlen(head) + pad + strlen(tail);
	char *text = malloc(len + 1);
	static const size_t chunks[] = {0, 256 << 10};

	memcpy(text, head, strlen(head));
	memset(text + strlen(head), ' ', pad);
	memcpy(text + strlen(head) + pad, tail, strlen(tail) + 1);
	for (size_t i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++) {
		static const struct kp_collapse_opts none;
		char *out = fold_chunked(text, &none, chunks[i]);

		CHECK_EQ_STR(out, "a1;g 1\n");
		CHECK_EQ_INT(last_stats.long_lines, 1);
		CHECK_EQ_INT(last_stats.bad_lines, 1);
		CHECK_EQ_INT(last_stats.first_bad_line, 2);
		free(out);
	}
	free(text);
}

/* Empty parts of an inline chain, first thing a collapser sees: the
 * annotation checks looked for "_[i]" / "_[j]" in a NULL name (UB; found
 * by tests/fuzz/fuzz_collapse). */
static void test_empty_parts_first(void)
{
	static const struct kp_collapse_opts jit = {.jit = true};

	expect("java 1 1.0: cycles:\n\t1 ->x (/tmp/perf-1.map)\n\n", &jit, "java;_[j];x_[i] 1\n");
	expect("a1 1 1.0: cycles:\n\t1 ->->x (/x)\n\n", NULL, "a1;;_[i];x_[i] 1\n");
}

KP_TEST_MAIN(test_basic_and_sorting, test_comm_pid_tid, test_period_and_events, test_frames_tidy,
	     test_kernel_jit, test_java, test_srcline, test_bad_lines_and_framing,
	     test_several_inputs, test_long_line_any_chunking, test_empty_parts_first)
