"""The symbols an object file defines and uses, read with nm: what
tools/folder_cycles.py and tools/stages.py draw their edges from."""
import subprocess

def nm(path):
    """(defined, used): the global symbols path defines (code and data) and
    those it leaves undefined."""
    out = subprocess.run(['nm', path], capture_output=True, text=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == 'U':
            used.add(f[1])
        elif len(f) == 3 and f[1] in 'TDBRVW' and not f[2].startswith('.'):
            defined.add(f[2])
    return defined, used
