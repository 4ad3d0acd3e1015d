#!/usr/bin/env python3
"""Lists the cycles between the folders of src/, as built: folder A -> folder B
when an object of A uses a symbol an object of B defines (read with nm). Each
edge of a cycle is printed with the symbols that make it. Exit status 1 when
there is a cycle: docs/layers.md says the folders call one way only.

usage: tools/folder_cycles.py [OBJ_DIR]   (default build/obj; the folders below it)

An object whose source is gone from src/ (a file moved or removed since the
build) is left out, and counted, when run from the repository's root.
"""
import os, sys

from objsyms import nm


def sccs(nodes, edges):
    """Tarjan's strongly connected components of more than one node."""
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def visit(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop(); on.discard(w); c.append(w)
                if w == v: break
            if len(c) > 1: out.append(sorted(c))
    for v in nodes:
        if v not in index: visit(v)
    return out

def main():
    root = sys.argv[1] if len(sys.argv) > 1 else 'build/obj'
    objs = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs if f.endswith('.o'))
    if not objs:
        sys.exit(f'no object files under {root}: build first')
    stale = []
    if os.path.isdir('src'):
        src = lambda o: os.path.join('src', os.path.relpath(o, root)[:-2] + '.c')
        stale = [o for o in objs if not os.path.exists(src(o))]
        objs = [o for o in objs if os.path.exists(src(o))]
    folder = lambda o: os.path.relpath(o, root).split(os.sep)[0]
    info = {o: nm(o) for o in objs}
    owner = {}
    for o, (defs, _) in info.items():
        for s in defs:
            owner[s] = o
    folders = sorted({folder(o) for o in objs})
    # why[(a, b)]: the (object, symbol) pairs by which folder a uses folder b
    why = {}
    for o, (_, used) in info.items():
        for s in used:
            d = owner.get(s)
            if d and folder(d) != folder(o):
                why.setdefault((folder(o), folder(d)), []).append((os.path.relpath(o, root), s))
    edges = {f: set() for f in folders}
    for a, b in why:
        edges[a].add(b)
    cycles = sccs(folders, edges)
    for c in cycles:
        # Every edge inside the component closes a cycle; the ones made of
        # fewest symbols, usually the ones to move, come first.
        print('cycle: ' + ', '.join(c))
        inner = sorted(((a, b) for a in c for b in edges[a] if b in c),
                       key=lambda e: (len(why[e]), e))
        for a, b in inner:
            n = len(why[(a, b)])
            ex = sorted(why[(a, b)])[:4]
            print(f'  {a} -> {b} ({n} symbol{"s" if n > 1 else ""}): ' +
                  ', '.join(f'{o} uses {s}' for o, s in ex))
    if not cycles:
        # The folders' order, lowest first: each uses only folders before it.
        order, done = [], set()
        def place(f):
            if f in done: return
            done.add(f)
            for g in sorted(edges[f]): place(g)
            order.append(f)
        for f in folders: place(f)
        print('order: ' + ' < '.join(order))
    left = f' ({len(stale)} stale objects left out)' if stale else ''
    print(f'{len(folders)} folders, {len(why)} edges, {len(cycles)} cycles{left}')
    sys.exit(1 if cycles else 0)

main()
