#!/usr/bin/env python3
"""usage: tools/speedcheck_local.py [--ggfit PATH] [--csv PATH] [--tolerance PCT]
       tools/speedcheck_local.py --measure [--llama-bench PATH] [--dir DIR] [--record]

ggfit's CPU speed predictions held against llama-bench run on one machine
(issue 30; data/speed/README.md, "local.csv").

Without --measure: for every row of data/speed/local.csv, runs
`ggfit bench --gpu none --host-bw BW --host-efficiency 1 [--host-gflops G] --json -- llama-bench
-m LAYOUT -p P -n N -d D -t T` on the row's header-only layout with the
machine's figures recorded in the row, prints measured against predicted
t/s, the median error of pp and of tg, and exits 1 when a row is off by more
than --tolerance percent (default 25).

--measure (make speedcheck-local LLAMA_BENCH=PATH; --only qwen3 for some of
them): makes random-weight
models in --dir (default build/speedcheck-local; files already there are
kept): qwen3-0.6b F16 and gpt-oss-20b MXFP4 from their layouts in
data/models (tools/mkrandom.py; a model is skipped, with a message, when the
disk or the memory is short), and qwen3-0.6b Q4_K_M with llama-quantize
(beside llama-bench). Runs llama-bench on each and `ggfit devices --measure`,
writes the rows (to --csv with --record, else to DIR/local.csv) and compares
them as above. The Q4_K_M model's header-only layout (tests/speed/ with
--record, else DIR/layouts/) is cut from the quantized file.
"""
import argparse
import csv
import json
import os
import shutil
import statistics
import subprocess
import sys

import mkrandom

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ['machine', 'cpus', 'host_bw_gbs', 'host_gflops', 'llama_version', 'model', 'layout',
           'n_threads', 'n_prompt', 'n_gen', 'n_depth', 'avg_ts', 'stddev_ts', 'date']
# Issue 30's tests: two prompt sizes and generation, empty and at depth, two threads.
BENCH_ARGS = ['-p', '64,512', '-n', '32', '-d', '0,2048', '-t', '2', '-r', '3', '-o', 'json']
# (model file, its layout in the repository or None when cut from the file,
#  how it is made: 'random' from the layout, or quantized from another model)
MODELS = [
    ('qwen3-0.6b-f16.gguf', 'data/models/qwen3-0.6b-f16.gguf', 'random'),
    ('qwen3-0.6b-Q4_K_M.gguf', None, ('qwen3-0.6b-f16.gguf', 'Q4_K_M')),
    ('gpt-oss-20b-mxfp4.gguf', 'data/models/gpt-oss-20b-mxfp4.gguf', 'random'),
]
LAYOUT_DIR = 'tests/speed'
GIB = 1 << 30


def repo_path(p):
    """p as the csv names it: relative to the repository when inside it."""
    p = os.path.abspath(p)
    return os.path.relpath(p, ROOT) if p.startswith(ROOT + os.sep) else p


def run_json(cmd, env=None, stderr=None):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=stderr or subprocess.PIPE,
                       text=True, env=env)
    try:
        return json.loads(r.stdout)
    except ValueError:
        sys.exit('%s: exit %d, no JSON\n%s' % (' '.join(cmd), r.returncode, r.stderr or ''))


# ---- what ggfit prints (its JSON may change: read only here) ----

def predicted_tps(doc, row):
    """ggfit bench --json's t/s for the row's test."""
    for t in doc['tests']:
        if (t['n_prompt'], t['n_gen'], t['n_depth']) == \
                (int(row['n_prompt']), int(row['n_gen']), int(row['n_depth'])):
            return t['tps']
    raise KeyError('ggfit bench printed no test for %s' % row)


def host_figures(doc):
    """ggfit devices --measure --json: the host bandwidth the speed model keeps
    (the larger of one thread's read and all threads'), and one thread's FP32
    multiply-add GFLOPS when ggfit measures it, else ''. That field's name is
    not settled: any host-level key with 'gflops' in it, one naming a single
    thread first."""
    bw = doc['host_bandwidth']
    gbs = bw.get('kept_gbs') or max(bw['single_thread_gbs'], bw['all_threads_gbs'])
    found = [(k, v) for name, part in doc.items() if name.startswith('host') and isinstance(part, dict)
             for k, v in part.items() if 'gflops' in k and isinstance(v, (int, float))]
    found.sort(key=lambda kv: not any(w in kv[0] for w in ('single', 'one', 'per_thread')))
    return round(gbs, 2), (round(found[0][1], 1) if found else '')


