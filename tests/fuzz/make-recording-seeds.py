#!/usr/bin/env python3
"""Writes the hostile seeds of tests/fuzz/corpus/recording/ (fuzz_recording.c):
recordings whose stacks would take memory quadratic in their size, behind
the control bytes 1 0 (the bytes are the whole file). One location; in
each samples chunk, each sample shares the whole stack of the one before
it and adds one location (issue 16):

  hostile-chunk   5000 samples in one chunk (more than the writer's 4096)
  hostile-unfold  8 chunks of 4096 (within every per-chunk limit: 68
                  million stack locations, some 270 MB, for 270 KB)

Needs zstd(1).  tests/fuzz/make-recording-seeds.py"""
import os
import subprocess
import tempfile


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def ld(field, data):
    return varint(field << 3 | 2) + varint(len(data)) + data


def uint(field, v):
    return varint(field << 3) + varint(v)


def packed(field, values):
    return ld(field, b"".join(varint(v) for v in values))


def chunk(kind, msg):
    return ld(1, ld(kind, msg))


def body(n, per):
    nchunks = (n + per - 1) // per
    out = chunk(1, ld(1, b"samples") + ld(1, b"count"))
    out += chunk(2, ld(1, uint(1, 1) + uint(2, 2)))
    # nchunks locations, never named, at addresses 1, 2, ...
    out += chunk(4, packed(1, [0] * nchunks) + packed(2, [0] * nchunks) +
                 packed(3, [2] * nchunks) + packed(4, [0] * nchunks) +
                 packed(5, [0] * nchunks))
    for c in range(nchunks):
        k = min(per, n - c * per)
        out += chunk(6, packed(1, [0] * k) + packed(2, [0] * k) + packed(3, [0] * k) +
                     packed(4, [0] + [1] * (k - 1)) + packed(5, list(range(k))) +
                     packed(6, [1] * k) + packed(7, [2 * c] + [0] * (k - 1)) +
                     packed(8, [1] * k))
    return out + chunk(15, uint(1, 2) + uint(2, 1) + uint(4, nchunks) + uint(7, n))


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "recording")
    for name, n, per in (("hostile-chunk", 5000, 5000), ("hostile-unfold", 8 * 4096, 4096)):
        with tempfile.NamedTemporaryFile() as tmp:
            tmp.write(body(n, per))
            tmp.flush()
            z = subprocess.run(["zstd", "-19", "-q", "-c", tmp.name], check=True,
                               capture_output=True).stdout
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"\x01\x00KPROF\x01\x00\x00" + z)


if __name__ == "__main__":
    main()
