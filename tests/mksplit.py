#!/usr/bin/env python3
"""usage: tests/mksplit.py IN.gguf OUT_PREFIX N

Writes IN (a header-only GGUF is enough) as a split model of N shards,
OUT_PREFIX-00001-of-0000N.gguf ..., header-only, as llama-gguf-split lays
them out: the first shard keeps every key, each shard has split.no,
split.count and split.tensors.count, and the tensors are dealt out in
order, their offsets from each shard's own data. For the fake hub of
tests/http_server.sh."""
import struct
import sys

SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def main():
    src, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    b = open(src, "rb").read()
    magic, version, n_t, n_kv = struct.unpack_from("<4sIQQ", b, 0)
    assert magic == b"GGUF"
    p = 24
    align = 32

    def rstr(p):
        (ln,) = struct.unpack_from("<Q", b, p)
        return b[p + 8:p + 8 + ln].decode(), p + 8 + ln

    def skip(t, p):
        if t == 8:
            return rstr(p)[1]
        if t == 9:
            et, cnt = struct.unpack_from("<IQ", b, p)
            p += 12
            if et == 8:
                for _ in range(cnt):
                    p = rstr(p)[1]
                return p
            return p + SIZES[et] * cnt
        return p + SIZES[t]

    kvs = []
    for _ in range(n_kv):
        start = p
        key, p = rstr(p)
        (t,) = struct.unpack_from("<I", b, p)
        p += 4
        vstart = p
        p = skip(t, p)
        if key == "general.alignment":
            (align,) = struct.unpack_from("<I", b, vstart)
        if not key.startswith("split."):
            kvs.append(b[start:p])
    tensors = []
    for _ in range(n_t):
        name, p = rstr(p)
        (nd,) = struct.unpack_from("<I", b, p)
        p += 4
        ne = struct.unpack_from("<%dQ" % nd, b, p)
        p += 8 * nd
        ty, off = struct.unpack_from("<IQ", b, p)
        p += 12
        tensors.append([name, ne, ty, off])
    per = (len(tensors) + n - 1) // n

    def s(x):
        x = x.encode()
        return struct.pack("<Q", len(x)) + x

    def kv_u16(k, v):
        return s(k) + struct.pack("<IH", 2, v)

    def kv_i32(k, v):
        return s(k) + struct.pack("<Ii", 5, v)

    for k in range(n):
        part = tensors[k * per:(k + 1) * per]
        keys = (kvs if k == 0 else []) + [kv_u16("split.no", k), kv_u16("split.count", n),
                                          kv_i32("split.tensors.count", len(tensors))]
        out = struct.pack("<4sIQQ", b"GGUF", version, len(part), len(keys)) + b"".join(keys)
        base = part[0][3] if part else 0
        for name, ne, ty, off in part:
            out += s(name) + struct.pack("<I", len(ne)) + struct.pack("<%dQ" % len(ne), *ne)
            out += struct.pack("<IQ", ty, off - base)
        out += b"\0" * ((-len(out)) % align)
        open("%s-%05d-of-%05d.gguf" % (prefix, k + 1, n), "wb").write(out)


main()
