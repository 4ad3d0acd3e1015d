#!/usr/bin/env python3
"""usage: tools/llama_args.py LLAMA_SRC > data/llama_args.tsv

Lists every flag llama.cpp's programs take (common/arg.cpp at the
reference version: each add_opt(common_arg(...))) as data: its names, its
negated names, how many values it takes, its LLAMA_ARG_* variable and the
programs it belongs to. scripts/gen_llama_args.awk joins it with
data/flags.tsv (what ggfit does with each flag, and ggfit's own flags) into
the one table of flags ggfit parses with (src/common/llama_args.c): the
flags that change memory are applied, the rest recognised and noted, so
that a pasted llama-server or llama-cli command line is understood.
"""
import re
import sys


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


def main():
    src = open(sys.argv[1] + '/common/arg.cpp').read()
    print('# llama.cpp\'s flags (common/arg.cpp, unslothai/llama.cpp d32676d), made by')
    print('# tools/llama_args.py. Columns: names, negated names, values taken,')
    print('# LLAMA_ARG_* variable, programs (COMMON: all of them); "-" for none.')
    print('#names\tnegated\tvalues\tenv\tprograms')
    for call in calls(src):
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
        print('\t'.join([','.join(flags), ','.join(neg) or '-', str(values),
                         env.group(1) if env else '-', progs]))


if __name__ == '__main__':
    main()
