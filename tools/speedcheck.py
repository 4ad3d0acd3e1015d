#!/usr/bin/env python3
"""speedcheck.py - ggfit bench against published llama.cpp measurements.

Runs `ggfit bench --json` for every row of data/speed/calibration.csv (or
--csv; data/speed/README.md says where its figures come from) whose model
layout ggfit ships (data/models) and whose device is in ggfit's catalog,
and prints the median absolute error of tg and pp per
backend. Rows marked UNCERTAIN are left out, and so are rows that are not
llama-bench's figures (llmfit's avgTps includes prompt processing) and rows
without a layout or a device bandwidth; the script says how many and why.

--fit chooses the constants on the rows used: per backend one bandwidth
efficiency and one fixed cost per token (tg), and one fraction of the
TFLOPS (pp), minimising the median absolute relative error over all of the
backend's rows (never row by row). Put the result in
src/speed/speed_constants.c.

  python3 tools/speedcheck.py [--ggfit build/ggfit] [--csv FILE] [--fit] [-v]
"""
import argparse
import csv
import itertools
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# model column -> (layout in data/models, how its quants map)
MODELS = {
    'Llama-3-8B': 'llama-3.1-8b-Q4_K_M.gguf',
    'Llama-3-70B': 'llama-3.3-70b-Q4_K_M.gguf',
    'gpt-oss-20b': 'gpt-oss-20b-mxfp4.gguf',
    'gpt-oss-120b': 'gpt-oss-120b-mxfp4.gguf',
    # Qwen3-Coder-30B-A3B has Qwen3-30B-A3B's shapes (48 blocks, 128
    # experts, 8 used, 2048 wide)
    'Qwen3-Coder-30B-A3B': 'qwen3-30b-a3b-Q4_K_M.gguf',
    # gemma-3-4b-it-qat is Gemma 3 4B at Q4_0
    'gemma-3-4b-it-qat': 'gemma-3-4b-Q4_K_M.gguf',
}
# the layout's own quant: other quants are counted with --as-type
LAYOUT_QUANT = {'llama-3.1-8b-Q4_K_M.gguf': 'Q4_K_M', 'llama-3.3-70b-Q4_K_M.gguf': 'Q4_K_M',
                'gpt-oss-20b-mxfp4.gguf': 'MXFP4', 'gpt-oss-120b-mxfp4.gguf': 'MXFP4',
                'qwen3-30b-a3b-Q4_K_M.gguf': 'Q4_K_M', 'gemma-3-4b-Q4_K_M.gguf': 'Q4_K_M'}
# device column (before " xN" and " (...GB)") -> catalog id
DEVICES = {
    'RTX 3070': 'rtx-3070', 'RTX 3080': 'rtx-3080', 'RTX 3080 Ti': 'rtx-3080-ti',
    'RTX 3090': 'rtx-3090', 'RTX 4070 Ti': 'rtx-4070-ti', 'RTX 4080': 'rtx-4080',
    'RTX 4090': 'rtx-4090', 'RTX 5090': 'rtx-5090', 'RTX A6000': 'rtx-a6000',
    'RTX 6000 Ada': 'rtx-6000-ada', 'A40': 'a40', 'L40S': 'l40s',
    'A100 PCIe 80GB': 'a100-80gb', 'A100 SXM 80GB': 'a100-80gb', 'H100 PCIe 80GB': 'h100-pcie',
    'NVIDIA DGX Spark (GB10)': 'dgx-spark',
    'RTX 5070 Ti 16GB': 'rtx-5070-ti', 'RTX 5080': 'rtx-5080', 'RTX 5070 12GB': 'rtx-5070',
    'RTX 4070 Ti SUPER 16GB': 'rtx-4070-ti-super', 'RTX 3060 12GB': 'rtx-3060-12gb',
    'Apple M1 Max 32-core GPU (64GB)': 'm1-max-64gb',
    'Apple M2 Ultra 76-core GPU (192GB)': 'm2-ultra-192gb',
    'Apple M3 Max 40-core GPU (64GB)': 'm3-max-64gb',
    'Apple M1 7-core GPU (8GB)': 'm1-8gb',
}


