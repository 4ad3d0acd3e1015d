#!/usr/bin/env python3
"""usage: tools/routercmp.py [--llama DIR] [--llama-src SRC] [--ggfit BIN] [--devices N] [--dev-mib N]
                            [--preset FILE] [--order NAMES]... [--record FILE] [--log DIR] [--verbose]
       tools/routercmp.py --replay FILE [--ggfit BIN]

Checks ggfit's plan of a llama-server router (ggfit ... -- llama-server
--models-preset FILE) against the real thing: a b10587 router whose
children load their models one after the other onto RPC devices that
behave like GPUs shared by the children, each child's own fit logged.

1. N ggml-rpc-servers (CPU backend) start on spare local ports for each
   model of the preset: the GPUs. A ggml-rpc-server serves one client at a
   time (ggml-rpc.cpp: accept, serve until it disconnects, accept again),
   so children cannot share one: each section gets its own (rpc = EP,...
   in the router's copy of the preset, not --rpc on the router's line).
   Every child names its devices RPC0, RPC1, ... in that order (ggml-rpc's
   global index), and the ledger below is kept by those names: device i is
   the same GPU to every child.
2. tools/routercmp_shim.cpp is built against SRC's headers and preloaded
   into the router, which passes its environment to every child. In each
   child it makes every RPC device report $GGFIT_SHIM_DEV_MIB MiB total and
   as free that less what all live children hold on it (a ledger: one file
   per pid, kept by interposing ggml_backend_buffer_init/_free); a CPU
   rpc-server would report the machine's RAM, free == total, and the order
   would never matter. It logs each child's fit (common_fit_params: status,
   n_ctx, -ngl, -ts, number of overrides, the targets, and the free memory
   it saw) and lets the child load for real. System memory is left real:
   b10587's fit reads it only with no device (common/fit.cpp, nd == 0).
   The shim also moves the projector's target to its device's slot
   (GGFIT_SHIM_GPU_ORDER: a CPU build lists the CPU first, as
   servercmp_shim.cpp explains).
3. The preset FILE (default tests/router/real.ini; paths relative to the
   repository) is written to a temporary directory with each model,
   mmproj and model-draft path replaced by a sparse copy of the layout,
   extended to the end of its tensor data (llama.cpp refuses a
   header-only file; not to 1 TiB, as servercmp.py does: a child that
   loads maps the whole file with MAP_POPULATE, which would fill the page
   cache). A projector ggfit cannot inspect is extended to 1 TiB (clip
   reads its tensors, it does not map the file).
4. The router starts (--models-preset, --models-max 16, --models-autoload,
   LLAMA_CACHE and XDG_CONFIG_HOME/HOME empty, on a spare port; with
   --verbose also -lv 4, which every child inherits: the fit's trace and
   each buffer's size in the router's log) and each model of NAMES
   (comma-separated; default the preset's sections, sorted) is asked for
   in turn: POST /models/load {"model": X}, then GET /models until X is
   "loaded" (or failed), then the next. Once all are loaded the ledger is
   read: what each child holds on each device.
5. ggfit plans the same: build/ggfit --gpu rpc:NMiB,... --json --order NAMES
   -- llama-server --models-preset FILE --models-max 16 (FILE as given, from
   the repository root: the layouts themselves; no --rpc, which would make
   ggfit ask the rpc-servers for the machine's memory).

A row per child: its fit's n_ctx, -ngl, -ts (two or more devices) and
number of overrides, and what it held on each device (ledger) against
ggfit's pools (the child's "used" per device): "same" or "differ" with
both values, and the free memory the child's fit saw. A child that
failed to load still has its fit compared (its row says so). Exit 1 when a
decision (context, layers, split, overrides) differs; bytes that differ are
shown, not counted. Several --order give several runs, each with fresh
rpc-servers and router. --log DIR keeps each run's router log (every
child's output, prefixed with its port) as DIR/router-ORDER.log.

The ledger is what llama.cpp allocated: with -lv 4 each child's
"model/KV/compute buffer size" lines for an RPC device add up to its ledger
bytes (checked: the coder of tests/router/real.ini, first, 540.16 + 342.00
+ 30.76 = 912.92 MiB on RPC0).

--record FILE appends what the real children did, for a test to replay
against ggfit without llama.cpp (tests/router/real-b10587.txt):
    # comment lines
    run PRESET DEVICES DEV_MIB ORDER
    child K NAME load=R status=S n_ctx=C ngl=L ts=T0,T1 n_ot=O held=DEV:BYTES,... free=DEV:BYTES,...
a "run" line (the preset as given, relative to the repository; the
device count and size; the order) and then one "child" line per child in
the order asked: K from 1, R "loaded" or "failed" (the child exited:
it holds nothing; "child K NAME none" when no fit was logged), S
common_fit_params' status (0 success, 1
failure, 2 error), C the context it set, L its -ngl (-1: left at all), T its
tensor split (one entry per device), O its number of tensor overrides, held
the bytes the child held on each device (RPC0, RPC1, ...) once loaded,
free what its fit saw free on each. The ggfit line to replay it with:
ggfit --gpu rpc:DEV_MIBMiB x DEVICES --json --order ORDER -- llama-server
--models-preset PRESET --models-max 16.

--replay FILE does that, without llama.cpp (make test runs it on
tests/router/real-b10587.txt): every decision must be the recorded one,
and what each loaded child holds on each device (ggfit's JSON "holds":
a draft that no --spec-type runs is freed after loading) within 8 MiB of
the ledger. That slack is llama.cpp's: a child's real compute buffer can
be 4 MiB more than the no-alloc measurement its fit (and ggfit) takes
(seen on the output layer's device: the measurement keeps the first
reservation's size, the real context reserves three times).

DIR is the llama.cpp build directory (bin/llama-server, bin/ggml-rpc-server;
default /work/llama-b10587-build), SRC its source (default
/work/llama-src-b10587): the shim hooks b10587's common_fit_params (with
the extra model). Defaults: --devices 2, --dev-mib 2048. Every process
started here (rpc-servers, the router, its children) is ended on every way
out; all run under nice.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llamacmp import free_port  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH_KEYS = ('model', 'm', 'mmproj', 'mm', 'model-draft', 'md')
MODELS_MAX = '16'
PROCS = []      # Popen objects started here, ended in cleanup()
GROUPS = []     # the router's process group (its children are in it)
LOAD_TIMEOUT = 120
LOG_DIR = []    # --log DIR: where the router logs are kept


def nice(cmd):
    return ['nice', '-n', '10'] + cmd


def cleanup(fitdir=None):
    """Ends every process started here, each by its id: first the children
    by pid (as the shim recorded them: SIGTERM, waited for, so that they
    exit while their rpc-servers still answer), then the router's group (it
    and any child not yet fitted), then the rpc-servers; SIGKILL for any
    left after 15 s."""
    pids = []
    if fitdir and os.path.isdir(fitdir):
        pids = [int(f[:-4]) for f in os.listdir(fitdir) if f.endswith('.fit')]
    for pid in pids:   # before the router, which would SIGKILL them
        signal_pid(pid, signal.SIGTERM)
    end = time.time() + 15
    while time.time() < end and any(alive(p) for p in pids):
        time.sleep(0.2)
    for g in GROUPS:
        signal_group(g, signal.SIGTERM)
    while time.time() < end and any(p.poll() is None for p in PROCS if p.pid in GROUPS):
        time.sleep(0.2)
    for pid in pids:   # children that ignored SIGTERM
        signal_pid(pid, signal.SIGKILL)
    for g in GROUPS:
        signal_group(g, signal.SIGKILL)
    for p in PROCS:
        if p.poll() is None:
            p.terminate()
    for p in PROCS:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    GROUPS.clear()
    PROCS.clear()


def signal_group(g, sig):
    try:
        os.killpg(g, sig)
    except OSError:
        pass


def signal_pid(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def alive(pid):
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return os.path.exists('/proc/%d' % pid) and \
        open('/proc/%d/stat' % pid).read().split(') ')[-1][:1] != 'Z'


def build_shim(src, tmp):
    out = os.path.join(tmp, 'routercmp_shim.so')
    if 'common_fit_extra_model' not in open(os.path.join(src, 'common/fit.h')).read():
        sys.exit('%s: common_fit_params has no extra model: the shim needs b10584 or later' % src)
    subprocess.run(nice(['g++', '-shared', '-fPIC', '-O1', '-std=c++17',
                         '-I', os.path.join(src, 'include'), '-I', os.path.join(src, 'ggml/include'),
                         '-I', os.path.join(src, 'ggml/src'),
                         os.path.join(ROOT, 'tools/routercmp_shim.cpp'), '-o', out, '-ldl']),
                   check=True)
    return out


def start_rpc(bindir, n):
    eps = []
    for _ in range(n):
        port = free_port()
        PROCS.append(subprocess.Popen(nice([os.path.join(bindir, 'ggml-rpc-server'),
                                            '-H', '127.0.0.1', '-p', str(port)]),
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        eps.append('127.0.0.1:%d' % port)
    for ep in eps:
        wait_port(int(ep.split(':')[1]), 10)
    return eps


def wait_port(port, seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            socket.create_connection(('127.0.0.1', port), timeout=0.2).close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


# --- the preset -------------------------------------------------------------

def read_preset(path):
    """The preset's lines, and its model sections in byte order (as
    llama-server sorts them)."""
    lines = open(path).read().splitlines()
    names = []
    for l in lines:
        s = l.strip()
        if s.startswith('[') and s.endswith(']'):
            n = s[1:-1].strip()
            if n != '*' and n not in names:
                names.append(n)
    return lines, sorted(names, key=lambda n: n.encode())


def data_end(ggfit, path):
    """The bytes a layout needs to pass llama.cpp's bounds check: its
    header (the file, aligned) and the end of its last tensor, from ggfit
    inspect; None when ggfit cannot inspect it."""
    r = subprocess.run(nice([ggfit, 'inspect', '-m', path, '--json', '--tensors']),
                       capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return None
    align = j.get('alignment') or 32
    head = (os.path.getsize(path) + align - 1) // align * align
    return head + max((t['offset'] + t['bytes'] for t in j['tensors']), default=0) + (1 << 20)


def sparse_copies(lines, ggfit, tmp):
    """The preset's lines for the router: each path replaced by a sparse
    copy (one per section and key, so that each child's model path is its
    own), and which section each copy is."""
    out, section = [], 'default'
    copies = {}
    for l in lines:
        s = l.strip()
        if s.startswith('[') and s.endswith(']'):
            section = s[1:-1].strip()
        key, eq, val = l.partition('=')
        if eq and key.strip() in PATH_KEYS:
            src = os.path.join(ROOT, val.split(';')[0].split('#')[0].strip())
            dst = os.path.join(tmp, 'models', '%s.%s.%s' % (section.replace('/', '_'),
                                                            key.strip(), os.path.basename(src)))
            shutil.copyfile(src, dst)
            os.truncate(dst, data_end(ggfit, src) or (1 << 40))
            copies[dst] = section
            l = '%s = %s' % (key.strip(), dst)
        out.append(l)
    return out, copies


def write_preset(lines, eps, tmp):
    """The router's preset: each model section given its own rpc-servers
    (rpc = EP,...), since a ggml-rpc-server serves one client at a time."""
    out = []
    for l in lines:
        out.append(l)
        s = l.strip()
        if s.startswith('[') and s.endswith(']') and s[1:-1].strip() in eps:
            out.append('rpc = %s' % ','.join(eps[s[1:-1].strip()]))
    path = os.path.join(tmp, 'preset.ini')
    open(path, 'w').write('\n'.join(out) + '\n')
    return path


# --- the router ---------------------------------------------------------------

def http(port, method, path, body=None):
    req = urllib.request.Request('http://127.0.0.1:%d%s' % (port, path), method=method,
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={'Content-Type': 'application/json'})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read() or b'null')
    except urllib.error.HTTPError as e:
        return {'http_error': e.code, 'body': e.read().decode(errors='replace')}


def model_status(port, name):
    for m in (http(port, 'GET', '/models') or {}).get('data', []):
        if m.get('id') == name:
            return m.get('status', {})
    return {}


def load_in_turn(port, order, verbose):
    """Asks for each model after the one before has loaded; the status each
    ended in."""
    done = {}
    for name in order:
        r = http(port, 'POST', '/models/load', {'model': name})
        if verbose:
            print('load %s: %s' % (name, r))
        end = time.time() + LOAD_TIMEOUT
        st = {}
        while time.time() < end:
            st = model_status(port, name)
            if st.get('value') == 'loaded' or st.get('failed'):
                break
            time.sleep(0.3)
        done[name] = 'loaded' if st.get('value') == 'loaded' else \
            'failed (exit %s)' % st.get('exit_code') if st.get('failed') else \
            'timed out (%s)' % st.get('value')
        if verbose:
            print('  %s: %s' % (name, done[name]))
    return done


def read_ledger(ledger):
    """Bytes per device per live pid."""
    held = {}
    for f in os.listdir(ledger):
        if not f.isdigit():
            continue
        try:
            os.kill(int(f), 0)
        except OSError:
            continue
        rows = {}
        for line in open(os.path.join(ledger, f)).read().splitlines():
            dev, b = line.split()
            rows[dev] = int(b)
        held[int(f)] = rows
    return held


def read_fits(fitdir, copies):
    """Each child's fit, by model name: the shim's lines."""
    fits = {}
    for f in os.listdir(fitdir):
        if not f.endswith('.fit'):
            continue
        fit = {'pid': int(f[:-4]), 'free': {}}
        for line in open(os.path.join(fitdir, f)).read().splitlines():
            w = line.split()
            if w[0] == 'ggfit-model':
                fit['name'] = copies.get(w[1], w[1])
            elif w[0] == 'ggfit-free':
                fit['free'][w[1]] = int(w[2])
            elif w[0] == 'ggfit-fit':
                fit.update(status=int(w[1]), n_ctx=int(w[2]), ngl=int(w[3]),
                           ts=[float(x) for x in w[4].split(',')], n_ot=int(w[5]))
            elif w[0] == 'ggfit-margins':
                fit['margins'] = [int(x) for x in w[1:]]
        if 'name' in fit:
            fits[fit['name']] = fit
    return fits


def dev_names(names):
    """Device names as ggfit's: a child's RPC devices are RPC0, RPC1, ... in
    its --rpc order (ggml-rpc.cpp: a global index, RPC%d), the same
    names in every child, each child with its own rpc-servers."""
    return {n: n.split('[')[0] for n in names}


def run_router(bindir, shim, preset, copies, dev_mib, order, tmp, verbose):
    """The real children: their fits and what each held, in order."""
    ledger = os.path.join(tmp, 'ledger')
    fitdir = os.path.join(tmp, 'fits')
    for d in (ledger, fitdir, os.path.join(tmp, 'cache'), os.path.join(tmp, 'home')):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    port = free_port()
    env = dict(os.environ, LD_PRELOAD=shim, LD_LIBRARY_PATH=bindir,
               GGFIT_SHIM_LEDGER=ledger, GGFIT_SHIM_FITDIR=fitdir,
               GGFIT_SHIM_DEV_MIB=str(dev_mib), GGFIT_SHIM_GPU_ORDER='1',
               LLAMA_CACHE=os.path.join(tmp, 'cache'), HOME=os.path.join(tmp, 'home'),
               XDG_CONFIG_HOME=os.path.join(tmp, 'home'))
    env = {k: v for k, v in env.items() if not k.startswith('LLAMA_ARG_')}
    log = open(os.path.join(tmp, 'router.log'), 'w')
    cmd = nice([os.path.join(bindir, 'llama-server'), '--models-preset', preset,
                '--models-max', MODELS_MAX, '--models-autoload'] + (['-lv', '4'] if verbose else []) + [
                '--host', '127.0.0.1', '--port', str(port)])
    router = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True, cwd=tmp)
    PROCS.append(router)
    GROUPS.append(router.pid)
    try:
        if not wait_port(port, 30):
            sys.exit('the router did not listen: see %s' % log.name)
        kids = []
        done = load_in_turn(port, order, verbose)
        fits = read_fits(fitdir, copies)
        for name in order:   # what each held once all were loaded
            fit = fits.get(name)
            kids.append({'name': name, 'done': done[name], 'fit': fit})
        held = read_ledger(ledger)
        for k in kids:
            if k['fit']:
                k['held'] = held.get(k['fit']['pid'], {})
        return kids
    finally:
        cleanup(fitdir)
        log.close()
        if LOG_DIR:
            shutil.copyfile(log.name, os.path.join(LOG_DIR[0], 'router-%s.log' % '-'.join(order)))


# --- ggfit and the comparison -------------------------------------------------

def ggfit_plan(ggfit, preset_rel, n_dev, dev_mib, order):
    gpu = ','.join(['rpc:%dMiB' % dev_mib] * n_dev)
    cmd = [ggfit, '--gpu', gpu, '--json', '--order', ','.join(order), '--', 'llama-server',
           '--models-preset', preset_rel, '--models-max', MODELS_MAX]
    r = subprocess.run(nice(cmd), capture_output=True, text=True, cwd=ROOT)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        sys.exit('ggfit: %s' % r.stderr.strip())
    out = {}
    for c in j['children']:
        p = c.get('plan')
        if not p:
            out[c['name']] = {'error': c.get('error')}
            continue
        words = (p.get('args') or '').split()
        n_ctx = int(words[words.index('-c') + 1]) if '-c' in words else p['n_ctx']
        # what the child holds once loaded (a draft no --spec-type runs
        # freed again), else the verdict's pools
        pools = {k: v for k, v in (c.get('holds') or {}).items() if k != 'Host'} or \
            {q['name']: q['used'] for q in p['verdict']['pools'] if q['kind'] == 'device'}
        out[c['name']] = {'n_ctx': n_ctx, 'ngl': p['n_gpu_layers'],
                          'ts': [float(x) for x in (p.get('tensor_split') or [])],
                          'n_ot': len(p.get('overrides') or []), 'held': pools,
                          'free': {q['name']: q['free'] for q in p['verdict']['pools']
                                   if q['kind'] == 'device'},
                          'status': p['verdict']['status'], 'args': p.get('args')}
    return out, ' '.join(cmd[:1] + ['--gpu', gpu, '--json', '--order', ','.join(order), '--']
                         + cmd[8:])


def mib(b):
    return '%.2f' % (b / 2**20)


def fmt_ts(ts, n):
    ts = (list(ts) + [0.0] * n)[:n]
    return ','.join('%g' % x for x in ts)


HELD_SLACK = 8 << 20   # see the docstring: the real compute buffers' last reserve


def compare(kids, plans, n_dev, verbose, held_slack=None):
    """Prints a row per child; the number of decisions that differ (and,
    with held_slack, of children whose held bytes differ by more)."""
    n_diff = 0
    for k, kid in enumerate(kids, 1):
        name, fit, plan = kid['name'], kid['fit'], plans.get(kid['name'], {})
        if not fit or 'n_ctx' not in fit:
            print('%d %s: llama-server: no fit logged (%s); ggfit: %s' % (
                k, name, kid['done'], plan.get('status') or plan.get('error')))
            n_diff += 1
            continue
        if 'error' in plan:
            print('%d %s: ggfit cannot plan it: %s' % (k, name, plan['error']))
            n_diff += 1
            continue
        names = dev_names(list(fit['free']) + list(kid.get('held', {})))
        rows = [('n_ctx', fit['n_ctx'], plan['n_ctx'], fit['n_ctx'] == plan['n_ctx']),
                ('ngl', fit['ngl'], plan['ngl'],
                 fit['ngl'] == plan['ngl'] or (fit['ngl'] < 0 and plan['ngl'] >= 999)),
                ('n_ot', fit['n_ot'], plan['n_ot'], fit['n_ot'] == plan['n_ot'])]
        if n_dev > 1:
            a, b = fit['ts'][:n_dev], (plan['ts'] + [0.0] * n_dev)[:n_dev]
            same_ts = all(abs(x - y) < 1e-3 for x, y in zip(a, b)) or \
                (not any(a) and fit['ngl'] < 0)
            rows.append(('ts', fmt_ts(a, n_dev), fmt_ts(b, n_dev), same_ts))
        bad = [r for r in rows if not r[3]]
        n_diff += bool(bad)
        print('%d %s (%s): %s' % (k, name, kid['done'], 'same' if not bad else 'DIFFER'))
        for field, want, got, same in rows:
            print('    %-6s llama-server %-12s ggfit %-12s %s' % (field, want, got,
                                                              '' if same else 'differs'))
        held = {names[d]: b for d, b in kid.get('held', {}).items()}
        held_off = False
        for i in range(n_dev):
            d = 'RPC%d' % i
            w, g = held.get(d, 0), plan['held'].get(d, 0)
            off = held_slack is not None and kid['done'] == 'loaded' and abs(g - w) > held_slack
            held_off |= off
            print('    %-6s held llama-server %s MiB, ggfit %s MiB%s%s' % (
                d, mib(w), mib(g), '' if w == g else '  (ggfit %+d B)' % (g - w),
                '  more than %d MiB apart' % (held_slack >> 20) if off else ''))
        n_diff += held_off and not bad
        free = {names[d]: b for d, b in fit['free'].items()}
        print('    free seen: llama-server %s; ggfit %s' % (
            ', '.join('%s %s' % (d, mib(free[d])) for d in sorted(free)),
            ', '.join('%s %s' % (d, mib(b)) for d, b in sorted(plan['free'].items()))))
        if verbose:
            print('    margins (MiB): %s; ggfit args: %s' % (
                [mib(m) for m in fit['margins'][:n_dev]], plan['args']))
    return n_diff


def record_lines(preset_rel, n_dev, dev_mib, order, kids):
    out = ['run %s %d %d %s' % (preset_rel, n_dev, dev_mib, ','.join(order))]
    for k, kid in enumerate(kids, 1):
        fit = kid['fit']
        if not fit or 'n_ctx' not in fit:
            out.append('child %d %s none' % (k, kid['name']))
            continue
        names = dev_names(list(fit['free']) + list(kid.get('held', {})))
        held = {names[d]: b for d, b in kid.get('held', {}).items()}
        free = {names[d]: b for d, b in fit['free'].items()}
        devs = ['RPC%d' % i for i in range(n_dev)]
        out.append('child %d %s load=%s status=%d n_ctx=%d ngl=%d ts=%s n_ot=%d held=%s free=%s' % (
            k, kid['name'], 'loaded' if kid['done'] == 'loaded' else 'failed', fit['status'], fit['n_ctx'], fit['ngl'], fmt_ts(fit['ts'], n_dev),
            fit['n_ot'], ','.join('%s:%d' % (d, held.get(d, 0)) for d in devs),
            ','.join('%s:%d' % (d, free.get(d, 0)) for d in devs)))
    return out


def replay(path, ggfit):
    """The recorded runs of path against ggfit, without llama.cpp."""
    runs, n_diff = [], 0
    for line in open(path):
        w = line.split()
        if not w or w[0].startswith('#'):
            continue
        if w[0] == 'run':
            runs.append((w[1], int(w[2]), int(w[3]), w[4].split(','), []))
            continue
        if w[0] != 'child' or not runs:
            sys.exit('%s: not a record line: %s' % (path, line.strip()))
        kid = {'name': w[2], 'fit': None, 'done': 'none'}
        if w[3] != 'none':
            f = dict(x.split('=', 1) for x in w[3:])
            pairs = lambda s: {d: int(b) for d, b in (x.split(':') for x in s.split(','))}
            kid['done'] = f['load']
            kid['held'] = pairs(f['held']) if f['load'] == 'loaded' else {}
            kid['fit'] = {'status': int(f['status']), 'n_ctx': int(f['n_ctx']),
                          'ngl': int(f['ngl']), 'n_ot': int(f['n_ot']),
                          'ts': [float(x) for x in f['ts'].split(',')],
                          'free': pairs(f['free']), 'margins': []}
        runs[-1][4].append(kid)
    for preset_rel, n_dev, dev_mib, order, kids in runs:
        plans, cmd = ggfit_plan(ggfit, preset_rel, n_dev, dev_mib, order)
        print('order %s, %d x %d MiB, recorded (%s)' % (','.join(order), n_dev, dev_mib, cmd))
        n_diff += compare(kids, plans, n_dev, False, HELD_SLACK)
    print('%d child%s differ%s from the recorded router' % (
        n_diff, '' if n_diff == 1 else 'ren', 's' if n_diff == 1 else ''))
    return 1 if n_diff else 0


def main():
    args = sys.argv[1:]
    if args[:1] == ['--replay'] and len(args) in (2, 4):
        ggfit = args[3] if len(args) == 4 and args[2] == '--ggfit' else \
            os.path.join(ROOT, 'build/ggfit')
        return replay(args[1], ggfit)
    llama, src = '/work/llama-b10587-build', '/work/llama-src-b10587'
    ggfit = os.path.join(ROOT, 'build/ggfit')
    n_dev, dev_mib, preset_rel = 2, 2048, 'tests/router/real.ini'
    orders, record, verbose = [], None, False
    while args:
        a = args.pop(0)
        if a in ('-h', '--help'):
            print(__doc__)
            return 0
        if a == '--verbose':
            verbose = True
            continue
        if not args:
            print(__doc__)
            return 2
        v = args.pop(0)
        if a == '--llama':
            llama = v
        elif a == '--llama-src':
            src = v
        elif a == '--ggfit':
            ggfit = v
        elif a == '--devices':
            n_dev = int(v)
        elif a == '--dev-mib':
            dev_mib = int(v)
        elif a == '--preset':
            preset_rel = os.path.relpath(os.path.abspath(v), ROOT)
        elif a == '--order':
            orders.append(v.split(','))
        elif a == '--record':
            record = v
        elif a == '--log':
            LOG_DIR[:] = [os.path.abspath(v)]
        else:
            print(__doc__)
            return 2
    bindir = os.path.join(llama, 'bin')
    lines, names = read_preset(os.path.join(ROOT, preset_rel))
    orders = orders or [names]
    for o in orders:
        for n in o:
            if n not in names:
                sys.exit('--order: %s is not a model of %s (%s)' % (n, preset_rel, ','.join(names)))
    tmp = tempfile.mkdtemp(prefix='routercmp-')
    os.makedirs(os.path.join(tmp, 'models'))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rec = ['# tools/routercmp.py: llama.cpp %s, llama-server router, RPC devices with a '
           'shared ledger (format: the tool\'s docstring)' % os.path.basename(llama.rstrip('/'))]
    n_diff = 0
    try:
        shim = build_shim(src, tmp)
        sparse, copies = sparse_copies(lines, ggfit, tmp)
        for order in orders:
            eps = {n: start_rpc(bindir, n_dev) for n in names}
            preset = write_preset(sparse, eps, tmp)
            try:
                kids = run_router(bindir, shim, preset, copies, dev_mib, order, tmp, verbose)
            finally:
                cleanup()
            plans, line = ggfit_plan(ggfit, preset_rel, n_dev, dev_mib, order)
            print('order %s, %d x %d MiB (%s)' % (','.join(order), n_dev, dev_mib, line))
            n_diff += compare(kids, plans, n_dev, verbose)
            rec += record_lines(preset_rel, n_dev, dev_mib, order, kids)
    finally:
        cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    if record:   # appended: one file holds the runs of several presets
        if os.path.exists(record) and os.path.getsize(record):
            rec = rec[1:]
        open(record, 'a').write('\n'.join(rec) + '\n')
    print('%d child%s with a decision that differs' % (n_diff, '' if n_diff == 1 else 'ren'))
    return 1 if n_diff else 0


if __name__ == '__main__':
    sys.exit(main())
