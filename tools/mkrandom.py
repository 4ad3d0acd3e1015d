#!/usr/bin/env python3
"""usage: tools/mkrandom.py GGFIT LAYOUT OUT

Writes a real-size model with random weights from a header-only layout
(data/models/*.gguf): LAYOUT's header as it is, then random tensor data.
Each random byte b is written as (b & 0x83) | 0x2C, which makes every f16
(an F16 weight, a quantized block's scale) and every f32 a normal number:
no NaN, Inf or denormal to slow the arithmetic being timed. Every byte is
written (the file is not sparse): reads of a sparse file's holes all hit
one zero page and would time nothing. GGFIT is build/ggfit, whose
`inspect --json` gives the header's size and the data's.
"""
import json
import os
import subprocess
import sys

# (b & 0x83) | 0x2C keeps bits 7, 1 and 0 and sets 5, 3 and 2: an f16's
# exponent (its high byte's bits 2-6) is always 01011 (2^-4), an f32's
# (the high byte's bits 0-6, then the next byte's bit 7) 88 to 95
# (2^-39 to 2^-32): normal numbers, signs and low bits random.
TABLE = bytes(((b & 0x83) | 0x2C) for b in range(256))
CHUNK = 64 << 20


def data_extent(ggfit, layout):
    """The header's size and the bytes of tensor data to write after it."""
    d = json.loads(subprocess.run([ggfit, 'inspect', '-m', layout, '--json'],
                                  capture_output=True, text=True, check=True).stdout)
    # tensor_bytes may leave out the padding between tensors: one alignment
    # more per tensor keeps every tensor's end inside the file.
    return d['shards'][0]['data_offset'], d['tensor_bytes'] + d['n_tensors'] * d['alignment']


def make_random(ggfit, layout, out):
    """Writes OUT (through OUT.tmp, so an interrupted run leaves no short file)."""
    off, n = data_extent(ggfit, layout)
    with open(layout, 'rb') as f:
        head = f.read(off)
    tmp = out + '.tmp'
    with open(tmp, 'wb') as f:
        f.write(head)
        while n > 0:
            k = min(CHUNK, n)
            f.write(os.urandom(k).translate(TABLE))
            n -= k
    os.replace(tmp, out)
    return os.path.getsize(out)


def main():
    if len(sys.argv) != 4:
        print(__doc__)
        return 2
    print(sys.argv[3], make_random(*sys.argv[1:4]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
