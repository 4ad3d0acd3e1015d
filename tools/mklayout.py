#!/usr/bin/env python3
"""usage: tools/mklayout.py DESC.json OUT.gguf

Writes a header-only GGUF (keys and tensor infos, no tensor data) from a
JSON description, for checking ggfit against llama.cpp at a real model's
dimensions (data/real/). llama.cpp and ggfit read such a file from a
sparse copy (tools/llamacmp.py extends it), so only the header is kept.

The description (see data/real/*.json):

  {"arch": "qwen35",                      general.architecture
   "name": "Qwen3.5-27B",                 general.name
   "vars": {"E": 5120, "L": 64, ...},     names usable in expressions (a
                                          string "=expr" is evaluated over
                                          the vars listed before it)
   "keys": {"block_count": "=L",          "<arch>." is prefixed unless the
            "general.file_type": 15,      key has a known top-level prefix
            ...},                         (general., tokenizer.)
   "tensors": [
     {"name": "token_embd.weight", "shape": ["E", "V"]},
     {"name": "blk.{i}.attn_q.weight", "shape": ["E", "NH*HD"],
      "layers": "i % 4 == 3"},
     ...]}

Values: an int is a u32, a float an f32, a bool a bool, a string a string
unless it starts with "=", then it is a Python expression over vars (its
int/float/bool/list result is written as above); a list of ints is an i32
array, of floats an f32 array, of bools a bool array, of strings a string
array. {"type": "u64"|"i32"|"u32"|"f32"|..., "value": V} forces a type
(for arrays: {"type": "u32", "value": [...]} makes a u32 array).

Tensors: "shape" lists ne0, ne1, ... as ints or expressions over vars
(and i, the layer). "layers" repeats a "{i}" name over the blocks: "all"
(i in range(L), or range(LAYERS) if vars has LAYERS), or an expression
in i selecting blocks, or a list of block indices. "type" sets the ggml
type (F32, F16, Q4_K, ...); without it the type is what llama.cpp's
llama-quantize would give for Q4_K_M (src/llama-quant.cpp): non-weights,
norms, routers, conv1d and 1-D tensors F32; output (or a tied token_embd
when there is no output) Q6_K; attn_v/attn_qkv/attn_kv_b and ffn_down Q6_K
on use_more_bits layers, attn_qkv Q5_K otherwise; 8-expert models
attn_k/attn_v Q8_0 and attn_output Q5_K; everything else Q4_K; a row that
is not a multiple of 256 falls back (Q4_K->Q5_0, Q5_K->Q5_1, Q6_K->Q8_0,
F16 when not a multiple of 32 either). "default_type" at the top level
replaces Q4_K; an unquantized one (F16, BF16, F32: an embedding model's
usual file) gives every weight that llama-quantize would quantize that type.
The var N_EXPERT, when set, is the expert count those rules read (as
llama-quant does: ffn_down's layer from its name when there are experts).

The output depends only on the description, so data/real/<model>.gguf is
rewritten byte for byte by: tools/mklayout.py data/real/<model>.json
data/real/<model>.gguf (data/real/SOURCES.md: where each number comes from).
"""
import json
import re
import struct
import sys

ALIGN = 32
# name: (ggml type id, block size, bytes per block)
TYPES = {
    'F32': (0, 1, 4), 'F16': (1, 1, 2), 'Q4_0': (2, 32, 18), 'Q4_1': (3, 32, 20),
    'Q5_0': (6, 32, 22), 'Q5_1': (7, 32, 24), 'Q8_0': (8, 32, 34),
    'Q2_K': (10, 256, 84), 'Q3_K': (11, 256, 110), 'Q4_K': (12, 256, 144),
    'Q5_K': (13, 256, 176), 'Q6_K': (14, 256, 210), 'IQ4_NL': (20, 32, 18),
    'IQ4_XS': (23, 256, 136), 'I32': (26, 1, 4), 'BF16': (30, 1, 2),
    'MXFP4': (39, 32, 17),
}
# GGUF value types
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)
SCALAR = {'u8': (U8, '<B'), 'i8': (I8, '<b'), 'u16': (U16, '<H'), 'i16': (I16, '<h'),
          'u32': (U32, '<I'), 'i32': (I32, '<i'), 'f32': (F32, '<f'), 'bool': (BOOL, '<?'),
          'u64': (U64, '<Q'), 'i64': (I64, '<q'), 'f64': (F64, '<d')}
