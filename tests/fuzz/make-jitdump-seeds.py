#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/jitdump/: fuzz_jitdump's seeds, a split byte
(where the file is cut for the two-part read) then a jitdump file:
functions with lines, V8's header and debug-entry skew, V8's records
whose file names are heap bytes, unwinding info, MOVE, overlapping
loads, CLOSE, a future version, the other byte order, truncations, absurd
sizes and unknown record types. Run again after a change of the format:
    tests/fuzz/make-jitdump-seeds.py
"""
import os
import shutil
import struct

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "jitdump")
MAGIC = 0x4A695444


def header(version=1, reserved=0, magic=MAGIC, size=40):
    return struct.pack("<IIIIIIQQ", magic, version, size, 62, reserved, 1234, 1, 0) + bytes(size - 40)


def rec(rid, body, size=None):
    return struct.pack("<IIQ", rid, size if size is not None else 16 + len(body), 2) + body


def pad8(b):
    return b + bytes(-len(b) % 8)


def load(addr, size, index, name, code=None):
    code = b"\xcc" * size if code is None else code
    body = struct.pack("<IIQQQQ", 1234, 1235, addr, addr, size, index) + name.encode() + b"\0" + code
    return rec(0, body)


def debug_padded(addr, entries, raw_names=None):
    body = struct.pack("<QQ", addr, len(entries))
    for i, (a, line, f) in enumerate(entries):
        name = raw_names[i] if raw_names else f.encode() + b"\0"
        body += struct.pack("<QII", a, line, 0) + name
    body += bytes(-(len(body) + 16) % 8)
    return rec(2, body)


def unwind(eh_frame, hdr, mapped=True):
    data = eh_frame + hdr
    body = struct.pack("<QQQ", len(data), len(hdr), len(data) if mapped else 0) + data
    body += bytes(-(len(body) + 16) % 8)
    return rec(4, body)


def move(old, new, size, index):
    return rec(1, struct.pack("<IIQQQQQ", 1234, 1235, new, old, new, size, index))


# V8's eh_frame for a function of 0x100 bytes (CIE, FDE, terminator) and
# its .eh_frame_hdr, as node 20 writes them
EH = bytes.fromhex(
    "1800000000000000037a4c520001781002ff1b0c0708900100000000"
    "2000000020000000ccfcffff09030000004f0e108602430d0602560d07410e08520c061000000000")
EH_HDR = bytes.fromhex("011b033bb8ffffff01000000acfcffffd8ffffff")


def seeds():
    s = {}
    fn = debug_padded(0x1000, [(0x1000, 5, "/a.js"), (0x1010, 7, "/a.js"), (0x1040, 9, "/b.js")])
    basic = header() + fn + load(0x1000, 0x100, 0, "JS:*f /a.js:4:10") + \
        load(0x2000, 0x80, 1, "JS:g /b.js:1:1") + load(0x3000, 0x10, 2, "stub") + rec(3, b"")
    s["basic"] = basic
    v8 = header(reserved=0xDEADBEEF)
    v8 += unwind(EH, EH_HDR)
    v8 += debug_padded(0x7000, [(0x7040, 8, "/h.js"), (0x7079, 10, "/h.js"), (0x709d, 12, "\xff")],
                       raw_names=[b"/h.js\0", b"/h.js\0", b"\xff\0"])
    v8 += load(0x7000, 0x30c, 7, "JS:*hotLoop /h.js:8:22")
    v8 += unwind(b"", bytes.fromhex("011b033b0000000000000000000000000000000000"[:40]), mapped=False)
    v8 += load(0x18c4000, 0x300, 8, "Builtin:DeoptimizationEntry_Eager")
    s["v8"] = v8
    # names of heap bytes, NULs inside, all of one length
    garbage = b"hfb*\0\0\0\0+XZd4)\xc36/calls.js\0"
    s["v8-garbled"] = header(reserved=0xDEADBEEF) + debug_padded(
        0x9000, [(0x9040, 10, ""), (0x9067, 12, ""), (0x907d, 15, "")], raw_names=[garbage] * 3) + \
        load(0x9000, 0x100, 3, "JS:*fibHotKernel /w/calls.js:10:22")
    s["move"] = header() + load(0x1000, 0x100, 0, "old") + load(0x1080, 0x100, 1, "new") + \
        debug_padded(0x4000, [(0x4000, 3, "/m.js")]) + load(0x4000, 0x40, 2, "m /m.js:1:1") + \
        move(0x4000, 0x9000, 0x40, 2) + move(0x7000, 0x8000, 0x40, 77)
    s["version2"] = header(version=2) + load(0x1000, 0x10, 0, "f")
    s["swapped"] = struct.pack(">IIIIIIQQ", MAGIC, 1, 40, 62, 0, 1, 1, 0) + load(0x1000, 0x10, 0, "f")
    s["big-header"] = header(size=64) + load(0x1000, 0x10, 0, "f")
    s["truncated-load"] = (header() + load(0x1000, 0x100, 0, "JS:*f /a.js:4:10"))[:-100]
    absurd = header()
    absurd += rec(0, struct.pack("<IIQQQQ", 1, 1, 0x3000, 0x3000, 1 << 20, 3) + b"a\0", size=60)
    absurd += rec(2, struct.pack("<QQQ", 0x2000, 1000000, 0))
    absurd += rec(4, struct.pack("<QQQQ", 4096, 20, 4096, 0))
    absurd += rec(9, bytes(8))
    absurd += load(0x5000, 0x10, 5, "after")
    absurd += rec(0, b"", size=8)
    absurd += load(0x6000, 0x10, 6, "never")
    s["absurd"] = absurd
    s["out-of-order"] = header() + load(0x1000, 0x100, 0, "f") + \
        debug_padded(0x1000, [(0x1000, 5, "/a.js")]) + move(0x1000, 0x2000, 0x80, 0) + \
        unwind(EH, EH_HDR) + rec(3, b"") + load(0x3000, 0x10, 1, "after close")
    return s


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    for name, data in sorted(seeds().items()):
        for split in (0x80, 0xff):
            with open(os.path.join(OUT, "%s-%02x" % (name, split)), "wb") as f:
                f.write(bytes([split]) + data)


if __name__ == "__main__":
    main()
