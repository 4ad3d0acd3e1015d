#!/usr/bin/env python3
"""usage: tools/llamacmp.py --llama DIR [--ggfit BIN] [--devices N] [--flags "..."]...
                           [--record FILE] MODEL...

Compares ggfit's projection with a llama.cpp built here, byte for byte, on
any GGUF (header-only files are enough): the check for architectures that
have no recorded graphs in data/graphs.

DIR is a llama.cpp build directory holding bin/llama-fit-params and
bin/ggml-rpc-server (cmake -DGGML_RPC=ON, targets llama-fit-params and
ggml-rpc-server). llama.cpp refuses a header-only file (tensor data out of
the file's bounds), so each model is run from a sparse copy extended to
1 TiB, which takes no disk space.
llama-fit-params -fitp on prints MiB; patch common_fit_print in
common/fit.cpp to print bytes (drop the /1024/1024) before building, or
the comparison is only as fine as a MiB.

For each model and each flag set it runs, with 0 to N RPC devices (each an
rpc-server on the CPU backend, started here on a free port):
    llama-fit-params -m MODEL [--rpc EP,...] FLAGS -fitp on
    build/ggfit -m MODEL --gpu rpc:81920MiB,...|none FLAGS --for fit-params -fitp on --json
and prints every row (devices, then Host) where model, context or compute
bytes differ. The exit status is 1 when any differ.

--fit compares the fit decisions instead: with 1 to N RPC devices,
    llama-fit-params -m MODEL --rpc EP,... FLAGS
    build/ggfit -m MODEL --rpc EP,... FLAGS --for fit-params --json   (its "args")
each asking the same rpc-servers for their free memory (this machine's, as
the CPU backend reports it), and prints every case where the printed flags
differ (a boundary case can differ when the free memory moved between the
two runs: rerun it).

--cases FILE replays recorded cases (lines of data/oracle/b10309/llamacpp.jsonl:
model, devices, args) instead of the flag sets, each model looked up in
--models DIR[:DIR...] (default data/tiny:data/models:data/real): the way one version's recorded cases are
run against another llama.cpp. --llama-version V is passed to ggfit (the
rules it answers with), default: none (ggfit's default, the newest).

--record FILE appends llama.cpp's rows of every case it ran, one JSON object
a line ({"model", "devices", "args", "rows": [[name, model, context,
compute], ...]}): tests/test_oracle.c holds ggfit to them.
"""
import json
import os
import socket
import subprocess
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FLAGS = [
    '-c 4096', '-c 4096 -fa off', '-c 4096 -ngl 2', '-c 4096 -ctk q8_0 -ctv q8_0',
    '-c 8192 -np 2', '-c 4096 -ub 64', '-c 4096 -nkvo', '-c 4096 --swa-full',
]

