#!/usr/bin/env python3
"""Checks that the projection is a line of stages (src/project/,
docs/layers.md): a stage is a file of src/project/ whose header, of one function,
only the driver, project.c, includes; no stage's object uses a symbol that
another stage or the driver defines (read with nm). Prints the stages in the driver's order, or each
header included elsewhere and each call between stages; exit status 1 then.

usage: tools/stages.py [OBJ_DIR]   (default build/obj; run from the repository's root)
"""
import os, re, sys

from objsyms import nm

DRIVER = 'src/project/project.c'


def includes(path):
    with open(path, encoding='utf-8') as f:
        return re.findall(r'^#include "([^"]+)"', f.read(), re.M)

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else 'build/obj'
    sources = [os.path.join(d, f) for top in ('src', 'cli', 'tests') if os.path.isdir(top)
               for d, _, fs in os.walk(top) for f in fs if f.endswith(('.c', '.h'))]
    who = {}
    for s in sources:
        for h in includes(s):
            who.setdefault(h, set()).add(s)
    # The stages: headers of src/project/ the driver includes that have a
    # source of their own, in the driver's order.
    stages = [h for h in includes(DRIVER)
              if h.startswith('project/') and h != 'project/project.h' and
              os.path.exists('src/' + h[:-2] + '.c')]
    stages = [h for h in stages if who.get(h, set()) - {'src/' + h[:-2] + '.c'} == {DRIVER}]
    bad = []
    for h in stages:   # one entry point each
        with open('src/' + h, encoding='utf-8') as f:
            protos = re.findall(r'^(?!static|typedef|#|struct)[A-Za-z_][\w \*]*\b(\w+)\(', f.read(), re.M)
        if len(protos) != 1:
            bad.append(f'{h} declares {len(protos)} functions ({", ".join(protos)}), not one')
    names = [h[len('project/'):-2] for h in stages]
    objs = {n: os.path.join(root, 'project', n + '.o') for n in names + ['project']}
    missing = [o for o in objs.values() if not os.path.exists(o)]
    if missing:
        sys.exit(f'no {missing[0]}: build first')
    info = {n: nm(o) for n, o in objs.items()}
    owner = {s: n for n, (defs, _) in info.items() for s in defs}
    for n in names:
        for s in sorted(info[n][1]):
            d = owner.get(s)
            if d and d != n:
                bad.append(f'{n}.c calls {d}.c: {s}')
    # Headers of src/project/ with one function that someone besides the
    # driver includes are not stages: say so when one looks like a stage.
    for h in includes(DRIVER):
        if h.startswith('project/') and h not in stages and h not in (
                'project/project.h', 'project/proj.h', 'project/graph_cache.h') and \
                os.path.exists('src/' + h[:-2] + '.c'):
            others = sorted(who.get(h, set()) - {DRIVER, 'src/' + h[:-2] + '.c'})
            bad.append(f'{h} is included by {", ".join(others)} too')
    for b in bad:
        print(b)
    print('stages: ' + ' > '.join(names))
    print(f'{len(names)} stages, {len(bad)} problems')
    sys.exit(1 if bad else 0)

main()
