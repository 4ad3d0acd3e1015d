#!/usr/bin/env python3
"""mkvocab.py IN.gguf OUT.gguf - IN's header with a tokenizer of gpt-oss's
real size: 201,088 tokens, their types, 446,189 merges and a 2 KB chat
template (12.9 MB of header, as ../shared/reference/vocab/ describes the
timing case). The strings are synthetic; their count and size are what a
header reader pays for. IN's own tokenizer arrays and template are dropped;
its other keys and its tensor infos are kept as they are, so the model and
every projection are IN's. OUT is header-only, like the layouts in
data/models (tests and `make bench` read it, nothing loads its weights).
"""
import struct
import sys

N_TOKENS, N_MERGES = 201088, 446189
REPLACED = (b'tokenizer.ggml.tokens', b'tokenizer.ggml.token_type',
            b'tokenizer.ggml.merges', b'tokenizer.chat_template')
SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


def skip(b, pos, t):
    """Offset just past a value of type t at pos."""
    if t == 8:
        return pos + 8 + struct.unpack_from('<Q', b, pos)[0]
    if t != 9:
        return pos + SIZES[t]
    et, n = struct.unpack_from('<IQ', b, pos)
    pos += 12
    if et in SIZES:
        return pos + n * SIZES[et]
    for _ in range(n):
        pos = skip(b, pos, et)
    return pos


def gstr(s):
    return struct.pack('<Q', len(s)) + s


def string_array(key, items):
    return b''.join([gstr(key), struct.pack('<IIQ', 9, 8, len(items))] +
                    [gstr(s) for s in items])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    b = open(sys.argv[1], 'rb').read()
    magic, version, n_tensors, n_kv = struct.unpack_from('<4sIQQ', b, 0)
    if magic != b'GGUF' or version != 3:
        sys.exit('%s: not a GGUF v3 file' % sys.argv[1])
    pos, kvs, alignment = 24, [], 32
    for _ in range(n_kv):
        start = pos
        klen = struct.unpack_from('<Q', b, pos)[0]
        key = b[pos + 8:pos + 8 + klen]
        t = struct.unpack_from('<I', b, pos + 8 + klen)[0]
        pos = skip(b, pos + 12 + klen, t)
        if key == b'general.alignment':
            alignment = struct.unpack_from('<I', b, pos - 4)[0]
        if key not in REPLACED:
            kvs.append(b[start:pos])
    kv_end = pos
    for _ in range(n_tensors):
        nlen = struct.unpack_from('<Q', b, pos)[0]
        n_dims = struct.unpack_from('<I', b, pos + 8 + nlen)[0]
        pos += 8 + nlen + 4 + 8 * n_dims + 4 + 8
    infos = b[kv_end:pos]
    kvs.append(string_array(b'tokenizer.ggml.tokens',
                            [b'tok%d' % i for i in range(N_TOKENS)]))
    kvs.append(gstr(b'tokenizer.ggml.token_type') + struct.pack('<IIQ', 9, 5, N_TOKENS) +
               struct.pack('<i', 1) * N_TOKENS)
    kvs.append(string_array(b'tokenizer.ggml.merges',
                            [b't%d k%d' % (i % 677, i) for i in range(N_MERGES)]))
    template = (b'{% for m in messages %}{{ m.content }}{% endfor %}' * 40)[:2000]
    kvs.append(gstr(b'tokenizer.chat_template') + struct.pack('<I', 8) + gstr(template))
    out = struct.pack('<4sIQQ', b'GGUF', 3, n_tensors, len(kvs)) + b''.join(kvs) + infos
    out += b'\0' * (-len(out) % alignment)
    open(sys.argv[2], 'wb').write(out)


if __name__ == '__main__':
    main()
