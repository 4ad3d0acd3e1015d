#!/usr/bin/env python3
"""usage: tools/llamaload.py [--llama DIR] [--src DIR] [--ggfit-build DIR] [--keep] [-v]

The real check of include/ggfit_llama.h: llama.cpp loads small models
through its C API with ggfit's plans applied by the adapter
(examples/llama_load.c), and its own breakdown after loading
(llama_get_memory_breakdown) must equal ggfit's projection byte for byte,
per device and buffer type, for the weights and the KV cache, and for the
compute buffers where ggfit computes them from a graph (llama_load
--check).

DIR is a llama.cpp build (bin/libllama.so, bin/ggml-rpc-server; cmake
-DGGML_RPC=ON) and SRC its source tree (include/llama.h, src/llama-ext.h):
--llama and --src, else $LLAMA_BUILD and $LLAMA_SRC, else this project's
b10587 build where it is (as tools/routercmp.py). Without one it prints
"skipped: no llama.cpp build at ..." and exits 0: CI has none.

What it does:
1. make llama-example against that llama.cpp (build/llama_load), and
   include/ggfit_llama.h compiled as C++ too.
2. Sparse copies of two header-only layouts, each extended to the end of
   its tensor data so that llama.cpp accepts it (the weights read as
   zeros; no disk used): data/models/qwen3-0.6b-f16.gguf and the tiny MoE
   data/tiny/olmoe-4.gguf (for -ncmoe).
3. Two ggml-rpc-servers on spare local ports: the devices (CPU backend,
   reporting this machine's memory).
4. The cases below, each llama_load --check; the exit status is 1 when any
   differs. Every process started here is ended on every way out.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BUILD = '/work/llama-b10587-build'
DEFAULT_SRC = '/work/llama-src-b10587'

# (name, model, uses the rpc-servers, flags)
CASES = [
    ('all on the CPU (mmap)', 'qwen3', False, '-c 4096'),
    ('all on the CPU, --no-mmap, q8_0 cache', 'qwen3', False, '-c 4096 --no-mmap -ctk q8_0 -ctv q8_0'),
    ('two rpc-servers, fitted', 'qwen3', True, '-c 4096'),
    ('two rpc-servers, -ts 1,3 -np 2 -kvu -fa on', 'qwen3', True,
     '-c 8192 -ngl 99 -ts 1,3 -np 2 -kvu -fa on -fit off'),
    ('two rpc-servers, -ngl 20', 'qwen3', True, '-c 4096 -ngl 20 -fit off'),
    ('-ot ffn of blocks 0-9 to the CPU', 'qwen3', True,
     '-c 4096 -ngl 99 --no-mmap -ot blk\\.[0-9]\\.ffn_.*=CPU'),
    ('-ot a block to the second rpc-server', 'qwen3', True,
     '-c 4096 -ngl 99 --no-mmap -ot blk\\.3\\.=RPC1'),
    ('MoE, -ncmoe 2', 'olmoe', True, '-c 4096 -ngl 99 --no-mmap -ncmoe 2'),
    ('MoE, -cmoe', 'olmoe', True, '-c 4096 -ngl 99 --no-mmap -cmoe'),
    # ggfit's whole plan for llama-server (ggfit_request_plan, applied by
    # ggfit_llama_apply_plan): -np auto is 4 slots and -kvu, one output per
    # slot reserved.
    ('llama-server plan, --request, on the CPU', 'qwen3', False, '--request -c 8192'),
    # On the rpc-servers the compute buffer llama.cpp allocates on the last
    # device is 4 MiB over what its own fit measures (and ggfit projects):
    # the context reserves the pp graph, then the tg graph, for real, and
    # the buffers keep the larger (src/llama-context.cpp, llama_context's
    # constructor), where the fit's measurement (no_alloc) records the pp
    # graph's sizes alone. Weights and KV are held byte for byte, and
    # llama.cpp's own measurement (--no-alloc) in everything.
    ('llama-server plan, --request (compute: see above)', 'qwen3', True,
     '--request -c 8192 --check-weights-kv'),
    ('llama-server plan, --request, measured as the fit does', 'qwen3', True,
     '--request -c 8192 --no-alloc'),
    ('llama-server plan, --request -np 1, measured as the fit does', 'qwen3', True,
     '--request -c 8192 -np 1 --no-alloc'),
    # a plan for devices described with --gpu (RPC0, RPC1), which
    # ggfit_llama.h matches to the registry's RPC0[host:port] devices: the
    # first by name, the second by backend and memory
    ('a plan for --gpu rpc:8GiB x 2, matched to the rpc-servers', 'qwen3', False,
     '--request --for fit-params -c 8192 --gpu rpc:8GiB,rpc:8GiB --register-rpc {EPS}'),
]
LAYOUTS = {'qwen3': 'data/models/qwen3-0.6b-f16.gguf', 'olmoe': 'data/tiny/olmoe-4.gguf'}

PROCS = []   # rpc-servers started here
VERBOSE = False


def nice(cmd):
    return ['nice', '-n', '10'] + cmd


def cleanup():
    for p in PROCS:
        if p.poll() is None:
            p.terminate()
    for p in PROCS:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    PROCS.clear()


def on_signal(sig, frame):
    cleanup()
    sys.exit(128 + sig)


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_rpc(bindir, n):
    """n ggml-rpc-servers, each on a spare port, once they listen."""
    eps = []
    for _ in range(n):
        port = free_port()
        PROCS.append(subprocess.Popen(nice([os.path.join(bindir, 'ggml-rpc-server'), '-H', '127.0.0.1',
                                            '-p', str(port)]),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        eps.append('127.0.0.1:%d' % port)
    for ep in eps:
        host, port = ep.split(':')
        for _ in range(200):
            try:
                socket.create_connection((host, int(port)), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise RuntimeError('ggml-rpc-server on %s did not start listening' % ep)
    return eps


def data_end(ggfit, path):
    """The bytes a layout needs to pass llama.cpp's bounds check: its
    header (aligned) and the end of its last tensor, from ggfit inspect."""
    r = subprocess.run(nice([ggfit, 'inspect', '-m', path, '--json', '--tensors']),
                       capture_output=True, text=True, check=True)
    j = json.loads(r.stdout)
    align = j.get('alignment') or 32
    head = (os.path.getsize(path) + align - 1) // align * align
    return head + max((t['offset'] + t['bytes'] for t in j['tensors']), default=0) + (1 << 20)


def sparse_copy(ggfit, src, tmp):
    dst = os.path.join(tmp, os.path.basename(src))
    shutil.copyfile(src, dst)
    os.truncate(dst, data_end(ggfit, src))
    return dst


def find_llama(args):
    build = args.get('--llama') or os.environ.get('LLAMA_BUILD') or DEFAULT_BUILD
    src = args.get('--src') or os.environ.get('LLAMA_SRC') or DEFAULT_SRC
    for need in (os.path.join(build, 'bin', 'libllama.so'), os.path.join(build, 'bin', 'ggml-rpc-server'),
                 os.path.join(src, 'include', 'llama.h'), os.path.join(src, 'src', 'llama-ext.h')):
        if not os.path.exists(need):
            return None, None, need
    return build, src, None


def parse_args(argv):
    args, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a in ('--llama', '--src', '--ggfit-build') and i + 1 < len(argv):
            args[a] = argv[i + 1]
            i += 2
        elif a in ('--keep', '-v'):
            args[a] = True
            i += 1
        else:
            sys.exit(__doc__.split('\n')[0] + '\nunknown argument %r' % a)
    return args


def run_case(exe, model, eps, flags):
    cmd = [exe, '-m', model, '--check'] + flags.split()
    if eps:
        cmd += ['--rpc', ','.join(eps)]
    r = subprocess.run(nice(cmd), capture_output=True, text=True, timeout=300)
    return r.returncode, r.stdout, r.stderr


def main():
    global VERBOSE
    args = parse_args(sys.argv[1:])
    VERBOSE = '-v' in args
    build, src, missing = find_llama(args)
    if not build:
        print('skipped: no llama.cpp build at %s (give --llama DIR --src DIR, or LLAMA_BUILD and '
              'LLAMA_SRC)' % missing)
        return 0
    b = args.get('--ggfit-build', 'build')
    r = subprocess.run(nice(['make', '-s', 'B=' + b, 'llama-example', 'LLAMA_SRC=' + src, 'LLAMA_BUILD=' + build]),
                       cwd=ROOT, capture_output=True, text=True)
    exe = os.path.join(ROOT, b, 'llama_load')
    if r.returncode or not os.path.exists(exe):
        print(r.stdout + r.stderr)
        print('llamaload: make llama-example failed')
        return 1
    # the header compiles as C++ too (bindings, C++ programs): its casts,
    # its jumps
    r = subprocess.run(nice(['c++', '-std=c++17', '-Wall', '-Wextra', '-Werror', '-fsyntax-only', '-x', 'c++',
                             '-I' + os.path.join(ROOT, 'include'), '-I' + os.path.join(src, 'include'),
                             '-I' + os.path.join(src, 'ggml', 'include'), '-']),
                       input='#include "ggfit.h"\n#include "ggfit_app.h"\n#include "ggfit_llama.h"\n'
                             'int main() { ggfit_llama_params_free(nullptr); return 0; }\n',
                       capture_output=True, text=True)
    if r.returncode:
        print(r.stderr)
        print('llamaload: include/ggfit_llama.h does not compile as C++')
        return 1
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    tmp = tempfile.mkdtemp(prefix='ggfit-llamaload-')
    failed = 0
    try:
        ggfit = os.path.join(ROOT, b, 'ggfit')
        models = {k: sparse_copy(ggfit, os.path.join(ROOT, v), tmp) for k, v in LAYOUTS.items()}
        eps = start_rpc(os.path.join(build, 'bin'), 2)
        print('llama.cpp at %s; rpc-servers %s' % (build, ', '.join(eps)))
        for name, model, rpc, flags in CASES:
            # the device names ggfit plans with: RPC0[host:port], as ggml names them
            flags = flags.replace('=RPC1', '=RPC0[%s]' % eps[1]).replace('{EPS}', ','.join(eps))
            t0 = time.time()
            rc, out, err = run_case(exe, models[model], eps if rpc else [], flags)
            ok = rc == 0
            failed += not ok
            print('%s %s: %s (%.1f s)' % ('ok  ' if ok else 'FAIL', name, flags, time.time() - t0))
            if not ok or VERBOSE:
                print(out + '\n'.join(err.strip().splitlines()[-5:]))
    finally:
        cleanup()
        if not args.get('--keep'):
            shutil.rmtree(tmp, ignore_errors=True)
    print('llamaload: %d passed, %d failed' % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
