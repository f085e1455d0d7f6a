#!/usr/bin/env python3
"""Writes synthetic .kprof windows with a time axis, as `kprof --every`
writes them: WINDOWS files of SECONDS each, abutting, sampled at HZ on
CPUS CPUs, into DIR (w-NNNN.kprof). Stacks: 600 of depth 8-40 over 400
functions; each window draws them from one of 8 mixes (a phase that comes
and goes), with a busier stretch every 17th window.

  scripts/gen-timeline.py DIR [WINDOWS] [SECONDS] [HZ] [CPUS]
  (default 1440 windows of 60 s at 99 Hz on 2 CPUs: a day)
Needs zstd(1). Used by scripts/bench-heatmap."""
import os
import random
import subprocess
import sys
import time


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def zz(v):
    return (v << 1) ^ (v >> 63)


def ld(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def uint(field, v):
    return varint(field << 3) + varint(v)


def packed(field, values):
    return ld(field, b"".join(varint(v) for v in values))


def chunk(kind, msg):
    return ld(1, ld(kind, msg))


ORIGIN_MARK = 0x7EADBEEF7EADBEEF  # a 9-byte varint, replaced per window


def body(rnd, stacks, nfn, events_per_s, seconds, mix):
    names = [b"synth"] + [b"fn_%03d_%s" % (i, b"x" * (i % 23)) for i in range(nfn)]
    out = chunk(1, b"".join(ld(1, s) for s in names + [b"samples", b"count", b"cpu", b"nanoseconds"]))
    ns = len(names)
    out += chunk(2, ld(1, uint(1, ns + 1) + uint(2, ns + 2)) + ld(1, uint(1, ns + 3) + uint(2, ns + 4)))
    out += chunk(3, packed(1, range(2, nfn + 2)) + packed(2, [0] * nfn))
    # a location a function: user code of object 1 at 16 * fn
    out += chunk(4, packed(1, [2] * nfn) + packed(2, [1] * nfn) +
                 packed(3, [zz(16 if i else 0) for i in range(nfn)]) + packed(4, [1] * nfn) +
                 packed(5, [1] * nfn) + packed(6, [zz(1 if i else 0) for i in range(nfn)]) +
                 packed(7, [0] * nfn) + packed(8, [0] * nfn))
    # which stacks this window samples, and how often
    weights = [rnd.random() ** (3 + mix) for _ in stacks]
    n = int(events_per_s * seconds)
    picks = rnd.choices(range(len(stacks)), weights=weights, k=n)
    used = sorted(set(picks))
    sid = {s: i for i, s in enumerate(used)}
    counts = [0] * len(used)
    for s in picks:
        counts[sid[s]] += 1
    locs, depth = [], []
    for s in used:
        st = stacks[s]
        prev = 0
        for l in st:
            locs.append(zz(l - prev))
            prev = l
        depth.append(len(st))
    k = len(used)
    vals = []
    for c in counts:
        vals += [c, c * 10101010]
    out += chunk(6, packed(1, [1] * k) + packed(2, [0] * k) + packed(3, [0] * k) + packed(4, [0] * k) +
                 packed(5, [0] * k) + packed(6, depth) + ld(7, b"".join(varint(x) for x in locs)) +
                 packed(8, vals))
    # events in time order, a tick at each sample of each CPU
    ev = sorted((int(i * 1000 / events_per_s), sid[s], 100 + i % 2) for i, s in enumerate(picks))
    for at in range(0, len(ev), 65536):
        part = ev[at:at + 65536]
        ms = last_tid = 0
        ticks, smp, tids, last = [], [], [], {}
        for t, s, tid in part:
            ticks.append(t - ms)
            ms = t
            smp.append(zz(s - last.get(tid, 0)))  # after the thread's last
            last[tid] = s
            tids.append(zz(tid - last_tid))
            last_tid = tid
        out += chunk(8, uint(1, ORIGIN_MARK) + packed(2, ticks) + packed(3, smp) + packed(4, tids))
    meta = [(b"event", b"cpu-clock"), (b"frequency", b"99"), (b"start", b"START_MARK_XXXXXXXXX"),
            (b"duration", b"%d.000" % seconds), (b"samples", b"%d" % n), (b"lost", b"0"),
            (b"command", b"kprof -a -F 99 --every %d (synthetic)" % seconds)]
    out += chunk(7, b"".join(ld(1, k) for k, _ in meta) + b"".join(ld(2, v) for _, v in meta))
    out += chunk(15, uint(1, ns + 4) + uint(2, 2) + uint(3, nfn) + uint(4, nfn) + uint(5, nfn) +
                 uint(6, 0) + uint(7, k) + uint(8, len(meta)) + uint(9, n))
    return out


def main():
    a = sys.argv[1:]
    if not a:
        sys.exit(__doc__)
    d = a[0]
    windows, seconds, hz, cpus = (int(x) for x in (a[1:] + ["1440", "60", "99", "2"][len(a) - 1:])[:4])
    os.makedirs(d, exist_ok=True)
    rnd = random.Random(20261206)
    nfn = 400
    stacks = []
    for _ in range(600):
        depth = rnd.randint(8, 40)
        stacks.append([rnd.randrange(nfn) if j else 0 for j in range(depth)])
    bodies = [body(rnd, stacks, nfn, hz * cpus, seconds, m) for m in range(8)]
    start = int(time.time()) - windows * seconds
    start -= start % 86400
    for w in range(windows):
        t = start + w * seconds
        b = bodies[(w // 17) % 8 if w % 17 else 7]
        b = b.replace(varint(ORIGIN_MARK), varint(t * 1000000000))
        b = b.replace(b"START_MARK_XXXXXXXXX", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)).encode())
        z = subprocess.run(["zstd", "-q", "-3", "-c"], input=b, stdout=subprocess.PIPE, check=True).stdout
        with open(os.path.join(d, "w-%04d.kprof" % w), "wb") as f:
            f.write(b"KPROF\x01\x01\x00" + z)


main()