# ggfit plans for the program named by --for; llama-fit-params' plan is what
# is compared here, whatever ggfit's default program is.
FOR_FIT_PARAMS = ['--for', 'fit-params']
VERSION = []   # ['--llama-version', V] when given


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def start_servers(bindir, n):
    procs, eps = [], []
    for _ in range(n):
        port = free_port()
        p = subprocess.Popen([os.path.join(bindir, 'ggml-rpc-server'), '-H', '127.0.0.1', '-p', str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(p)
        eps.append('127.0.0.1:%d' % port)
    for ep in eps:   # wait until each listens
        host, port = ep.split(':')
        for _ in range(100):
            try:
                socket.create_connection((host, int(port)), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
    return procs, eps


def llama_rows(bindir, model, eps, flags):
    cmd = [os.path.join(bindir, 'llama-fit-params'), '-m', model]
    if eps:
        cmd += ['--rpc', ','.join(eps)]
    cmd += flags.split() + ['-fitp', 'on']
    r = subprocess.run(cmd, capture_output=True, text=True)
    rows = []
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) == 4 and all(p.isdigit() for p in parts[1:]):
            rows.append((parts[0], [int(p) for p in parts[1:]]))
    if not rows:
        return None, r.stderr.strip().splitlines()[-3:]
    return rows, None


def llama_fit(bindir, model, eps, flags):
    cmd = [os.path.join(bindir, 'llama-fit-params'), '-m', model, '--rpc', ','.join(eps)]
    r = subprocess.run(cmd + flags.split(), capture_output=True, text=True)
    lines = [l for l in r.stdout.splitlines() if l.startswith('-')]
    return lines[-1].strip() if lines else 'refused: ' + ' '.join(r.stderr.strip().splitlines()[-1:])


def ggfit_fit(ggfit, model, eps, flags):
    """llama.cpp's decision as ggfit makes it: the JSON's status and args
    (what llama-fit-params prints), whatever ggfit's own verdict says."""
    cmd = [ggfit, '-m', model, '--rpc', ','.join(eps)] + flags.split() + FOR_FIT_PARAMS + VERSION + ['--json']
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return 'refused: ' + ' '.join(r.stderr.strip().splitlines()[-1:])
    if j.get('status') == 'failed':
        return 'refused: ' + j.get('reason', '')
    line = j.get('args', '')
    if line.startswith('--rpc '):
        line = line.split(' ', 2)[2] if line.count(' ') >= 2 else ''
    return line


def ggfit_rows(ggfit, model, n_dev, flags):
    gpu = ','.join(['rpc:81920MiB'] * n_dev) if n_dev else 'none'
    cmd = [ggfit, '-m', model, '--gpu', gpu] + flags.split() + FOR_FIT_PARAMS + VERSION + \
          ['-fitp', 'on', '--json']
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return None, r.stderr.strip().splitlines()[-3:]
    rows = [(d['name'], [d['model'], d['context'], d['compute']]) for d in j['devices']]
    h = j['host']
    rows.append(('Host', [h['model'], h['context'], h['compute']]))
    return rows, None


def main():
    args = sys.argv[1:]
    bindir, n_max, flag_sets, models = None, 1, [], []
    ggfit = os.path.join(ROOT, 'build/ggfit')
    record = None
    fit = False
    cases = None
    model_dir = ':'.join(os.path.join(ROOT, 'data', d) for d in ('tiny', 'models', 'real'))
    while args:
        a = args.pop(0)
        if a == '--llama':
            bindir = os.path.join(args.pop(0), 'bin')
        elif a == '--record':
            record = open(args.pop(0), 'a')
        elif a == '--ggfit':
            ggfit = args.pop(0)
        elif a == '--cases':
            cases = [json.loads(l) for l in open(args.pop(0)) if l.strip()]
        elif a == '--models':
            model_dir = args.pop(0)
        elif a == '--llama-version':
            VERSION[:] = ['--llama-version', args.pop(0)]
        elif a == '--fit':
            fit = True
        elif a == '--devices':
            n_max = int(args.pop(0))
        elif a == '--flags':
            flag_sets.append(args.pop(0))
        else:
            models.append(a)
    if cases is not None:
        # model -> [(devices, args)], in the file's order
        plan = {}
        for c in cases:
            plan.setdefault(c['model'], []).append((c['devices'], c['args']))
        def find(m):
            for d in model_dir.split(':'):
                if os.path.exists(os.path.join(d, m)):
                    return os.path.join(d, m)
            sys.exit('%s: not in %s' % (m, model_dir))
        models = [find(m) for m in plan]
        n_max = max([n_max] + [d for v in plan.values() for d, _ in v])
    if not bindir or not models:
        print(__doc__)
        return 2
    flag_sets = flag_sets or DEFAULT_FLAGS
    procs, eps = start_servers(bindir, n_max)
    tmp = tempfile.mkdtemp(prefix='llamacmp-')
    n_same = n_diff = 0
    try:
        for model in models:
            sparse = os.path.join(tmp, os.path.basename(model))
            shutil.copyfile(model, sparse)
            os.truncate(sparse, 1 << 40)
            if cases is not None:
                runs = plan[os.path.basename(model)]
            else:
                runs = [(n, f) for n in range(1 if fit else 0, n_max + 1) for f in flag_sets]
            for n_dev, flags in runs:
                if True:
                    if fit:
                        want = llama_fit(bindir, sparse, eps[:n_dev], flags)
                        got = ggfit_fit(ggfit, model, eps[:n_dev], flags)
                        if want.startswith('refused') and got.startswith('refused'):
                            n_same += 1
                        elif want != got:
                            print('%s, %d devices, %s:\n  llama.cpp %s\n  ggfit     %s' %
                                  (os.path.basename(model), n_dev, flags, want[:300], got[:300]))
                            n_diff += 1
                        else:
                            n_same += 1
                        continue
                    label = '%s, %d device%s, %s' % (os.path.basename(model), n_dev,
                                                     '' if n_dev == 1 else 's', flags)
                    want, werr = llama_rows(bindir, sparse, eps[:n_dev], flags)
                    got, gerr = ggfit_rows(ggfit, model, n_dev, flags)
                    if record and want is not None:
                        record.write(json.dumps({'model': os.path.basename(model), 'devices': n_dev,
                                                 'args': flags,
                                                 'rows': [[n] + v for n, v in want]}) + '\n')
                    if want is None or got is None:
                        if want is None and got is None:
                            continue   # both refuse
                        print('%s: llama.cpp %s, ggfit %s' % (label, werr or 'ok', gerr or 'ok'))
                        n_diff += 1
                        continue
                    bad = [(w[0], w[1], g[1]) for w, g in zip(want, got) if w[1] != g[1]]
                    if len(want) != len(got):
                        bad.append(('rows', len(want), len(got)))
                    for name, w, g in bad:
                        print('%s: %s: llama.cpp %s, ggfit %s' % (label, name, w, g))
                    n_diff += bool(bad)
                    n_same += not bad
            os.remove(sparse)
    finally:
        for p in procs:
            p.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    print('%d same, %d differ' % (n_same, n_diff))
    return 1 if n_diff else 0


if __name__ == '__main__':
    sys.exit(main())
