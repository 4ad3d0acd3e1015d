#!/usr/bin/env python3
"""usage: tools/llama_args.py REPO OLD NEW > data/llama_args.tsv
       tools/llama_args.py LLAMA_SRC           (one version's list)

Lists every flag llama.cpp's programs take (common/arg.cpp: each
add_opt(common_arg(...))) as data: its names, its negated names, how many
values it takes, its LLAMA_ARG_* variable, the programs it belongs to and,
given a git repository of upstream llama.cpp and the oldest and newest
versions ggfit supports (OLD, NEW: commits), the builds that have it: each
first-parent commit between them that changed common/arg.cpp is read, and a
flag added, removed, moved between programs or given a new value (a
`value == "..."` its handler compares with) in one of them gets that
commit's build number (git rev-list --count). The rows are NEW's, in its
order, with those only OLD has after the row they followed.
scripts/gen_llama_args.awk joins it with data/flags.tsv (what ggfit does
with each flag, and ggfit's own flags) into the one table of flags ggfit
parses with (src/common/llama_args.c): the flags that change memory are
applied, the rest recognised and noted, and a flag the version asked for
lacks refused as llama.cpp refuses it.
"""
import re
import subprocess
import sys


def strip_comments(src):
    """src without its // and /* */ comments (strings kept)."""
    out, k, in_str = [], 0, None
    while k < len(src):
        c = src[k]
        if in_str:
            out.append(c)
            if c == '\\':
                out.append(src[k + 1])
                k += 2
                continue
            if c == in_str:
                in_str = None
        elif c in '"\'':
            in_str = c
            out.append(c)
        elif src.startswith('//', k):
            k = src.find('\n', k)
            if k < 0:
                break
            continue
        elif src.startswith('/*', k):
            k = src.find('*/', k) + 2
            continue
        else:
            out.append(c)
        k += 1
    return ''.join(out)


def calls(src):
    """Each add_opt(common_arg(...)) call's text, with what follows it up to
    the closing paren of add_opt (the .set_env/.set_examples chain)."""
    i = 0
    while True:
        i = src.find('add_opt(common_arg(', i)
        if i < 0:
            return
        j = i + len('add_opt(')
        depth, k, in_str = 0, j, None
        while k < len(src):
            c = src[k]
            if in_str:
                if c == '\\':
                    k += 2
                    continue
                if c == in_str:
                    in_str = None
            elif c in '"\'':
                in_str = c
            elif c == '(':
                depth += 1
            elif c == ')':
                depth -= 1
                if depth < 0:
                    break
            k += 1
        yield src[j:k]
        i = k


def top_args(text):
    """Top-level comma-separated arguments of common_arg(...)."""
    assert text.startswith('common_arg(')
    args, depth, cur, in_str, k = [], 0, '', None, len('common_arg(')
    while k < len(text):
        c = text[k]
        if in_str:
            cur += c
            if c == '\\':
                cur += text[k + 1]
                k += 2
                continue
            if c == in_str:
                in_str = None
        elif c in '"\'':
            in_str = c
            cur += c
        elif c in '({[':
            depth += 1
            cur += c
        elif c in ')}]':
            if depth == 0:
                args.append(cur.strip())
                return args, text[k + 1:]
            depth -= 1
            cur += c
        elif c == ',' and depth == 0:
            args.append(cur.strip())
            cur = ''
        else:
            cur += c
        k += 1
    raise ValueError('unbalanced')


def names(arg):
    return re.findall(r'"([^"]+)"', arg)


