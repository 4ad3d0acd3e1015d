#!/usr/bin/env python3
"""usage: tools/readme_archs.py [GGFIT]

Replaces docs/architectures.md's table of architectures (between the markers
"<!-- ggfit archs --markdown -->" and "<!-- end of ggfit archs -->") with
the output of `GGFIT archs --markdown` (default build/ggfit): run it after
adding an architecture; tests/cli.sh fails while the two differ.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BEGIN, END = '<!-- ggfit archs --markdown -->\n', '<!-- end of ggfit archs -->'


def main():
    ggfit = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build/ggfit')
    table = subprocess.run([ggfit, 'archs', '--markdown'], capture_output=True, text=True,
                           check=True).stdout
    path = os.path.join(ROOT, 'docs', 'architectures.md')
    text = open(path).read()
    i, j = text.index(BEGIN) + len(BEGIN), text.index(END)
    if text[i:j] != table:
        with open(path, 'w') as f:
            f.write(text[:i] + table + text[j:])
        print('docs/architectures.md: table of architectures updated')
    return 0


if __name__ == '__main__':
    sys.exit(main())
