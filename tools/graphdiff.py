#!/usr/bin/env python3
"""Compare the graph ggfit builds with the one llama.cpp built (data/graphs).

usage: tools/graphdiff.py [SUBSTRING] [-v]

For each recorded graph whose model or flags contain SUBSTRING, runs
build/ggfit with GGFIT_DEBUG_GRAPH=1 (which dumps the graph before
scheduling to stderr) and compares its nodes, in order, with the recorded
nodes minus what the scheduler inserted (op NONE: copies and their
dependency views): name, type, shape and source names. Prints the first
difference per graph with some context. A developer's tool, not a test.
"""
import gzip, json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

def mine(case):
    devs = ','.join(f'rpc:{d}MiB' for d in case['devices']) or 'none'
    cmd = [os.path.join(ROOT, 'build/ggfit'), '-m', os.path.join(ROOT, 'data/models', case['model']),
           '--gpu', devs] + case['args'] + ['-fitp', 'on', '--json']
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, GGFIT_DEBUG_GRAPH='1'))
    out = []
    for l in r.stderr.splitlines():
        m = re.match(r'node (.*) op\d+ (\S+) \[(.*)\] pin (-?\d+) src ?(.*)', l)
        if m:
            out.append((m.group(1), m.group(2).lower(), [int(x) for x in m.group(3).split(',')],
                        m.group(5).split('|') if m.group(5) else []))
    return out

def strip_copy(name):
    # a source the scheduler redirected to its copy: "<backend>#<tensor>#<n>"
    m = re.match(r'.*#(.*)#\d+$', name)
    return m.group(1) if m else name

def main():
    sub = next((a for a in sys.argv[1:] if not a.startswith('-')), '')
    verbose = '-v' in sys.argv
    ok = bad = 0
    for f in sorted(os.listdir(os.path.join(ROOT, 'data/graphs'))):
        for i, line in enumerate(gzip.open(os.path.join(ROOT, 'data/graphs', f), 'rt')):
            g = json.loads(line)
            case = g['case']
            label = f"{f.split('.jsonl')[0]}[{i}] {' '.join(case['args'])}"
            if sub not in label:
                continue
            ref = [t for t in g['tensors'] if t['kind'] != 'leaf' and t['op'] != 'NONE']
            have = mine(case)
            diff = None
            for j, (a, t) in enumerate(zip(have, ref)):
                srcs = [strip_copy(s) for s in t['src']]
                if a[0] != t['name'] or a[1] != t['type'] or a[2] != t['ne'] or a[3] != srcs:
                    diff = j
                    break
            if diff is None and len(have) != len(ref):
                diff = min(len(have), len(ref))
            if diff is None:
                ok += 1
                if verbose:
                    print(f'ok   {label}: {len(ref)} nodes')
                continue
            bad += 1
            print(f'DIFF {label}: node {diff} of {len(ref)} (ggfit has {len(have)})')
            for j in range(max(0, diff - 2), diff + 3):
                r = ref[j] if j < len(ref) else None
                a = have[j] if j < len(have) else None
                print(f'   {j:5d} llama.cpp: ' + (f"{r['name']} {r['op']} {r['type']} {r['ne']} {[strip_copy(s) for s in r['src']]}" if r else '-'))
                print(f'         ggfit:     ' + (f'{a[0]} {a[1]} {a[2]} {a[3]}' if a else '-'))
    print(f'{ok} graphs match, {bad} differ')

if __name__ == '__main__':
    main()