def device_spec(dev):
    m = re.match(r'^(.*?) x(\d+)$', dev)
    name, count = (m.group(1), int(m.group(2))) if m else (dev, 1)
    cid = DEVICES.get(name)
    return ','.join([cid] * count) if cid else None


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def rows_of(path):
    used, skipped = [], {}
    for r in csv.DictReader(open(path)):
        why = None
        if 'UNCERTAIN' in r['notes']:
            why = 'UNCERTAIN'
        elif 'llmfit' in r['source']:
            why = 'not llama-bench (llmfit avgTps includes prompt processing)'
        elif r['model'] not in MODELS:
            why = 'no layout of %s in data/models' % r['model']
        elif not device_spec(r['device']):
            why = 'device not in the catalog (no bandwidth): %s' % r['device']
        elif num(r['tg_tps']) is None and num(r['pp_tps']) is None:
            why = 'no figure'
        if why:
            skipped[why] = skipped.get(why, 0) + 1
        else:
            used.append(r)
    return used, skipped


def bench_args(r, ggfit):
    layout = MODELS[r['model']]
    args = [ggfit, 'bench', '-m', os.path.join(ROOT, 'data/models', layout),
            '--gpu', device_spec(r['device']), '--host-mem', '64GiB', '--json']
    quant = r['quant'].split()[0]
    if quant != LAYOUT_QUANT[layout]:
        args += ['--as-type', quant]
    ngl = r['ngl'].strip()
    args += ['-ngl', ngl if ngl.isdigit() else '99']
    notes = r['notes']
    for flag in ('-ub', '-b', '-fa'):
        m = re.search(r'(?:^|\s)%s (\d+)' % flag, notes)
        if m:
            args += [flag, m.group(1)]
    depth = int(num(r['ctx_or_depth']) or 0)
    args += ['-p', str(int(num(r['pp_tokens']) or 512)), '-n', str(int(num(r['tg_tokens']) or 128)),
             '-d', str(depth)]
    return args


def run(args, extra=()):
    """ggfit bench's JSON; its exit status is the plan's (1: the flags do
    not fit the card the row names, 3: system memory short), which does not
    stop the speed from being predicted"""
    out = subprocess.run(list(args) + list(extra), capture_output=True, text=True)
    if out.returncode not in (0, 1, 3):
        raise RuntimeError('%s: %s' % (' '.join(args), out.stderr.strip()))
    return json.loads(out.stdout)


def err(pred, meas):
    return abs(pred - meas) / meas


def tg_pred(j, c):
    """ggfit's generation speed with other constants c = (efficiency of
    quantized weights, of float weights and the KV cache, fixed ms per
    layer on each GPU), from the bytes ggfit_speed reports"""
    eq, ef, fl = c
    ms = j['link']['ms_per_token']
    for d in j['devices']:
        bw = d['bandwidth_gbs'] * 1e9
        wf = d['weight_bytes_float']
        wq = d['weight_bytes_per_token'] - wf
        ms += (wq / (bw * eq) + (wf + d['kv_bytes_per_token']) / (bw * ef)) * 1e3 + fl * d['layers']
    if j['host']:
        ms += j['host']['ms_per_token']
    return 1e3 / ms


def gpu_pp_ms(j, c):
    pq, pf, pa = c
    ms = 0
    for d in j['devices']:
        fq = d['flops_per_token'] - d['flops_float'] - d['flops_attn']
        ms += j['n_prompt'] * (fq / pq + d['flops_float'] / pf + d['flops_attn'] / pa) / (
            d['tflops'] * 1e12) * 1e3
    return ms


