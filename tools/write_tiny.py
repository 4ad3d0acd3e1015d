#!/usr/bin/env python3
"""usage: tools/write_tiny.py [BUILD_DIR]

Writes data/tiny/ again from the tests' specs: runs every test program
whose source writes headers (tests/test_*.c that call project_all or
gw_dump; BUILD_DIR default build) with GGFIT_ARCHS_DUMP and
GGFIT_MTMD_DUMP set to a fresh folder, copies what they write to
data/tiny/, and lists the files of data/tiny/ no spec writes any more
(remove them and their records from data/oracle/). Then record llama.cpp's
figures for the files it names as new or changed (tools/llamacmp.py,
tools/mtmdcmp.py: CONTRIBUTING.md). test_tiny fails until data/tiny/ is
what this writes.
"""
import filecmp
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def writers():
    for src in sorted(glob.glob(os.path.join(ROOT, 'tests', 'test_*.c'))):
        name = os.path.basename(src)[:-2]
        with open(src) as f:
            text = f.read()
        if name != 'test_tiny' and ('project_all(' in text or 'gw_dump(' in text):
            yield name


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build')
    tiny = os.path.join(ROOT, 'data', 'tiny')
    written = {}
    with tempfile.TemporaryDirectory(prefix='ggfit-tiny-') as work:
        for prog in writers():
            out = os.path.join(work, prog)
            os.mkdir(out)
            env = dict(os.environ, GGFIT_ARCHS_DUMP=out, GGFIT_MTMD_DUMP=out,
                       GGFIT_TINY='/nonexistent', GGFIT_HOST_BW='default')
            run = subprocess.run([os.path.join(build, 'tests', prog)], cwd=ROOT, env=env,
                                 capture_output=True, text=True)
            if run.returncode:
                sys.exit(f'{prog} fails: fix it first (its files after a failure are '
                         f'numbered wrongly)\n{run.stdout[-3000:]}{run.stderr[-3000:]}')
            specs = os.path.join(out, 'SPECS')
            for line in open(specs) if os.path.exists(specs) else []:
                file, where = line.rstrip('\n').split('\t', 1)
                if file in written:
                    sys.exit(f'{file} is written twice: {written[file][1]} and {where}')
                written[file] = (os.path.join(out, file), where)
        for file, (path, where) in sorted(written.items()):
            dest = os.path.join(tiny, file)
            if not os.path.exists(dest):
                print(f'new      {file}  ({where})')
            elif not filecmp.cmp(path, dest, shallow=False):
                print(f'changed  {file}  ({where})')
            else:
                continue
            shutil.copyfile(path, dest)
    for file in sorted(os.listdir(tiny)):
        if file not in written:
            print(f'unwritten {file}: no spec writes it')


if __name__ == '__main__':
    main()