def rows(src):
    """{first name: (names, negated, values, env, programs, {values compared})}
    in src's order (a second row of the same first name keyed with a #)."""
    out = {}
    for call in calls(strip_comments(src)):
        args, chain = top_args(call)
        lam = next(i for i, a in enumerate(args) if a.startswith('['))
        pre = args[:lam]
        flags = names(pre[0])
        neg = []
        if len(pre) >= 2 and pre[1].startswith('{'):
            neg = names(pre[1])
            values = 0
        else:
            values = len(pre) - 2   # names, [hint, [hint2,]] help
        env = re.search(r'\.set_env\("([^"]+)"\)', chain)
        ex = re.search(r'\.set_examples\(\{([^}]*)\}\)', chain)
        progs = 'COMMON'
        if ex:
            progs = ','.join(p.strip().replace('LLAMA_EXAMPLE_', '') for p in ex.group(1).split(','))
        compared = set(re.findall(r'value == "([^"]*)"', ','.join(args[lam:])))
        key = flags[0]
        while key in out:   # llama.cpp lists a few flags twice (-np): kept apart
            key += '#'
        out[key] = (','.join(flags), ','.join(neg) or '-', str(values),
                    env.group(1) if env else '-', progs, compared)
    return out


def git(repo, *a):
    return subprocess.run(['git', '-C', repo] + list(a), check=True, capture_output=True,
                          text=True).stdout


def history(repo, old, new):
    """The rows of new, each with its builds column, and the short commits."""
    def at(c):
        return rows(git(repo, 'show', c + ':common/arg.cpp'))
    commits = git(repo, 'rev-list', '--first-parent', '--reverse', old + '..' + new, '--',
                  'common/arg.cpp').split()
    build = lambda c: int(git(repo, 'rev-list', '--count', c))
    prev = at(old)
    first = build(old)
    since, until, progs_before, value_since = {}, {}, {}, {}
    seen = dict(prev)
    order = list(prev)
    for c in commits:
        cur = at(c)
        b = build(c)
        for k in cur:
            if k not in prev:
                since[k] = b
                until.pop(k, None)
            elif cur[k][4] != prev[k][4]:
                progs_before[k] = (prev[k][4], b)
            if k in prev:
                for v in sorted(cur[k][5] - prev[k][5]):
                    value_since[(k, v)] = b
        for k in prev:
            if k not in cur:
                until[k] = b - 1
        # NEW's order, the removed rows after the row they followed
        merged = list(cur)
        for k in order:
            if k not in cur:
                i = order.index(k)
                after = next((order[j] for j in range(i - 1, -1, -1) if order[j] in merged), None)
                merged.insert(merged.index(after) + 1 if after else 0, k)
        order = merged
        seen.update(cur)
        prev = cur
    out = []
    for k in order:
        terms = []
        if k in since:
            terms.append('since %d' % since[k])
        if k in until:
            terms.append('until %d' % until[k])
        if k in progs_before:
            terms.append('programs<%d %s' % (progs_before[k][1], progs_before[k][0]))
        for (kk, v), b in sorted(value_since.items()):
            if kk == k:
                terms.append('value %s since %d' % (v, b))
        out.append(seen[k][:5] + ('; '.join(terms) or '-',))
    return out, first, build(new), git(repo, 'rev-parse', '--short=9', old).strip(), \
        git(repo, 'rev-parse', '--short=9', new).strip()


def main():
    if len(sys.argv) == 4:
        table, b_old, b_new, c_old, c_new = history(*sys.argv[1:4])
        what = 'upstream llama.cpp b%d (%s) to b%d (%s)' % (b_old, c_old, b_new, c_new)
    else:
        table = [r[:5] + ('-',) for r in rows(open(sys.argv[1] + '/common/arg.cpp').read()).values()]
        what = sys.argv[1]
    print("# llama.cpp's flags (common/arg.cpp, %s), made by" % what)
    print('# tools/llama_args.py. Columns: names, negated names, values taken,')
    print('# LLAMA_ARG_* variable, programs (COMMON: all of them), builds: "-"')
    print('# every supported version has it as here, else "; "-separated terms:')
    print('# "since B" (first build with it), "until B" (last build with it),')
    print('# "programs<B LIST" (its programs before build B), "value V since B"')
    print('# (a value its handler takes from build B). "-" for none.')
    print('#names\tnegated\tvalues\tenv\tprograms\tbuilds')
    for r in table:
        print('\t'.join(r))


if __name__ == '__main__':
    main()