def pp_pred(j, c):
    """ggfit's prompt speed with other constants c = (fraction of the TFLOPS
    for quantized weights, float weights, attention): the GPUs' share of
    ggfit's time scales as their time does (pipelined or not)"""
    cur = tuple(j['devices'][0][k] for k in ('pp_efficiency', 'pp_efficiency_float',
                                             'pp_efficiency_attn')) if j['devices'] else c
    old, new = gpu_pp_ms(j, cur), gpu_pp_ms(j, c)
    rest = j['link']['offload_ms'] if j['link']['offload_ms'] else (
        j['host']['pp_ms'] if j['host'] else 0)
    gpu = j['pp_ms'] - rest
    return j['n_prompt'] / (rest + (gpu * new / old if old else 0)) * 1e3


def descend(pred, rows, start, grids):
    """coordinate descent on the median absolute error over all rows"""
    c = list(start)
    cost = lambda v: statistics.median(err(pred(j, tuple(v)), m) for j, m in rows)
    best = cost(c)
    for _ in range(4):
        for i, grid in enumerate(grids):
            for g in grid:
                v = list(c)
                v[i] = g
                e = cost(v)
                if e < best:
                    best, c = e, v
    return tuple(c), best


def grid(pred, rows, grids):
    """every point of the grids, the median absolute error over all rows:
    coordinate descent stops at a corner of this surface (it kept Metal's
    and the HBM cards' generation constants at 10% where 6-8% exists)"""
    best = None
    for c in itertools.product(*grids):
        e = statistics.median(err(pred(j, c), m) for j, m in rows)
        if best is None or e < best[1]:
            best = (c, e)
    return best


def fit(samples):
    """samples: [(group, json, tg, pp)] -> {group: (tg constants, tg error,
    pp constants, pp error)}"""
    out = {}
    for be in sorted({s[0] for s in samples}):
        tg = [(j, t) for b, j, t, p in samples if b == be and t]
        pp = [(j, p) for b, j, t, p in samples if b == be and p]
        ct, et = grid(tg_pred, tg, [[x / 100 for x in range(30, 95, 2)]] * 2 +
                      [[x / 1000 for x in range(0, 200, 4)]]) if tg else ((), 0)
        ppe = [x / 1000 for x in range(10, 1001, 5)]
        cp, ep = descend(pp_pred, pp, (0.4, 0.4, 0.1), [ppe, ppe, ppe]) if pp else ((), 0)
        out[be] = (ct, et, cp, ep)
    return out


# The MoE rows with experts in system RAM (--n-cpu-moe): llmfit's, on an
# RTX 2080 (448 GB/s, 8 GiB; not in the catalog) beside quad-channel DDR4
# (~102 GB/s as the row says). llmfit's avgTps counts prompt processing in
# the time, so it is a floor of the generation speed; for Qwen3-30B-A3B the
# row quotes llama-server's own generation figure (PR 755: 36.7 tok/s).
MOE_RAM = {
    'Qwen3-30B-A3B-Instruct-2507-Q4_K_M': ('qwen3-30b-a3b-Q4_K_M.gguf', 36.7),
    'gpt-oss-20b-MXFP4': ('gpt-oss-20b-mxfp4.gguf', None),
    'DeepSeek-Coder-V2-Lite-Instruct-Q4_K_M': ('deepseek-v2-lite-Q4_K_M.gguf', None),
}


