#!/usr/bin/env python3
"""Seeds for fuzz_v8 (tests/fuzz/corpus/v8/): small heaps laid out as
fuzz_v8.c reads its input (every address modulo the input's size, the
stack copy at offset 0, the frame pointer at byte 16), each holding one
JavaScript frame whose function, shared info, name and script check out
with node 20's metadata (v8_node20.inc): a String name, a ScopeInfo name
with a line from the script's line ends, a cons string name, and a
two-byte name. Usage: make-v8-seeds.py OUTDIR"""
import os
import struct
import sys

SIZE = 4096
M = {}
here = os.path.dirname(os.path.abspath(__file__))
for line in open(os.path.join(here, "v8_node20.inc")):
    line = line.strip()
    if line.startswith('{"'):
        name, value = line[2:].split('", ')
        M[name[6:]] = int(value.rstrip("},"))


def tag(off):
    return SIZE * 4096 + off + 1  # an address far from 0 that reads as off


def smi(v):
    return (v << 32) & 0xFFFFFFFFFFFFFFFF


class Heap:
    def __init__(self):
        self.b = bytearray(SIZE)
        self.top = 1024  # objects from here; the stack below

    def put(self, off, data):
        self.b[off:off + len(data)] = data

    def q(self, off, v):
        self.put(off, struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF))

    def alloc(self, n):
        off = self.top
        self.top += (n + 15) & ~15
        return off

    def map_of(self, itype):
        off = self.alloc(16)
        self.put(off + M["class_Map__instance_type__"], struct.pack("<H", itype))
        return tag(off)

    def obj(self, itype, n):
        off = self.alloc(n)
        self.q(off, self.map_of(itype))
        return off

    def string(self, s, two=False, cons_split=None):
        if cons_split:
            a = self.string(s[:cons_split])
            b = self.string(s[cons_split:])
            off = self.obj(M["ConsStringTag"] | M["OneByteStringTag"], 32)
            self.put(off + M["class_String__length__"], struct.pack("<i", len(s)))
            self.q(off + M["class_ConsString__first__"], a)
            self.q(off + M["class_ConsString__second__"], b)
            return tag(off)
        raw = s.encode("utf-16le") if two else s.encode("latin-1")
        itype = M["SeqStringTag"] | (0 if two else M["OneByteStringTag"])
        off = self.obj(itype, M["class_SeqOneByteString__chars__"] + len(raw))
        self.put(off + M["class_String__length__"], struct.pack("<i", len(s)))
        self.put(off + M["class_SeqOneByteString__chars__"], raw)
        return tag(off)


def seed(kind):
    h = Heap()
    script_name = h.string("/srv/app/server.js")
    ends = h.obj(M["type_FixedArray__FIXED_ARRAY_TYPE"], 16 + 8 * 6)
    h.q(ends + M["class_FixedArrayBase__length__"], smi(6))
    for i, e in enumerate([10, 40, 80, 120, 160, 200]):
        h.q(ends + M["class_FixedArray__data__"] + 8 * i, smi(e))
    script = h.obj(M["type_Script__SCRIPT_TYPE"], 128)
    h.q(script + M["class_Script__name__"], script_name)
    h.q(script + M["class_Script__line_ends__"], tag(ends))
    if kind == "scope":
        si = h.obj(M["type_ScopeInfo__SCOPE_INFO_TYPE"], 96)
        flags = 2 | 1 << 12 | 1 << 14  # function scope, function var, inferred name
        for i, w in enumerate([smi(flags), smi(1), smi(0), h.string("handleScoped"), smi(-1),
                               h.string("App.handle"), smi(95), smi(150)]):
            h.q(si + 8 + 8 * i, w)
        name = tag(si)
    elif kind == "cons":
        name = h.string("consNamedHandler", cons_split=4)
    elif kind == "two":
        name = h.string("h\u00e9llo\u4e16\u754c", two=True)
    else:
        name = h.string("handleRequest")
    sfi = h.obj(M["type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE"], 64)
    h.q(sfi + M["class_SharedFunctionInfo__name_or_scope_info__"], name)
    h.q(sfi + M["class_SharedFunctionInfo__script_or_debug_info__"], tag(script))
    ctx = h.obj(M["type_FixedArray__FIXED_ARRAY_TYPE"], 32)
    fn = h.obj(M["type_JSFunction__JS_FUNCTION_TYPE"], 64)
    h.q(fn + M["class_JSFunction__shared__"], tag(sfi))
    h.q(fn + M["class_JSFunction__context__"], tag(ctx))
    # the stack: byte 0 odd (batched reads), frames' code bytes 8..15 JIT
    fp = 64
    h.b[0] = 1
    for i in range(8, 16):
        h.b[i] = 2
    h.q(16, fp)
    h.q(fp, fp + 64)
    h.q(fp + 8, 0x1100 + h.b[1])
    h.q(fp + M["off_fp_context"], tag(ctx))
    h.q(fp + M["off_fp_function"], tag(fn))
    return bytes(h.b)


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for kind in ("string", "scope", "cons", "two"):
    with open(os.path.join(out, "frame-" + kind), "wb") as f:
        f.write(seed(kind))
