#!/usr/bin/env python3
"""usage: tools/readme_examples.py [--check] [README.md]

README.md's examples are real output: every line "$ COMMAND" inside a ```
block is run (from the repository root, with sh) and the lines after it, up
to the next "$ " line or the block's end, are its output (stdout, and
stderr where the command sends it there with 2>&1); a command line that
says "# not checked" (this machine's devices) is left alone. Commands run
with GGFIT_HOST_BW=default: a plan for this machine's memory then takes the
speed model's default, not what this machine measures. Without --check the
outputs are rewritten in place; with --check the script prints each example
whose output differs and exits 1 (tests/cli.sh runs it so).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    args = sys.argv[1:]
    check = '--check' in args
    args = [a for a in args if a != '--check']
    path = args[0] if args else os.path.join(ROOT, 'README.md')
    lines = open(path).read().split('\n')
    out, bad, i, in_block = [], 0, 0, False
    while i < len(lines):
        line = lines[i]
        if line.startswith('```'):
            in_block = not in_block
            out.append(line)
            i += 1
            continue
        if not in_block or not line.startswith('$ ') or '# not checked' in line:
            out.append(line)
            i += 1
            continue
        cmd = line[2:]
        j = i + 1
        while j < len(lines) and not lines[j].startswith('$ ') and not lines[j].startswith('```'):
            j += 1
        want = '\n'.join(lines[i + 1:j])
        # the speed model's default for this machine's memory, not what it
        # measures here (the same in every run)
        env = dict(os.environ, GGFIT_HOST_BW='default')
        r = subprocess.run(cmd, shell=True, cwd=ROOT, capture_output=True, text=True, env=env)
        got = r.stdout.rstrip('\n')
        if got != want:
            bad += 1
            if check:
                print('README example differs: $ ' + cmd)
        out.append(line)
        if got:
            out.extend(got.split('\n'))
        i = j
    if check:
        print('%d README examples differ' % bad if bad else 'README examples are real output')
        return 1 if bad else 0
    open(path, 'w').write('\n'.join(out))
    return 0


if __name__ == '__main__':
    sys.exit(main())
