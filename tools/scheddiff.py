#!/usr/bin/env python3
"""Compare the graph ggfit's scheduler hands to ggml-alloc with llama.cpp's.

usage: tools/scheddiff.py [SUBSTRING] [-n N]

For each recorded graph (data/graphs) whose model or flags contain
SUBSTRING, runs build/ggfit with GGFIT_DEBUG_GRAPH=1 and compares the
post-scheduling dump ("sched ..." lines) with the recorded tensors position
by position: kind (leaf/node), name, type, shape, nbytes, backend, flags,
allocated, view offset and source names. Prints the first N differences per
graph (default 10). A developer's tool, not a test.
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
        if not l.startswith('sched '):
            continue
        f = l[6:].split('\t')
        out.append(dict(kind=f[0], name=f[1], type=f[3].lower(), ne=[int(x) for x in f[4].split(',')],
                        nbytes=int(f[5]), backend=int(f[6]), flags=int(f[7]), allocated=int(f[8]),
                        view_src=int(f[9]), view_offs=int(f[10]), src=f[11].split('|') if f[11] else []))
    return out

def norm(name):
    # the device's buffer type name carries the RPC endpoint; ggfit's does not
    return re.sub(r'^(RPC\d+)\[[^\]]*\]#', r'\1#', name)

FIELDS = ['kind', 'name', 'type', 'ne', 'nbytes', 'backend', 'flags', 'allocated', 'view_offs', 'src']

def main():
    args = sys.argv[1:]
    n_show = 10
    if '-n' in args:
        n_show = int(args[args.index('-n') + 1])
        del args[args.index('-n'):args.index('-n') + 2]
    sub = args[0] if args else ''
    for f in sorted(os.listdir(os.path.join(ROOT, 'data/graphs'))):
        for i, line in enumerate(gzip.open(os.path.join(ROOT, 'data/graphs', f), 'rt')):
            g = json.loads(line)
            case = g['case']
            label = f"{f.split('.jsonl')[0]}[{i}] {' '.join(case['args'])}"
            if sub not in label:
                continue
            ref = g['tensors']
            have = mine(case)
            shown = 0
            for j in range(max(len(ref), len(have))):
                r = ref[j] if j < len(ref) else None
                a = have[j] if j < len(have) else None
                if r is None or a is None:
                    print(f'{label}: length {len(have)} vs {len(ref)}')
                    break
                rr = dict(r)
                rr.setdefault('view_offs', 0)
                rr['src'] = [norm(s) if s else '-' for s in r['src']]
                rr['name'] = norm(r['name'])
                rr['type'] = r['type'].lower()
                if r.get('view_src') is not None:
                    rr['allocated'] = a['allocated']   # views: galloc ignores it
                d = [k for k in FIELDS if rr.get(k) != a.get(k)]
                if d:
                    if shown < n_show:
                        print(f'{label} #{j} {r["name"]}: ' +
                              '; '.join(f'{k} {a.get(k)} vs {rr.get(k)}' for k in d))
                    shown += 1
            print(f'{label}: {shown} differing tensors of {len(ref)} (ggfit {len(have)})')

if __name__ == '__main__':
    main()
