#!/usr/bin/env python3
"""speedcheck.py - ggfit bench against published llama.cpp measurements.

Runs `ggfit bench --json` once for every row of data/speed/calibration.csv
(or --csv; data/speed/README.md says where its figures come from) whose
model layout ggfit ships (data/models) and whose device is in ggfit's
catalog. Rows marked UNCERTAIN are left out, and so are rows that are not
llama-bench's figures (llmfit's avgTps includes prompt processing) and rows
without a layout or a device bandwidth; the script says how many and why.

It prints the median absolute relative error of pp and of tg: overall, on
dense and on MoE rows (a layout is MoE when `ggfit inspect --json` gives it
experts), per backend group, and per depth bucket (llama-bench's -d: 0,
1-4095, 4096-16383, 16384+). Then the worst rows: every row off by more
than 2x on pp or tg (predicted/measured above 2 or below 0.5), and the 10
worst by relative error. A row off by more than 2x needs its reason in
data/speed/outliers.csv (or --outliers: device, model, quant, ctx_or_depth,
pp_tokens, tg_tokens as in the calibration row, metric pp or tg, reason);
one without exits with status 1, after everything is printed.
--summary-json FILE writes those figures as JSON, for the notes.

--fit chooses the constants on the rows used: per backend one bandwidth
efficiency and one fixed cost per token (tg), and one fraction of the
TFLOPS (pp), minimising the median absolute relative error over all of the
backend's rows (never row by row). Put the result in
src/speed/speed_constants.c.

  python3 tools/speedcheck.py [--ggfit build/ggfit] [--csv FILE] [--outliers FILE]
                              [--summary-json FILE] [--fit] [-v]
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


# Sources measured before llama-bench's flash attention became "auto": its
# -fa was 0 by default then (XiongjieDai's tables are of May 2024), and a
# row that does not name -fa ran without it.
FA_OFF_SOURCES = ('XiongjieDai',)


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
    if '-fa ' not in notes and any(s in r['source'] for s in FA_OFF_SOURCES):
        args += ['-fa', '0']
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
    """the GPUs' prompt time with constants c = (fraction of the TFLOPS for
    quantized weights, float weights, attention with flash attention,
    without it, routed experts), and the experts each ubatch reads"""
    pq, pf, pa, pn, pm = c
    attn = pa if j.get('flash_attn') else pn
    n_ub = -(-j['n_prompt'] // j['n_ubatch'])
    ms = 0
    for d in j['devices']:
        fm = d.get('flops_moe', 0)
        fq = d['flops_per_token'] - d['flops_float'] - d['flops_attn'] - fm
        ms += j['n_prompt'] * (fq / pq + d['flops_float'] / pf + d['flops_attn'] / attn +
                               fm / pm) / (d['tflops'] * 1e12) * 1e3
        ms += n_ub * d.get('expert_bytes_per_ubatch', 0) / (
            d['bandwidth_gbs'] * 1e9 * d['efficiency']) * 1e3
    return ms


def constants_of(j):
    """the pp constants ggfit used for j (its first GPU's)"""
    d = j['devices'][0]
    a = d['pp_efficiency_attn']
    return (d['pp_efficiency'], d['pp_efficiency_float'], a, a, d.get('pp_efficiency_moe', 1))


def pp_pred(j, c):
    """ggfit's prompt speed with other constants c (gpu_pp_ms): the GPUs'
    share of ggfit's time scales as their time does (pipelined or not)"""
    cur = constants_of(j) if j['devices'] else c
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
        # a constant no row of the group measures (no MoE row, no row with
        # or without flash attention) stays where it starts
        cp, ep = descend(pp_pred, pp, (0.4, 0.4, 0.3, 0.1, 0.4), [ppe] * 5) if pp else ((), 0)
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


# llama-bench's -d, bucketed: (label, lowest depth of the bucket)
DEPTHS = (('0', 0), ('1-4095', 1), ('4096-16383', 4096), ('16384+', 16384))
# the calibration columns that name a row in outliers.csv (with metric)
KEY = ('device', 'model', 'quant', 'ctx_or_depth', 'pp_tokens', 'tg_tokens')
WORST = 10


def depth_of(r):
    return int(num(r['ctx_or_depth']) or 0)


def depth_bucket(depth):
    return [label for label, low in DEPTHS if depth >= low][-1]


def moe_layouts(ggfit):
    """the layouts of MODELS with experts, from ggfit inspect (once each)"""
    moe = set()
    for layout in set(MODELS.values()):
        out = subprocess.run([ggfit, 'inspect', '-m', os.path.join(ROOT, 'data/models', layout),
                              '--json'], capture_output=True, text=True, check=True)
        if json.loads(out.stdout)['hparams']['n_expert'] > 0:
            moe.add(layout)
    return moe


def reasons_of(path):
    """outliers.csv -> {(device, ..., tg_tokens, metric): reason}"""
    return {tuple(o[k].strip() for k in KEY + ('metric',)): o['reason'].strip()
            for o in csv.DictReader(open(path))}


def off_2x(pred, meas):
    return not 0.5 <= pred / meas <= 2


def medians(recs):
    """{'pp'|'tg': {'median_error_pct', 'rows'}} over the records that have
    the figure"""
    out = {}
    for m in ('pp', 'tg'):
        e = [err(*x[m]) for x in recs if x[m]]
        out[m] = {'median_error_pct': round(100 * statistics.median(e), 2) if e else None,
                  'rows': len(e)}
    return out


def breakdown(recs):
    """the median errors overall, dense/MoE, per backend group and depth"""
    pick = lambda f: [x for x in recs if f(x)]
    return {
        'overall': medians(recs),
        'dense': medians(pick(lambda x: not x['moe'])),
        'moe': medians(pick(lambda x: x['moe'])),
        'backend': {g: medians(pick(lambda x: x['group'] == g))
                    for g in sorted({x['group'] for x in recs})},
        'depth': {label: medians(pick(lambda x: x['depth_bucket'] == label))
                  for label, _ in DEPTHS},
    }


def print_breakdown(b):
    def line(label, m):
        fmt = lambda v: ('%5.1f%% (%d rows)' % (v['median_error_pct'], v['rows'])
                         if v['rows'] else '  - (no rows)')
        print('  %-28s pp %-18s tg %s' % (label, fmt(m['pp']), fmt(m['tg'])))
    print('median absolute relative error (ggfit bench against the measurement):')
    line('overall', b['overall'])
    line('dense rows', b['dense'])
    line('MoE rows', b['moe'])
    print(' per backend:')
    for g, m in b['backend'].items():
        line(g, m)
    if not any('experts in RAM' in g for g in b['backend']):
        print('  MoE rows with experts in system RAM: none among the rows used '
              '(the calibration has them only from llmfit, left out above)')
    print(' per depth (ctx_or_depth):')
    for label, m in b['depth'].items():
        line('d ' + label, m)


def worst_rows(recs, reasons):
    """every record off by more than 2x on pp or tg, and the WORST (10) worst by
    relative error, worst first; each metric off by 2x gets its reason
    (None: outliers.csv has none)"""
    worst = lambda x: max(err(*x[m]) for m in ('pp', 'tg') if x[m])
    ranked = sorted(recs, key=worst, reverse=True)
    out = []
    for k, x in enumerate(ranked):
        off = [m for m in ('pp', 'tg') if x[m] and off_2x(*x[m])]
        if off or k < WORST:
            key = tuple(x['row'][c].strip() for c in KEY)
            out.append(dict(x, error=worst(x), off={m: reasons.get(key + (m,)) for m in off}))
    return out


def print_worst(rows):
    print('worst rows (every one off by more than 2x, and the %d worst by relative error; '
          'predicted/measured):' % WORST)
    for x in rows:
        r = x['row']
        fig = lambda m: ('%s %8.1f/%-8.1f x%-5.2f' % (m, x[m][0], x[m][1], x[m][0] / x[m][1])
                         if x[m] else '%s %s' % (m, '-'.rjust(24)))
        why = '; '.join('%s: %s' % (m, reason or 'NO REASON') for m, reason in x['off'].items())
        print('  %-24s %-19s %-12s d=%-5s p=%-4s n=%-4s %s  %s%s' % (
            r['device'][:24], r['model'][:19], r['quant'][:12], r['ctx_or_depth'],
            r['pp_tokens'], r['tg_tokens'], fig('pp'), fig('tg'), '  ' + why if why else ''))


def summary_of(b, worst):
    """the figures for --summary-json"""
    rows = [dict({c: x['row'][c] for c in KEY}, group=x['group'], moe=x['moe'],
                 relative_error=round(x['error'], 4),
                 **{m: {'predicted': round(x[m][0], 2), 'measured': x[m][1],
                        'ratio': round(x[m][0] / x[m][1], 4),
                        'off_2x': m in x['off'], 'reason': x['off'].get(m)} if x[m] else None
                    for m in ('pp', 'tg')}) for x in worst]
    off = [x for x in worst if x['off']]
    return dict(b, worst=rows, off_2x=len(off),
                off_2x_without_reason=sum(1 for x in off if None in x['off'].values()))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--ggfit', default=os.path.join(ROOT, 'build/ggfit'))
    ap.add_argument('--csv', default=os.path.join(ROOT, 'data/speed/calibration.csv'))
    ap.add_argument('--outliers', default=os.path.join(ROOT, 'data/speed/outliers.csv'),
                    help='the reasons of the rows off by more than 2x')
    ap.add_argument('--summary-json', metavar='FILE', help='write the figures as JSON')
    ap.add_argument('--fit', action='store_true', help='choose the constants on the rows')
    ap.add_argument('-v', '--verbose', action='store_true', help='every row')
    a = ap.parse_args()
    used, skipped = rows_of(a.csv)
    print('calibration rows: %d used, %d left out' % (len(used), sum(skipped.values())))
    for why, k in sorted(skipped.items(), key=lambda x: -x[1]):
        print('  %4d %s' % (k, why))
    moe = moe_layouts(a.ggfit)
    samples, recs = [], []
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
        recs.append({'row': r, 'group': group, 'moe': MODELS[r['model']] in moe,
                     'depth_bucket': depth_bucket(depth_of(r)),
                     'pp': (j['pp_tps'], pp) if pp else None,
                     'tg': (j['tg_tps'], tg) if tg else None})
        if a.verbose:
            print('  %-40s %-12s %-8s d=%-6s tg %7.1f vs %7s  pp %8.1f vs %8s' % (
                r['device'][:40], r['model'][:12], r['quant'][:8], r['ctx_or_depth'],
                j['tg_tps'], r['tg_tps'], j['pp_tps'], r['pp_tps']))
    b = breakdown(recs)
    print_breakdown(b)
    reasons = reasons_of(a.outliers)
    worst = worst_rows(recs, reasons)
    print_worst(worst)
    # a reason whose row is no longer off by 2x is out of date
    cited = {tuple(x['row'][c].strip() for c in KEY) + (m,) for x in worst for m in x['off']}
    for key in sorted(set(reasons) - cited):
        print('  outliers.csv: no used row is off by more than 2x on %s for %s' % (
            key[-1], ', '.join(key[:-1])))
    moe_ram_check(a.csv, a.ggfit, a.verbose)
    if a.fit:
        print('constants chosen per backend (median over all its rows):')
        for be, (ct, et, cp, ep) in fit(samples).items():
            print('  %-22s tg: efficiency %s, float %s, fixed %s ms/layer (%.1f%%)' % (
                be, *(ct or ('-',) * 3), 100 * et))
            print('  %-22s pp: efficiency %s, float %s, attention %s (flash) %s (without), '
                  'experts %s (%.1f%%)' % ('', *(cp or ('-',) * 5), 100 * ep))
    summary = summary_of(b, worst)
    if a.summary_json:
        with open(a.summary_json, 'w') as f:
            json.dump(summary, f, indent=1)
            f.write('\n')
    print('rows off by more than 2x: %d (%d without a reason)' % (
        summary['off_2x'], summary['off_2x_without_reason']))
    return 1 if summary['off_2x_without_reason'] else 0


if __name__ == '__main__':
    sys.exit(main())
