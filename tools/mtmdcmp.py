#!/usr/bin/env python3
"""usage: tools/mtmdcmp.py --llama DIR [--llama-src SRC] [--llama-version V] [--ggfit BIN]
                          [--devices N] [--flags "..."]... [--record FILE] MMPROJ...

Compares ggfit's measure of a multimodal projector (mtmd/clip.c) with
llama.cpp's own, byte for byte, per device: llama-server measures its
--mmproj before its fit with mtmd_get_memory_usage (tools/mtmd/mtmd.cpp:
each encoder's weights + its warmup graph's compute buffer, per device).
The shim tools/mtmdcmp_shim.cpp, preloaded into llama-server, prints what
that call returns (each device's index in ggml's device list, its name,
its bytes) and exits before the model loads.

DIR is a llama.cpp build directory holding bin/llama-server and
bin/ggml-rpc-server; SRC its source (default /work/llama-src), whose
tools/mtmd/mtmd.h builds the shim. Each projector runs from a sparse copy
extended to 1 TiB (a header-only file is enough), with the text model
data/models/qwen3-0.6b-f16.gguf (never loaded). For each projector, flag
set and 0 to N RPC devices (rpc-servers on the CPU backend, started here):
    LD_PRELOAD=shim.so llama-server -m TEXT -mm MMPROJ [--rpc EP,...] FLAGS
    build/ggfit -m TEXT --for server -mm MMPROJ --gpu rpc:81920MiB,...|none FLAGS --json
(with --llama-version V when given: the rules of the llama.cpp in DIR,
b10309 for /work/llama-build; without it ggfit answers as the newest)
and prints llama.cpp's bytes per device beside ggfit's (its JSON "mmproj":
devices, then "cpu"). The exit status is 1 when any differ.

--record FILE appends llama.cpp's rows of every case, one JSON object a line
({"mmproj", "devices", "args", "rows": [[name, bytes], ...]}):
tests/test_mtmd.c holds ggfit to them (data/oracle/b<build>/mtmd.jsonl, each
version's with its rules), the projector files in data/tiny/ or data/real/.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llamacmp import free_port, start_servers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEXT = os.path.join(ROOT, 'data/models/qwen3-0.6b-f16.gguf')
DEFAULT_FLAGS = ['', '-fa off', '-fa on', '--no-mmproj-offload', '--no-mmproj-offload -fa off',
                 '--image-max-tokens 1024', '--no-warmup']


def build_shim(src, tmp):
    out = os.path.join(tmp, 'mtmdcmp_shim.so')
    subprocess.run(['g++', '-shared', '-fPIC', '-O1', '-std=c++17',
                    '-I', os.path.join(src, 'tools/mtmd'), '-I', os.path.join(src, 'include'),
                    '-I', os.path.join(src, 'ggml/include'),
                    os.path.join(ROOT, 'tools/mtmdcmp_shim.cpp'), '-o', out, '-ldl'], check=True)
    return out


def llama_rows(bindir, shim, text, mmproj, eps, flags):
    """llama.cpp's bytes per device: [(name, bytes)] in ggml's device order."""
    cmd = [os.path.join(bindir, 'llama-server'), '-m', text, '-mm', mmproj]
    if eps:
        cmd += ['--rpc', ','.join(eps)]
    cmd += flags.split() + ['--host', '127.0.0.1', '--port', str(free_port())]
    out = os.path.join(os.path.dirname(shim), 'mtmd.txt')
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, LD_PRELOAD=shim, GGFIT_SHIM_OUT=out)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return None, 'llama-server did not measure within 300 s'
    lines = open(out).read().splitlines() if os.path.exists(out) else []
    rows = []
    for line in lines:
        p = line.split()
        if p[0] == 'mtmd-dev':
            rows.append((int(p[1]), p[2], int(p[3])))
        elif p[0] == 'mtmd-failed':
            return None, 'mtmd_get_memory_usage failed'
    if not rows:
        return None, ' '.join(r.stderr.strip().splitlines()[-2:])
    return [(name, b) for _, name, b in sorted(rows)], None


def ggfit_rows(ggfit, text, mmproj, n_dev, flags, version=None):
    gpu = ','.join(['rpc:81920MiB'] * n_dev) if n_dev else 'none'
    cmd = [ggfit, '-m', text, '--for', 'server', '-mm', mmproj, '--gpu', gpu] + \
        flags.split() + ['-fitp', 'on', '--json']
    if version:
        cmd += ['--llama-version', version]
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)['mmproj']
    except (ValueError, KeyError):
        return None, ' '.join(r.stderr.strip().splitlines()[-2:]), False
    rows = [(d['name'], d['bytes']) for d in j['devices'] if d['bytes']]
    if j['cpu']:
        rows.append(('CPU', j['cpu']))
    est = any(e['compute_estimated'] for e in j['encoders'])
    return rows, None, est


def main():
    args = sys.argv[1:]
    bindir, src, n_max, flag_sets, files, record = None, '/work/llama-src', 2, [], [], None
    version = None
    ggfit = os.path.join(ROOT, 'build/ggfit')
    while args:
        a = args.pop(0)
        if a == '--llama':
            bindir = os.path.join(args.pop(0), 'bin')
        elif a == '--llama-src':
            src = args.pop(0)
        elif a == '--llama-version':
            version = args.pop(0)
        elif a == '--ggfit':
            ggfit = args.pop(0)
        elif a == '--devices':
            n_max = int(args.pop(0))
        elif a == '--flags':
            flag_sets.append(args.pop(0))
        elif a == '--record':
            record = open(args.pop(0), 'a')
        else:
            files.append(a)
    if not bindir or not files:
        print(__doc__)
        return 2
    flag_sets = flag_sets or DEFAULT_FLAGS
    tmp = tempfile.mkdtemp(prefix='mtmdcmp-')
    shim = build_shim(src, tmp)
    procs, eps = start_servers(bindir, n_max)
    text = os.path.join(tmp, 'text.gguf')
    shutil.copyfile(TEXT, text)
    os.truncate(text, 1 << 40)
    n_same = n_diff = 0
    try:
        for f in files:
            sparse = os.path.join(tmp, os.path.basename(f))
            shutil.copyfile(f, sparse)
            os.truncate(sparse, 1 << 40)
            for n_dev in range(n_max + 1):
                for flags in flag_sets:
                    label = '%s, %d device%s, %s' % (os.path.basename(f), n_dev,
                                                     '' if n_dev == 1 else 's', flags or '-')
                    want, werr = llama_rows(bindir, shim, text, sparse, eps[:n_dev], flags)
                    got, gerr, est = ggfit_rows(ggfit, TEXT, f, n_dev, flags, version)
                    if record and want is not None:
                        record.write(json.dumps({'mmproj': os.path.basename(f), 'devices': n_dev,
                                                 'args': flags, 'rows': [list(r) for r in want]})
                                     + '\n')
                    if want is None and got is None:   # both refuse the projector
                        print('%s: both refuse: llama.cpp %s; ggfit %s' % (label, werr, gerr))
                        n_same += 1
                        continue
                    if want is None or got is None:
                        print('%s: llama.cpp %s, ggfit %s' % (label, werr or want, gerr or got))
                        n_diff += 1
                        continue
                    # a CPU build lists the CPU first: its rows by name
                    same = sorted(want) == sorted(got)
                    print('%s: llama.cpp %s; ggfit %s%s%s' % (
                        label, ' '.join('%s=%d' % r for r in want),
                        ' '.join('%s=%d' % r for r in got), ' (estimated)' if est else '',
                        '' if same else '  DIFFER'))
                    n_same += same
                    n_diff += not same
            os.remove(sparse)
    finally:
        for p in procs:
            p.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d same, %d differ' % (n_same, n_diff))
    return 1 if n_diff else 0


if __name__ == '__main__':
    sys.exit(main())
