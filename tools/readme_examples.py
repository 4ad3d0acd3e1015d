#!/usr/bin/env python3
"""usage: tools/readme_examples.py [--check | --links] [FILE.md...]

README.md's and docs/*.md's examples are real output (without FILE.md,
README.md and every docs/*.md are read): every line "$ COMMAND" inside a ```
block is run (from the repository root, with sh) and the lines after it, up
to the next "$ " line or the block's end, are its output (stdout, and
stderr where the command sends it there with 2>&1); a command line that
says "# not checked" (this machine's devices) is left alone. Commands run
with GGFIT_HOST_BW=default: a plan for this machine's memory then takes the
speed model's default, not what this machine measures. Without --check the
outputs are rewritten in place; with --check the script prints each example
whose output differs and exits 1 (tests/cli.sh runs it so).

Every relative link of those files, [text](PATH) or [text](PATH#ANCHOR) outside
code, must name an existing file, and an anchor a heading of the Markdown
file it names (as GitHub makes anchors from headings); a broken link is
printed and fails the script with or without --check; --links checks the
links alone, running nothing (for a build other than ./build/ggfit).
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

LINK = re.compile(r'!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)')
CODE_SPAN = re.compile(r'`[^`]*`')


def prose(lines):
    """The lines outside ``` blocks, inline code removed, with their numbers."""
    in_block = False
    for n, line in enumerate(lines, 1):
        if line.startswith('```'):
            in_block = not in_block
        elif not in_block:
            yield n, CODE_SPAN.sub('', line)


def anchors(path):
    """The anchors GitHub gives the headings of a Markdown file."""
    seen, out = {}, set()
    for _, line in prose(open(path).read().split('\n')):
        m = re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
        if not m:
            continue
        slug = re.sub(r'[^\w\- ]', '', m.group(1).lower()).replace(' ', '-')
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else '%s-%d' % (slug, n))
    return out


def bad_links(path, lines):
    """The relative links of a file that name no file or no heading."""
    bad = []
    for n, line in prose(lines):
        for target in LINK.findall(line):
            if re.match(r'^[a-z][a-z0-9+.-]*:', target):   # http:, https:, mailto:
                continue
            file, _, anchor = target.partition('#')
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                bad.append('%s:%d: %s: no such file' % (os.path.relpath(path, ROOT), n, target))
            elif anchor and dest.endswith('.md') and anchor not in anchors(dest):
                bad.append('%s:%d: %s: no such heading' % (os.path.relpath(path, ROOT), n, target))
    return bad


def examples(path, lines, check):
    """Runs the file's examples; returns the file's lines with their output,
    and how many differed."""
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
                print('%s: example differs: $ %s' % (os.path.relpath(path, ROOT), cmd))
        out.append(line)
        if got:
            out.extend(got.split('\n'))
        i = j
    return out, bad


def main():
    args = sys.argv[1:]
    check = '--check' in args
    links_only = '--links' in args
    paths = [os.path.abspath(a) for a in args if a not in ('--check', '--links')]
    if not paths:
        paths = [os.path.join(ROOT, 'README.md')] + sorted(glob.glob(os.path.join(ROOT, 'docs', '*.md')))
    differ, links = 0, []
    for path in paths:
        lines = open(path).read().split('\n')
        links += bad_links(path, lines)
        if links_only:
            continue
        out, bad = examples(path, lines, check)
        differ += bad
        if not check and out != lines:
            open(path, 'w').write('\n'.join(out))
    for b in links:
        print('broken link: ' + b)
    if check and differ:
        print('%d README examples differ' % differ)
    if links:
        print('%d links broken' % len(links))
    if (check and differ) or links:
        return 1
    if links_only:
        print('every link resolves')
    if check:
        print('README examples are real output, and every link resolves')
    return 0


if __name__ == '__main__':
    sys.exit(main())