TOP = ('general.', 'tokenizer.')


def ev(v, env):
    if isinstance(v, str) and v.startswith('='):
        return eval(v[1:], dict(env))
    return v


def s_bytes(s):
    b = s.encode()
    return struct.pack('<Q', len(b)) + b


def kind_of(v):
    if isinstance(v, bool):
        return 'bool'
    if isinstance(v, int):
        return 'u32'
    if isinstance(v, float):
        return 'f32'
    if isinstance(v, str):
        return 'str'
    raise ValueError('no GGUF type for %r' % (v,))


def value_bytes(v, kind=None):
    """The type id and bytes of a value."""
    if isinstance(v, list):
        ek = kind or ('i32' if v and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
                      else kind_of(v[0]) if v else 'i32')
        t = STR if ek == 'str' else SCALAR[ek][0]
        body = b''.join(s_bytes(x) if ek == 'str' else struct.pack(SCALAR[ek][1], x) for x in v)
        return ARR, struct.pack('<IQ', t, len(v)) + body
    kind = kind or kind_of(v)
    if kind == 'str':
        return STR, s_bytes(v)
    t, fmt = SCALAR[kind]
    return t, struct.pack(fmt, v)


def use_more_bits(i, n):
    return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2


def quantizable(name, shape):
    n_dims = max([k + 1 for k, d in enumerate(shape) if d > 1] or [1])   # ggml_n_dims
    return n_dims >= 2 and name.endswith('weight') and '_norm.weight' not in name and \
        'ffn_gate_inp.weight' not in name and 'ssm_conv1d' not in name and \
        'shortconv.conv.weight' not in name and name != 'pos_embd.weight' and \
        name != 'token_types.weight' and 'altup' not in name and 'laurel' not in name and \
        'per_layer_model_proj' not in name


def fallback(t, ne0):
    if TYPES[t][1] == 1 or ne0 % TYPES[t][1] == 0:
        return t
    t = {'Q4_K': 'Q5_0', 'Q5_K': 'Q5_1', 'Q6_K': 'Q8_0', 'Q2_K': 'Q4_0', 'Q3_K': 'Q4_1',
         'IQ4_XS': 'IQ4_NL'}.get(t, t)
    return t if ne0 % TYPES[t][1] == 0 else 'F16'


def q4km_types(tensors, n_expert, default):
    """Q4_K_M's choice per tensor (llama-quant.cpp), in file order."""
    cat = []
    for name, shape, _ in tensors:
        if name == 'output.weight':
            c = 'output'
        elif name == 'token_embd.weight':
            c = 'embd'
        elif any(x in name for x in ('attn_qkv.weight', 'attn_kv_b.weight', 'attn_v.weight')):
            c = 'v'
        elif 'attn_k.weight' in name:
            c = 'k'
        elif 'attn_output.weight' in name:
            c = 'o'
        elif 'ffn_up' in name or 'ffn_gate' in name:
            c = 'other'
        elif 'ffn_down' in name:
            c = 'down'
        else:
            c = 'other'
        cat.append(c)
    has_output = any(n == 'output.weight' for n, _, _ in tensors)
    n_v = cat.count('v')
    n_down = cat.count('down')
    i_v = i_down = 0
    out = []
    for (name, shape, forced), c in zip(tensors, cat):
        if forced:
            out.append(forced)
            if c == 'v':
                i_v += 1
            if c == 'down':
                i_down += 1
            continue
        if not quantizable(name, shape):
            out.append('F32')
            continue
        if TYPES[default][1] == 1:   # an unquantized file (F16, BF16, F32)
            out.append(default)
            continue
        t = default
        if c == 'output' or (c == 'embd' and not has_output):
            t = 'Q6_K' if shape[0] % 256 == 0 else 'Q8_0'
        elif c == 'v':
            if 'attn_qkv.weight' in name:
                t = 'Q5_K'
            if use_more_bits(i_v, n_v):
                t = 'Q6_K'
            if n_expert == 8:
                t = 'Q8_0'
            i_v += 1
        elif c == 'k' and n_expert == 8:
            t = 'Q8_0'
        elif c == 'o' and n_expert == 8:
            t = 'Q5_K'
        elif c == 'down':
            i = i_down
            if n_expert > 1:
                m = re.match(r'blk\.(\d+)\.', name)
                i = int(m.group(1)) if m else i_down
            if use_more_bits(i, n_down):
                t = 'Q6_K'
            i_down += 1
        out.append(fallback(t, shape[0]))
    return out