# ---- the comparison ----

def ggfit_tps(ggfit, row):
    # a measured read is taken whole (--host-efficiency 1), as ggfit takes
    # this machine's own measurement
    cmd = [ggfit, 'bench', '--gpu', 'none', '--host-bw', row['host_bw_gbs'],
           '--host-efficiency', '1']
    if row['host_gflops']:
        cmd += ['--host-gflops', row['host_gflops']]
    cmd += ['--json', '--', 'llama-bench', '-m', os.path.join(ROOT, row['layout']),
            '-p', row['n_prompt'], '-n', row['n_gen'], '-d', row['n_depth'], '-t', row['n_threads']]
    return predicted_tps(run_json(cmd), row)


def compare(rows, ggfit, tolerance):
    """Prints the table and the medians; 1 when a row is off by more than tolerance %."""
    print('%-24s %-6s %6s %9s %9s %8s' % ('model', 'test', 'depth', 'measured', 'ggfit', 'error'))
    errs = {'pp': [], 'tg': []}
    bad = 0
    for row in rows:
        kind, n = ('pp', row['n_prompt']) if int(row['n_prompt']) else ('tg', row['n_gen'])
        measured = float(row['avg_ts'])
        pred = ggfit_tps(ggfit, row)
        err = (pred - measured) / measured * 100
        errs[kind].append(err)
        off = abs(err) > tolerance
        bad += off
        print('%-24s %-6s %6s %9.2f %9.2f %+7.1f%%%s' % (row['model'], kind + n, row['n_depth'],
                                                       measured, pred, err, '  !' if off else ''))
    for kind, e in errs.items():
        if e:
            print('%s: median |error| %.1f%% (signed %+.1f%%), %d rows' % (
                kind, statistics.median(abs(x) for x in e), statistics.median(e), len(e)))
    print('%d of %d rows off by more than %g%%' % (bad, len(rows), tolerance))
    return 1 if bad else 0


# ---- measuring ----

def cpu_name():
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('model name'):
                return line.split(':', 1)[1].strip()
    return 'unknown'


def mem_available():
    with open('/proc/meminfo') as f:
        for line in f:
            if line.startswith('MemAvailable:'):
                return int(line.split()[1]) * 1024
    return 0


def room_for(nbytes, folder, exists):
    """Why a model of nbytes cannot be made and benched here, or None: the disk
    must hold it (unless made already) and memory must too, or llama-bench
    times the disk."""
    free = shutil.disk_usage(folder).free
    if not exists and free < nbytes + GIB:
        return 'needs %.1f GiB of disk, %.1f free' % (nbytes / GIB + 1, free / GIB)
    if mem_available() < nbytes + 2 * GIB:
        return 'needs %.1f GiB of memory, %.1f available' % (nbytes / GIB + 2, mem_available() / GIB)
    return None


def header_copy(ggfit, model, out):
    """The header-only layout of model (as data/models' files: the header up
    to the data offset, nothing after)."""
    off, _ = mkrandom.data_extent(ggfit, model)
    with open(model, 'rb') as f, open(out, 'wb') as g:
        g.write(f.read(off))


def make_model(args, name, layout, how):
    """The model's path and its layout's, or None (with a message) when skipped."""
    path = os.path.join(args.dir, name)
    if how == 'random':
        off, n = mkrandom.data_extent(args.ggfit, os.path.join(ROOT, layout))
        why = room_for(off + n, args.dir, os.path.exists(path))
        if why:
            print('%s: skipped, %s' % (name, why))
            return None
        if not os.path.exists(path):
            print('%s: random weights from %s' % (name, layout), flush=True)
            mkrandom.make_random(args.ggfit, os.path.join(ROOT, layout), path)
        return path, layout
    src, qtype = how
    if not os.path.exists(path):
        if not os.path.exists(os.path.join(args.dir, src)):
            print('%s: skipped, %s was not made' % (name, src))
            return None
        print('%s: llama-quantize %s %s' % (name, src, qtype), flush=True)
        quantize = os.path.join(os.path.dirname(args.llama_bench), 'llama-quantize')
        with open(path + '.log', 'w') as log:
            subprocess.run([quantize, os.path.join(args.dir, src), path + '.tmp', qtype, '2'],
                           stdout=log, stderr=subprocess.STDOUT, env=args.env, check=True)
        os.replace(path + '.tmp', path)
    out = os.path.join(ROOT, LAYOUT_DIR) if args.record else os.path.join(args.dir, 'layouts')
    os.makedirs(out, exist_ok=True)
    header_copy(args.ggfit, path, os.path.join(out, name))
    return path, repo_path(os.path.join(out, name))


