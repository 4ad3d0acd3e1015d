#!/usr/bin/env python3
"""usage: tools/servercmp.py --llama DIR [--llama-src SRC] [--ggfit BIN] [--devices N]
                            [--flags "..."]... [--record FILE] [--verbose] MODEL...

Compares ggfit's projection with llama-server's, byte for byte, for the
flags only llama-server takes: --embedding (--embeddings), --rerank
(--reranking) and --pooling {none,mean,cls,last,rank}. llama-fit-params
refuses them (common/arg.cpp lists them for the server alone), so
tools/llamacmp.py cannot check them.

DIR is a llama.cpp build directory holding bin/llama-server and
bin/ggml-rpc-server; SRC the llama.cpp source it was built from (default
/work/llama-src), whose headers build tools/servercmp_shim.cpp. llama-server
fits its flags before it loads the model, and the fit first measures the
flags as given (common_get_device_memory_data_impl ->
llama_get_memory_breakdown, on a context made with no_alloc), but logs that
only in MiB. The shim, preloaded into llama-server, prints that measurement
in bytes (devices of the model, then Host, as common_fit_print does) and
exits, so the model is never loaded and no port is held for long. Each model
runs from a sparse copy extended to 1 TiB (llama.cpp refuses a header-only
file).

For each model, flag set and 0 to N RPC devices (rpc-servers on the CPU
backend, started here), it runs
    LD_PRELOAD=shim.so llama-server -m MODEL [--rpc EP,...] FLAGS --port P
    build/ggfit -m MODEL --gpu rpc:81920MiB,...|none FLAGS' -fitp on --json
where FLAGS' is FLAGS plus "-np 4 -kvu" when FLAGS has no -np: llama-server's
default -np is auto, which it turns into 4 sequences and a unified cache
(tools/server/server.cpp), while ggfit's default is llama-fit-params' (1).
It prints every row where model, context or compute bytes differ and ends
with "N same, M differ"; the exit status is 1 when any differ. A case where
llama-server fails (an assert in its graph, a draft model that needs a
target) while ggfit says its compute buffers are estimated (it has no graph
for it either) is counted apart, not compared (--verbose lists them).

Without embeddings llama-server also reserves fewer outputs than
llama-fit-params (server-context.cpp server_n_outputs_max: one per
sequence, unless --embedding or a --pooling other than none is given), which
ggfit does not model: so every default flag set here has --embedding,
--rerank or a pooling other than none.

--record FILE appends llama-server's rows of every case, one JSON object a
line ({"model", "devices", "args", "rows", "tool": "llama-server"}), args
being FLAGS' (what ggfit replays): tests/test_oracle.c holds ggfit to them.
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
DEFAULT_FLAGS = [
    '-c 4096 --embedding', '-c 4096 --embedding --pooling none',
    '-c 4096 --embedding --pooling mean', '-c 4096 --embedding --pooling cls',
    '-c 4096 --embedding --pooling last', '-c 4096 --rerank', '-c 4096 --embedding -np 1',
    '-c 4096 --embedding -fa off', '-c 4096 --embedding --pooling mean -ub 64 -np 2',
    '-c 4096 --pooling mean',
]


def build_shim(src, tmp):
    out = os.path.join(tmp, 'servercmp_shim.so')
    cmd = ['g++', '-shared', '-fPIC', '-O1', '-std=c++17',
           '-I', os.path.join(src, 'include'), '-I', os.path.join(src, 'ggml/include'),
           '-I', os.path.join(src, 'src'),
           os.path.join(ROOT, 'tools/servercmp_shim.cpp'), '-o', out, '-ldl']
    subprocess.run(cmd, check=True)
    return out


def server_rows(bindir, shim, model, eps, flags):
    cmd = [os.path.join(bindir, 'llama-server'), '-m', model]
    if eps:
        cmd += ['--rpc', ','.join(eps)]
    cmd += flags.split() + ['--host', '127.0.0.1', '--port', str(free_port())]
    out = os.path.join(os.path.dirname(shim), 'rows.txt')
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, LD_PRELOAD=shim, GGFIT_SHIM_OUT=out)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return None, ['llama-server did not measure within 300 s']
    rows = []
    lines = open(out).read().splitlines() if os.path.exists(out) else []
    for line in lines:
        parts = line.split()
        if len(parts) == 5 and parts[0] == 'ggfit-shim' and all(p.isdigit() for p in parts[2:]):
            rows.append((parts[1], [int(p) for p in parts[2:]]))
    if not rows:
        return None, r.stderr.strip().splitlines()[-3:]
    return rows, None


def ggfit_rows(ggfit, model, n_dev, flags):
    """ggfit's rows, and whether its compute buffers are estimated (no
    graph for the configuration)."""
    gpu = ','.join(['rpc:81920MiB'] * n_dev) if n_dev else 'none'
    cmd = [ggfit, '-m', model, '--gpu', gpu] + flags.split() + ['-fitp', 'on', '--json']
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return None, r.stderr.strip().splitlines()[-3:], False
    rows = [(d['name'], [d['model'], d['context'], d['compute']]) for d in j['devices']]
    h = j['host']
    rows.append(('Host', [h['model'], h['context'], h['compute']]))
    return rows, None, j['compute_estimated']


def ggfit_flags(flags):
    words = flags.split()
    if '-np' not in words and '--parallel' not in words:
        words += ['-np', '4', '-kvu']
    return ' '.join(words)


def main():
    args = sys.argv[1:]
    bindir, src, n_max, flag_sets, models = None, '/work/llama-src', 1, [], []
    ggfit = os.path.join(ROOT, 'build/ggfit')
    record, verbose = None, False
    while args:
        a = args.pop(0)
        if a == '--llama':
            bindir = os.path.join(args.pop(0), 'bin')
        elif a == '--llama-src':
            src = args.pop(0)
        elif a == '--record':
            record = open(args.pop(0), 'a')
        elif a == '--ggfit':
            ggfit = args.pop(0)
        elif a == '--devices':
            n_max = int(args.pop(0))
        elif a == '--verbose':
            verbose = True
        elif a == '--flags':
            flag_sets.append(args.pop(0))
        else:
            models.append(a)
    if not bindir or not models:
        print(__doc__)
        return 2
    flag_sets = flag_sets or DEFAULT_FLAGS
    tmp = tempfile.mkdtemp(prefix='servercmp-')
    shim = build_shim(src, tmp)
    procs, eps = start_servers(bindir, n_max)
    n_same = n_diff = n_fail = 0
    try:
        for model in models:
            sparse = os.path.join(tmp, os.path.basename(model))
            shutil.copyfile(model, sparse)
            os.truncate(sparse, 1 << 40)
            for n_dev in range(n_max + 1):
                for flags in flag_sets:
                    gflags = ggfit_flags(flags)
                    label = '%s, %d device%s, %s' % (os.path.basename(model), n_dev,
                                                     '' if n_dev == 1 else 's', flags)
                    want, werr = server_rows(bindir, shim, sparse, eps[:n_dev], flags)
                    got, gerr, estimated = ggfit_rows(ggfit, model, n_dev, gflags)
                    if record and want is not None:
                        record.write(json.dumps({'model': os.path.basename(model), 'devices': n_dev,
                                                 'args': gflags,
                                                 'rows': [[n] + v for n, v in want],
                                                 'tool': 'llama-server'}) + '\n')
                    if want is None and estimated:
                        n_fail += 1   # llama-server fails, ggfit has no graph
                        if verbose:
                            print('%s: llama-server %s, ggfit estimated' % (label, werr))
                        continue
                    if want is None or got is None:
                        if want is None and got is None:
                            continue   # both refuse
                        print('%s: llama-server %s, ggfit %s' % (label, werr or 'ok', gerr or 'ok'))
                        n_diff += 1
                        continue
                    bad = [(w[0], w[1], g[1]) for w, g in zip(want, got) if w[1] != g[1]]
                    if len(want) != len(got):
                        bad.append(('rows', len(want), len(got)))
                    for name, w, g in bad:
                        print('%s: %s: llama-server %s, ggfit %s' % (label, name, w, g))
                    n_diff += bool(bad)
                    n_same += not bad
            os.remove(sparse)
    finally:
        for p in procs:
            p.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    if n_fail:
        print('%d cases where llama-server failed (crashed or refused) and ggfit '
              'estimated the compute buffers: not compared' % n_fail)
    print('%d same, %d differ' % (n_same, n_diff))
    return 1 if n_diff else 0


if __name__ == '__main__':
    sys.exit(main())