def build(desc):
    env = dict(desc.get('vars', {}))
    for k, v in list(env.items()):   # a var "=expr" is evaluated over the vars before it
        env[k] = ev(v, env)
    arch = desc['arch']
    keys = [('general.architecture', arch, None), ('general.name', desc.get('name', arch), None),
            ('general.alignment', ALIGN, 'u32')]
    for k, v in desc.get('keys', {}).items():
        kind = None
        if isinstance(v, dict):
            kind, v = v['type'], v['value']
        v = ev(v, env)
        if isinstance(v, list):
            v = [ev(x, env) for x in v]
        keys.append((k if k.startswith(TOP) else arch + '.' + k, v, kind))
    n_layer = env.get('LAYERS', env.get('L'))
    tensors = []
    for t in desc['tensors']:
        sel = t.get('layers')
        if sel is None:
            idx = [None]
        elif sel == 'all':
            idx = list(range(n_layer))
        elif isinstance(sel, list):
            idx = sel
        else:
            idx = [i for i in range(n_layer) if eval(sel, dict(env, i=i))]
        for i in idx:
            e = dict(env, i=i)
            name = t['name'].format(i=i)
            shape = [int(eval(d, dict(e))) if isinstance(d, str) else d for d in t['shape']]
            tensors.append((name, shape, t.get('type')))
    types = q4km_types(tensors, env.get('N_EXPERT', 0), desc.get('default_type', 'Q4_K'))
    return keys, [(n, s, ty) for (n, s, _), ty in zip(tensors, types)]


def write(keys, tensors, path):
    head = bytearray(b'GGUF' + struct.pack('<IQQ', 3, len(tensors), len(keys)))
    for k, v, kind in keys:
        t, b = value_bytes(v, kind)
        head += s_bytes(k) + struct.pack('<I', t) + b
    off = 0
    for name, shape, ty in tensors:
        tid, blk, size = TYPES[ty]
        if shape[0] % blk:
            raise ValueError('%s: ne0 %d is not a multiple of %s blocks' % (name, shape[0], ty))
        n = 1
        for d in shape:
            n *= d
        head += s_bytes(name) + struct.pack('<I', len(shape)) + \
            b''.join(struct.pack('<Q', d) for d in shape) + struct.pack('<IQ', tid, off)
        off += (n // blk * size + ALIGN - 1) // ALIGN * ALIGN
    head += b'\0' * (-len(head) % ALIGN)
    with open(path, 'wb') as f:
        f.write(head)
    return off


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        desc = json.load(f)
    keys, tensors = build(desc)
    size = write(keys, tensors, sys.argv[2])
    print('%s: %d keys, %d tensors, %.2f GiB of weights' % (sys.argv[2], len(keys), len(tensors),
                                                            size / 2**30))
    return 0


if __name__ == '__main__':
    sys.exit(main())