def llama_version(t):
    v = 'b%d' % t['build_number'] if t.get('build_number') else 'unknown'
    return v if t.get('build_commit', 'unknown') == 'unknown' else v + '-' + t['build_commit']


def rows_from_bench(tests, machine, layout):
    """The csv rows of llama-bench's JSON; machine: the machine's columns."""
    return [dict(machine, llama_version=llama_version(t),
                 model=os.path.basename(t['model_filename']), layout=layout,
                 n_threads=t['n_threads'], n_prompt=t['n_prompt'], n_gen=t['n_gen'],
                 n_depth=t['n_depth'], avg_ts=t['avg_ts'], stddev_ts=t['stddev_ts'],
                 date=t['test_time']) for t in tests]


def measure(args):
    os.makedirs(args.dir, exist_ok=True)
    specs = [m for m in MODELS if not args.only or any(w in m[0] for w in args.only.split(','))]
    made = [m for m in (make_model(args, *spec) for spec in specs) if m]
    gbs, gflops = host_figures(run_json([args.ggfit, 'devices', '--measure', '--json']))
    machine = dict(machine=cpu_name(), cpus=os.cpu_count(), host_bw_gbs=gbs, host_gflops=gflops)
    print('machine: %s, %d CPUs, %s GB/s, %s GFLOPS a thread' % (
        machine['machine'], machine['cpus'], gbs, gflops or 'no'), flush=True)
    rows = []
    for path, layout in made:
        print('llama-bench %s %s' % (os.path.basename(path), ' '.join(BENCH_ARGS)), flush=True)
        with open(path + '.bench.err', 'w') as err:
            tests = run_json([args.llama_bench, '-m', path] + BENCH_ARGS, env=args.env, stderr=err)
        rows += rows_from_bench(tests, machine, layout)
    return rows


def write_csv(rows, path):
    with open(path, 'w', newline='') as f:
        w = csv.DictWriter(f, COLUMNS, lineterminator='\n')
        w.writeheader()
        w.writerows(rows)


def read_csv(path):
    with open(path, newline='') as f:
        return list(csv.DictReader(f))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--ggfit', default=os.path.join(ROOT, 'build/ggfit'))
    ap.add_argument('--csv', default=os.path.join(ROOT, 'data/speed/local.csv'))
    ap.add_argument('--tolerance', type=float, default=25.0, help='percent (default 25)')
    ap.add_argument('--measure', action='store_true', help='run llama-bench here first')
    ap.add_argument('--llama-bench', default=os.environ.get('LLAMA_BENCH'),
                    help='llama-bench (default $LLAMA_BENCH); llama-quantize beside it')
    ap.add_argument('--dir', default=os.path.join(ROOT, 'build/speedcheck-local'),
                    help='work folder for the models')
    ap.add_argument('--record', action='store_true',
                    help='write the measured rows to --csv and the layouts to ' + LAYOUT_DIR)
    ap.add_argument('--only', help='with --measure: the models whose file name contains one '
                    'of these comma-separated words (--record keeps the other rows)')
    args = ap.parse_args()
    if args.measure:
        if not args.llama_bench:
            ap.error('--measure needs llama-bench: LLAMA_BENCH=PATH or --llama-bench PATH')
        args.llama_bench = os.path.abspath(args.llama_bench)
        lib = os.path.dirname(args.llama_bench)
        args.env = dict(os.environ, LD_LIBRARY_PATH=lib + (
            ':' + os.environ['LD_LIBRARY_PATH'] if os.environ.get('LD_LIBRARY_PATH') else ''))
        rows = measure(args)
        if args.record and args.only:   # the models not measured keep their rows
            done = {r['model'] for r in rows}
            rows = [r for r in read_csv(args.csv) if r['model'] not in done] + rows
        out = args.csv if args.record else os.path.join(args.dir, 'local.csv')
        write_csv(rows, out)
        print('wrote %s (%d rows)' % (out, len(rows)))
        args.csv = out
    return compare(read_csv(args.csv), args.ggfit, args.tolerance)


if __name__ == '__main__':
    sys.exit(main())