def moe_ram_check(path, ggfit, verbose):
    """ggfit bench on the rows with experts in system RAM, reported on
    their own: against llama-server's generation figure where the row has
    one, else against llmfit's avgTps (a floor)."""
    rows = [r for r in csv.DictReader(open(path))
            if 'cpu-moe' in r['n_cpu_moe_or_ot'] and r['model'] in MOE_RAM]
    if not rows:
        return
    print('MoE rows with experts in system RAM (--n-cpu-moe; llmfit, RTX 2080 + DDR4 '
          '102 GB/s), ggfit bench -c 4096 -ngl 99 -ncmoe N --bandwidth 448 --host-bw 102:')
    errs = []
    for r in rows:
        layout, tg_server = MOE_RAM[r['model']]
        n = r['n_cpu_moe_or_ot'].split()[-1]
        args = [ggfit, 'bench', '-m', os.path.join(ROOT, 'data/models', layout), '--gpu',
                'cuda:8GiB', '--bandwidth', '448', '--host-bw', '102', '--host-mem', '64GiB',
                '-c', '4096', '-ngl', '99', '-ncmoe', n, '--json']
        j = run(args)
        floor = num(r['tg_tps'])
        if tg_server:
            errs.append(err(j['tg_tps'], tg_server))
            what = 'llama-server %.1f t/s: error %.1f%%' % (tg_server, 100 * errs[-1])
        else:
            what = 'llmfit avgTps %.1f t/s (a floor): ggfit %s it' % (
                floor, 'above' if j['tg_tps'] >= floor else 'BELOW')
        print('  %-40s -ncmoe %-3s ggfit tg %6.1f t/s; %s' % (r['model'][:40], n, j['tg_tps'],
                                                             what))
    if errs:
        print('  median absolute error where a generation figure exists: %.1f%% (%d row%s)' % (
            100 * statistics.median(errs), len(errs), '' if len(errs) == 1 else 's'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ggfit', default=os.path.join(ROOT, 'build/ggfit'))
    ap.add_argument('--csv', default=os.path.join(ROOT, 'data/speed/calibration.csv'))
    ap.add_argument('--fit', action='store_true', help='choose the constants on the rows')
    ap.add_argument('-v', '--verbose', action='store_true', help='every row')
    a = ap.parse_args()
    used, skipped = rows_of(a.csv)
    print('calibration rows: %d used, %d left out' % (len(used), sum(skipped.values())))
    for why, k in sorted(skipped.items(), key=lambda x: -x[1]):
        print('  %4d %s' % (k, why))
    samples, errs = [], {}
    for r in used:
        args = bench_args(r, a.ggfit)
        j = run(args)
        be = r['backend'] + (' ' + j['devices'][0]['class'] if j['devices'] and
                              j['devices'][0]['class'] != 'default' else '')
        moe_ram = bool(j['host'] and j['host']['weight_bytes_per_token'] > 1e6 and
                       'MoE' in r['quant'])
        group = be + (' (experts in RAM)' if moe_ram else '')
        tg, pp = num(r['tg_tps']), num(r['pp_tps'])
        samples.append((group, j, tg, pp))
        e = errs.setdefault(group, {'tg': [], 'pp': []})
        if tg:
            e['tg'].append(err(j['tg_tps'], tg))
        if pp:
            e['pp'].append(err(j['pp_tps'], pp))
        if a.verbose:
            print('  %-40s %-12s %-8s d=%-6s tg %7.1f vs %7s  pp %8.1f vs %8s' % (
                r['device'][:40], r['model'][:12], r['quant'][:8], r['ctx_or_depth'],
                j['tg_tps'], r['tg_tps'], j['pp_tps'], r['pp_tps']))
    print('median absolute error (ggfit bench against the measurement):')
    for g in sorted(errs):
        e = errs[g]
        fmt = lambda v: ('%5.1f%% (%d rows)' % (100 * statistics.median(v), len(v))) if v else '  -'
        print('  %-28s tg %-18s pp %s' % (g, fmt(e['tg']), fmt(e['pp'])))
    if not any('experts in RAM' in g for g in errs):
        print('  MoE rows with experts in system RAM: none among the rows used '
              '(the calibration has them only from llmfit, left out above)')
    moe_ram_check(a.csv, a.ggfit, a.verbose)
    if a.fit:
        print('constants chosen per backend (median over all its rows):')
        for be, (ct, et, cp, ep) in fit(samples).items():
            print('  %-22s tg: efficiency %s, float %s, fixed %s ms/layer (%.1f%%)' % (
                be, *(ct or ('-',) * 3), 100 * et))
            print('  %-22s pp: efficiency %s, float %s, attention %s (%.1f%%)' % (
                '', *(cp or ('-',) * 3), 100 * ep))


if __name__ == '__main__':
    sys.exit(main())
