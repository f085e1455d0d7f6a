#!/usr/bin/env python3
"""Writes a large, realistic-looking folded profile, the same bytes every run.

Usage: scripts/gen-folded.py [STACKS] > big.folded      (default 300000 stacks)

A program of 40000 user functions, 4000 kernel functions (_[k]) and 2000
JIT methods (_[j]) calls along a fixed call graph (each function has a few
preferred callees, so hot paths emerge as in real profiles); stacks are
random walks 4 to 48 frames deep under a dozen process names, kept until
STACKS distinct ones exist. Counts are heavy-tailed (most stacks are seen
once or twice). Lines are sorted as `LC_ALL=C sort` would, like the output
of stackcollapse-perf.pl and kprof. Used by the flame-graph benchmark.
"""
import random
import sys


def main():
    want = int(sys.argv[1]) if len(sys.argv) > 1 else 300000
    rng = random.Random(20261130)
    words = ["alloc", "parse", "hash", "lookup", "read", "write", "encode", "decode",
             "flush", "sort", "merge", "scan", "visit", "emit", "update", "compress",
             "send", "recv", "poll", "wait", "lock", "unlock", "copy", "fill"]
    spaces = ["std", "db", "net", "http", "json", "io", "util", "core", "vm", "gc"]
    names = []
    for i in range(40000):
        names.append("%s::%s%d::%s_%s" % (rng.choice(spaces), rng.choice(words).title(), i % 977,
                                          rng.choice(words), rng.choice(words)))
    nuser = len(names)
    for i in range(4000):
        names.append("%s_%s_%d_[k]" % (rng.choice(["sys", "do", "__x64", "tcp", "ext4", "mm"]),
                                       rng.choice(words), i))
    nkernel = len(names)
    for i in range(2000):
        names.append("Lcom/example/%s%d;::%s_[j]" % (rng.choice(words).title(), i,
                                                    rng.choice(words)))

    def callees(f):
        # user code calls user code, sometimes JIT code or the kernel; the
        # kernel calls only the kernel
        if nuser <= f < nkernel:
            pool = (nuser, nkernel)
        elif rng.random() < 0.1:
            pool = (nkernel, len(names))
        else:
            pool = (0, nuser)
        out = [rng.randrange(*pool) for _ in range(rng.randint(2, 12))]
        if f < nuser or f >= nkernel:
            out.append(rng.randrange(nuser, nkernel))  # a syscall
        return out

    graph = {}
    roots = ["server-%d" % i for i in range(8)] + ["worker", "gc-thread", "swapper", "cron"]
    entry = [rng.randrange(nuser) for _ in range(len(roots))]
    counts = {}
    while len(counts) < want:
        r = min(int(rng.expovariate(0.5)), len(roots) - 1)
        path = [roots[r]]
        f = entry[r]
        for _ in range(rng.randint(4, 48)):
            path.append(names[f])
            cs = graph.get(f)
            if cs is None:
                cs = graph[f] = callees(f)
            f = cs[min(int(rng.expovariate(0.7)), len(cs) - 1)]
        stack = ";".join(path)
        counts[stack] = counts.get(stack, 0) + min(int(rng.paretovariate(1.3)), 5000)
    out = sys.stdout.buffer
    for stack in sorted(counts, key=lambda s: s.encode()):
        out.write(("%s %d\n" % (stack, counts[stack])).encode())


if __name__ == "__main__":
    main()
