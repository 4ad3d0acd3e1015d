#!/usr/bin/env python3
"""usage: tools/servercmp.py --llama DIR [--llama-src SRC] [--llama-version V] [--ggfit BIN] [--devices N]
                            [--flags "..."]... [--fit-mib N] [--record FILE] [--verbose]
                            [--draft FILE] [--mtp] [--rows draft|target] MODEL...

Compares ggfit --for server with llama-server's own fit, byte for byte:
llama-server's rules (-np auto = 4 slots and -kvu, n_outputs_max one per
slot, -b cut to -ub with embeddings) and the flags only llama-server takes:
--embedding (--embeddings), --rerank (--reranking) and --pooling
{none,mean,cls,last,rank}. llama-fit-params refuses those (common/arg.cpp
lists them for the server alone) and plans with its own rules, so
tools/llamacmp.py cannot check them.

--fit-mib N compares the fit decisions instead: the shim makes every
device but the CPU report N MiB free and total to llama-server (the
rpc-servers would report this machine's memory), lets the fit run and
prints what common_fit_params chose (context, -ngl, -ts, overrides); ggfit
plans the same flags with --gpu rpc:NMiB,... --for server (its host limit:
this machine's memory, as llama-server's). A row is printed for each case
where the context or the layers differ.

DIR is a llama.cpp build directory holding bin/llama-server and
bin/ggml-rpc-server; SRC the llama.cpp source it was built from (default
/work/llama-src), whose headers build tools/servercmp_shim.cpp. llama-server
fits its flags before it loads the model, and the fit first measures the
flags as given (common_get_device_memory_data_impl ->
llama_get_memory_breakdown, on a context made with no_alloc), but logs that
only in MiB. The shim, preloaded into llama-server, prints that measurement
in bytes (devices of the model, then Host, as common_fit_print does) and
exits, so the model is never loaded and no port is held for long. Each model
runs from a sparse copy extended to 1 TiB (llama.cpp refuses a header-only
file).

For each model, flag set and 0 to N RPC devices (rpc-servers on the CPU
backend, started here), it runs
    LD_PRELOAD=shim.so llama-server -m MODEL [--rpc EP,...] FLAGS --port P
    build/ggfit -m MODEL --gpu rpc:81920MiB,...|none FLAGS' -fitp on --json
where FLAGS' is FLAGS plus "--for server": ggfit then plans as llama-server
(ggfit_params_server: default -np auto, which llama-server turns into 4
sequences and a unified cache, tools/server/server.cpp; the graph reserved
for one output per slot), while ggfit's default is llama-fit-params'.
It prints every row where model, context or compute bytes differ and ends
with "N same, M differ"; the exit status is 1 when any differ. A case where
llama-server fails (an assert in its graph, a draft model that needs a
target) while ggfit says its compute buffers are estimated (it has no graph
for it either) is counted apart, not compared (--verbose lists them).

Without embeddings llama-server reserves fewer outputs than
llama-fit-params (server-context.cpp server_n_outputs_max: one per
sequence, unless --embedding or a --pooling other than none is given):
--for server does the same, and the default flag sets have both kinds.

--draft FILE adds a draft model (-md FILE, a sparse copy for llama-server)
to every case. llama-server measures the draft before its fit
(server-context.cpp load_model: common_get_device_memory_data on
common_base_params_to_speculative's params), so the shim's first
measurement is the draft's: the rows compared are then the draft's
(ggfit's JSON "draft"). With --fit-mib the fit with the draft's bytes in
the targets is compared; the shim shifts the targets back one slot
(GGFIT_SHIM_GPU_ORDER: a CPU build lists the CPU first, so llama-server
adds RPC device i's bytes at slot i + 1) so that llama-server plans as on
a GPU machine, as ggfit does, and each case also prints both fits'
targets in MiB.

--mtp adds --spec-type draft-mtp to every flag set: llama-server then
measures an MTP context on the target first (context and compute: the
weights are the target's, loaded with load_mtp), compared with ggfit's
JSON "draft" (its "mtp" true). --rows target compares the target's own
rows instead, with a draft or an MTP context present (the shim lets the
first measurement pass, GGFIT_SHIM_SKIP=2: its breakdown and its print,
and prints the fit's): the target's n_outputs_max with the draft tokens (--spec-type, --spec-draft-
n-max) and its NextN weights with load_mtp. -devd and the other
speculative flags go in --flags.

--llama-version V is passed to ggfit (the rules it answers with; default
ggfit's newest). A llama.cpp from b10584 on (its common/fit.h declares
common_fit_extra_model) fits the draft or MTP context beside the model,
measured after the model (after two measurements of it when the fit
resolves an unset context for several KV streams: -np N without -kvu);
the shim is built for that signature, and the draft's rows are taken from
that later measurement.

--cases FILE replays the llama-server cases recorded in FILE (lines whose
args hold --for server or flags llama-server alone takes, --embedding,
--rerank, --pooling: rows, "rows_of" draft/target cases of
data/oracle/*/spec.jsonl, "fit_mib" fits of server_fit.jsonl), each model
looked up in --models DIR[:DIR...] (default data/tiny:data/models:data/real):
the way one version's records are run against another llama-server; with
--record the new llama-server's lines are appended, in the same form.

--record FILE appends llama-server's rows of every case, one JSON object a
line ({"model", "devices", "args", "rows", "tool": "llama-server"}), args
being FLAGS' (what ggfit replays): tests/test_oracle.c holds ggfit to them.
With --draft or --mtp each line also says whose rows they are ("rows_of":
"draft" or "target"); record those in data/oracle/b10309/spec.jsonl, which
tests/test_spec.c replays as whole plans (the speculative flags are not
llama-fit-params' flags that test_oracle.c parses).
With --fit-mib it appends llama-server's fit instead ({"model", "devices",
"fit_mib", "args", "fit": {"n_ctx", "ngl", "ts", "n_ot"}}; not with a draft,
a projector or MTP): data/oracle/b10309/server_fit.jsonl, which
tests/test_oracle_fit.c holds ggfit to.

--mmproj FILE (with --fit-mib) adds a multimodal projector (-mm FILE, a
sparse copy for llama-server) to every case: llama-server measures it
before its fit (server-context.cpp load_model: mtmd_get_memory_usage) and
adds its bytes per device to the targets, shifted as for a draft (the shim
shifts them back, GGFIT_SHIM_GPU_ORDER); ggfit plans with --for server
--mmproj FILE. tools/mtmdcmp.py compares the projector's bytes themselves.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llamacmp import free_port, start_servers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_FLAGS = [
    '-c 4096 --embedding', '-c 4096 --embedding --pooling none',
    '-c 4096 --embedding --pooling mean', '-c 4096 --embedding --pooling cls',
    '-c 4096 --embedding --pooling last', '-c 4096 --rerank', '-c 4096 --embedding -np 1',
    '-c 4096 --embedding -fa off', '-c 4096 --embedding --pooling mean -ub 64 -np 2',
    '-c 4096 --pooling mean', '-c 4096', '-c 4096 -np 1', '-c 4096 -np 2', '-c 4096 -fa off',
    '-c 4096 -ub 64', '-c 4096 -b 256 -ub 256 -np 8',
]


VERSION = []      # ['--llama-version', V] when given: the rules ggfit answers with
FIT_EXTRA = []    # [True] when the llama.cpp fits the draft as its extra model


def has_fit_extra(src):
    """Whether the source's fit takes an extra model (b10584, 2fb989b9e:
    common_fit_params' signature, and the draft fitted beside the model,
    measured after the model's first measurement)."""
    try:
        return 'common_fit_extra_model' in open(os.path.join(src, 'common/fit.h')).read()
    except OSError:
        return False


def build_shim(src, tmp):
    out = os.path.join(tmp, 'servercmp_shim.so')
    cmd = ['g++', '-shared', '-fPIC', '-O1', '-std=c++17',
           '-I', os.path.join(src, 'include'), '-I', os.path.join(src, 'ggml/include'),
           '-I', os.path.join(src, 'src')]
    if has_fit_extra(src):
        cmd.append('-DGGFIT_SHIM_FIT_EXTRA')
    cmd += [os.path.join(ROOT, 'tools/servercmp_shim.cpp'), '-o', out, '-ldl']
    subprocess.run(cmd, check=True)
    return out


def streams_resolved(flags):
    """Whether the fit measures the model twice before the extra model
    (b10584): the context unset (or -c 0) with several KV streams (-np N,
    no -kvu), which the fit resolves to n_ctx_train x N and measures again."""
    w = flags.split()
    def val(*names):
        for i, a in enumerate(w):
            if a in names and i + 1 < len(w):
                return w[i + 1]
        return None
    np_ = val('-np', '--parallel')
    ctx = val('-c', '--ctx-size')
    unified = any(a in ('-kvu', '--kv-unified') for a in w)
    return np_ is not None and int(np_) > 1 and not unified and (ctx is None or int(ctx) == 0)


def run_server(bindir, shim, model, eps, flags, fit_mib=None, gpu_order=False, skip=0):
    """llama-server under the shim; the lines it wrote, or None and why."""
    cmd = [os.path.join(bindir, 'llama-server'), '-m', model]
    if eps:
        cmd += ['--rpc', ','.join(eps)]
    cmd += flags.split() + ['--host', '127.0.0.1', '--port', str(free_port())]
    out = os.path.join(os.path.dirname(shim), 'rows.txt')
    if os.path.exists(out):
        os.remove(out)
    env = dict(os.environ, LD_PRELOAD=shim, GGFIT_SHIM_OUT=out)
    if fit_mib is not None:
        env.update(GGFIT_SHIM_FIT='1', GGFIT_SHIM_DEV_MIB=str(fit_mib))
    if gpu_order:
        env.update(GGFIT_SHIM_GPU_ORDER='1')
    if skip:
        env.update(GGFIT_SHIM_SKIP=str(skip))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    except subprocess.TimeoutExpired:
        return None, ['llama-server did not measure within 300 s']
    lines = open(out).read().splitlines() if os.path.exists(out) else []
    if not lines:
        return None, r.stderr.strip().splitlines()[-3:]
    return lines, None


SERVER_MARGINS = []
MMPROJ = []   # --mmproj: the file, then its sparse copy


def server_fit(bindir, shim, model, eps, flags, fit_mib, gpu_order=False):
    """llama-server's fit: (n_ctx, n_gpu_layers, tensor split, overrides)."""
    lines, err = run_server(bindir, shim, model, eps, flags, fit_mib, gpu_order)
    for line in lines or []:
        if line.startswith('ggfit-margins'):
            SERVER_MARGINS[:] = [int(x) for x in line.split()[1:]][:len(eps)]
    for line in lines or []:
        parts = line.split()
        if len(parts) == 6 and parts[0] == 'ggfit-fit':
            ts = [float(x) for x in parts[4].split(',')][:len(eps)]
            return (int(parts[2]), int(parts[3]), ts, int(parts[5])), None
    return None, err or lines


GGFIT_MARGINS = []


def ggfit_fit(ggfit, model, n_dev, flags, fit_mib):
    gpu = ','.join(['rpc:%dMiB' % fit_mib] * n_dev) if n_dev else 'none'
    cmd = [ggfit, '-m', model, '--gpu', gpu] + flags.split() + VERSION + ['--json']
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return None, r.stderr.strip().splitlines()[-3:]
    ts = [float(x) for x in (j.get('tensor_split') or [])][:n_dev]
    GGFIT_MARGINS[:] = [p['margin'] for p in j['verdict']['pools'] if p['kind'] == 'device']
    # with a draft the margins are 1024 MiB + the draft's bytes per device
    # (before b10584; from it the fit measures the draft itself)
    if j.get('draft') and not FIT_EXTRA:   # at the target's index of each draft device (-devd)
        names = [d['name'] for d in j['devices']]
        for d in j['draft']['projection']['devices']:
            i = names.index(d['name']) if d['name'] in names else len(GGFIT_MARGINS)
            if i < len(GGFIT_MARGINS):
                own = 0 if j['draft'].get('mtp') else d['model']   # MTP: the target's
                GGFIT_MARGINS[i] += own + d['context'] + d['compute']
    if j.get('mmproj'):   # and the projector's
        for i, d in enumerate(j['mmproj']['devices']):
            if i < len(GGFIT_MARGINS):
                GGFIT_MARGINS[i] += d['bytes']
    # the context as the fit leaves it in cparams (llama-fit-params' -c: 0 is
    # the trained context, left as asked)
    words = (j.get('args') or '').split()
    n_ctx = int(words[words.index('-c') + 1]) if '-c' in words else j['n_ctx']
    return (n_ctx, j['n_gpu_layers'], ts, len(j.get('overrides') or [])), None


def server_rows(bindir, shim, model, eps, flags, skip=0):
    lines, err = run_server(bindir, shim, model, eps, flags, skip=skip)
    if lines is None:
        return None, err
    rows = []
    for line in lines:
        parts = line.split()
        if len(parts) == 5 and parts[0] == 'ggfit-shim' and all(p.isdigit() for p in parts[2:]):
            rows.append((parts[1], [int(p) for p in parts[2:]]))
    if not rows:
        return None, lines[-3:]
    return rows, None


def ggfit_rows(ggfit, model, n_dev, flags, draft=False):
    """ggfit's rows (the draft's with draft), and whether its compute
    buffers are estimated (no graph for the configuration)."""
    gpu = ','.join(['rpc:81920MiB'] * n_dev) if n_dev else 'none'
    cmd = [ggfit, '-m', model, '--gpu', gpu] + flags.split() + VERSION + ['-fitp', 'on', '--json']
    r = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(r.stdout)
    except ValueError:
        return None, r.stderr.strip().splitlines()[-3:], False
    if draft:
        j = j['draft']['projection']
    rows = [(d['name'], [d['model'], d['context'], d['compute']]) for d in j['devices']]
    h = j['host']
    rows.append(('Host', [h['model'], h['context'], h['compute']]))
    return rows, None, j['compute_estimated']


def ggfit_flags(flags):
    return ' '.join(flags.split() + ['--for', 'server'])


def fit_line(model, n_dev, fit_mib, args, want):
    """A fit's line of server_fit.jsonl: llama-server's decision."""
    return json.dumps({'model': model, 'devices': n_dev, 'fit_mib': fit_mib, 'args': args,
                       'fit': {'n_ctx': want[0], 'ngl': want[1], 'ts': want[2],
                               'n_ot': want[3]},
                       'tool': 'llama-server'}) + '\n'


def same_fit(want, got, n_dev):
    """Whether ggfit's fit is llama-server's (-ngl: llama.cpp leaves -1, all,
    when nothing had to move)."""
    return want[0] == got[0] and want[3] == got[3] and \
        (want[1] == got[1] or {want[1], got[1]} <= {-1, 999}) and \
        (n_dev < 2 or all(abs(a - b) < 1e-3 for a, b in zip(want[2], got[2])))


def fit_text(label, want, got, same):
    return '%s: llama-server -c %d -ngl %d -ts %s ot %d; ggfit -c %d -ngl %d -ts %s ot %d%s' % (
        label, want[0], want[1], want[2], want[3], got[0], got[1], got[2], got[3],
        '' if same else '  DIFFER')


def judge_rows(label, want, werr, got, gerr, estimated, verbose):
    """One case's rows, compared and any difference printed: 'same',
    'differ', 'fail' (llama-server failed where ggfit has no graph) or
    None (both refuse)."""
    if want is None and estimated:
        if verbose:
            print('%s: llama-server %s, ggfit estimated' % (label, werr))
        return 'fail'
    if want is None or got is None:
        if want is None and got is None:
            return None
        print('%s: llama-server %s, ggfit %s' % (label, werr or 'ok', gerr or 'ok'))
        return 'differ'
    bad = [(w[0], w[1], g[1]) for w, g in zip(want, got) if w[1] != g[1]]
    if len(want) != len(got):
        bad.append(('rows', len(want), len(got)))
    for name, w, g in bad:
        print('%s: %s: llama-server %s, ggfit %s' % (label, name, w, g))
    return 'differ' if bad else 'same'


def compare_fits(bindir, shim, ggfit, tmp, models, n_max, eps, flag_sets, fit_mib,
                 draft=None, mtp=False, record=None):
    n_same = n_diff = 0
    for model in models:
        sparse = os.path.join(tmp, os.path.basename(model))
        shutil.copyfile(model, sparse)
        os.truncate(sparse, 1 << 40)
        for n_dev in range(1, n_max + 1):
            for flags in flag_sets:
                label = '%s, %d x %d MiB, %s' % (os.path.basename(model), n_dev, fit_mib, flags)
                sflags, gflags = flags, ggfit_flags(flags)
                if draft:
                    sflags += ' -md ' + draft[1]
                    gflags += ' -md ' + draft[0]
                if MMPROJ:
                    sflags += ' -mm ' + MMPROJ[1]
                    gflags += ' -mm ' + MMPROJ[0]
                want, werr = server_fit(bindir, shim, sparse, eps[:n_dev], sflags, fit_mib,
                                        gpu_order=bool(draft or MMPROJ or mtp))
                got, gerr = ggfit_fit(ggfit, model, n_dev, gflags, fit_mib)
                if record and want is not None and not (draft or MMPROJ or mtp):
                    record.write(fit_line(os.path.basename(model), n_dev, fit_mib, gflags, want))
                if (draft or MMPROJ or mtp) and want and got:
                    print('%s: targets MiB: llama-server %s, ggfit %s' % (
                        label, [round(m / 2**20, 2) for m in SERVER_MARGINS],
                        [round(m / 2**20, 2) for m in GGFIT_MARGINS]))
                if want is None or got is None:
                    if want is None and got is None:
                        continue
                    print('%s: llama-server %s, ggfit %s' % (label, werr or want, gerr or got))
                    n_diff += 1
                    continue
                same = same_fit(want, got, n_dev)
                print(fit_text(label, want, got, same))
                n_same += same
                n_diff += not same
        os.remove(sparse)
    print('%d same, %d differ' % (n_same, n_diff))
    return 1 if n_diff else 0


def strip_for(args):
    """A recorded case's args as llama-server takes them: without ggfit's
    --for server."""
    w = args.split()
    while '--for' in w:
        i = w.index('--for')
        del w[i:i + 2]
    return ' '.join(w)


def find_model(m, model_dir):
    for d in model_dir.split(':'):
        if os.path.exists(os.path.join(d, m)):
            return os.path.join(d, m)
    sys.exit('%s: not in %s' % (m, model_dir))


def replay(bindir, shim, ggfit, tmp, cases, model_dir, eps, record, verbose):
    """--cases: each recorded case (rows, an MTP context's or the target's
    rows beside one, or a fit) against this llama-server; its lines
    appended to record."""
    n_same = n_diff = n_fail = 0
    by_model = {}
    for c in cases:
        by_model.setdefault(c['model'], []).append(c)
    for name, runs in by_model.items():
        model = find_model(name, model_dir)
        sparse = os.path.join(tmp, name)
        shutil.copyfile(model, sparse)
        os.truncate(sparse, 1 << 40)
        for c in runs:
            n_dev, gflags = c['devices'], c['args']
            sflags = strip_for(gflags)
            label = '%s, %d devices, %s' % (name, n_dev, sflags)
            rows_of = c.get('rows_of')
            if 'fit_mib' in c:
                fit_mib = c['fit_mib']
                want, werr = server_fit(bindir, shim, sparse, eps[:n_dev], sflags, fit_mib,
                                        gpu_order='-mm ' in sflags or '-md ' in sflags)
                got, gerr = ggfit_fit(ggfit, model, n_dev, gflags, fit_mib)
                if record and want is not None:
                    record.write(fit_line(name, n_dev, fit_mib, gflags, want))
                if want is None or got is None:
                    if want is None and got is None:
                        continue
                    print('%s: llama-server %s, ggfit %s' % (label, werr or want, gerr or got))
                    n_diff += 1
                    continue
                same = same_fit(want, got, n_dev)
                if not same:
                    print(fit_text(label, want, got, same))
                n_same += same
                n_diff += not same
                continue
            if rows_of == 'draft':
                # (each measurement calls the breakdown twice: it, its print)
                sk = (4 if streams_resolved(sflags) else 2) if FIT_EXTRA else 0
            elif rows_of == 'target':
                sk = 0 if FIT_EXTRA else 2
            else:
                sk = 0
            want, werr = server_rows(bindir, shim, sparse, eps[:n_dev], sflags, sk)
            got, gerr, estimated = ggfit_rows(ggfit, model, n_dev, gflags, rows_of == 'draft')
            if record and want is not None:
                line = {'model': name, 'devices': n_dev, 'args': gflags,
                        'rows': [[n] + v for n, v in want], 'tool': 'llama-server'}
                if rows_of:
                    line['rows_of'] = rows_of
                record.write(json.dumps(line) + '\n')
            verdict = judge_rows(label, want, werr, got, gerr, estimated, verbose)
            n_same += verdict == 'same'
            n_diff += verdict == 'differ'
            n_fail += verdict == 'fail'
        os.remove(sparse)
    if n_fail:
        print('%d cases where llama-server failed (crashed or refused) and ggfit '
              'estimated the compute buffers: not compared' % n_fail)
    print('%d same, %d differ' % (n_same, n_diff))
    return 1 if n_diff else 0


def main():
    args = sys.argv[1:]
    bindir, src, n_max, flag_sets, models = None, '/work/llama-src', 1, [], []
    ggfit = os.path.join(ROOT, 'build/ggfit')
    record, verbose, fit_mib, draft = None, False, None, None
    mtp, rows = False, None
    cases = None
    model_dir = ':'.join(os.path.join(ROOT, 'data', d) for d in ('tiny', 'models', 'real'))
    while args:
        a = args.pop(0)
        if a == '--llama':
            bindir = os.path.join(args.pop(0), 'bin')
        elif a == '--llama-src':
            src = args.pop(0)
        elif a == '--llama-version':
            VERSION[:] = ['--llama-version', args.pop(0)]
        elif a == '--record':
            record = open(args.pop(0), 'a')
        elif a == '--ggfit':
            ggfit = args.pop(0)
        elif a == '--devices':
            n_max = int(args.pop(0))
        elif a == '--fit-mib':
            fit_mib = int(args.pop(0))
        elif a == '--draft':
            draft = args.pop(0)
        elif a == '--mmproj':
            MMPROJ.append(args.pop(0))
        elif a == '--mtp':
            mtp = True
        elif a == '--rows':
            rows = args.pop(0)
        elif a == '--verbose':
            verbose = True
        elif a == '--cases':
            cases = [json.loads(l) for l in open(args.pop(0)) if l.strip()]
        elif a == '--models':
            model_dir = args.pop(0)
        elif a == '--flags':
            flag_sets.append(args.pop(0))
        else:
            models.append(a)
    if cases is not None and bindir:
        # only llama-server's cases (a recorded file mixes llama-fit-params'):
        # --for server, or flags llama-server alone takes (older records)
        def server_case(a):
            w = a.split()
            return '--for' in w and 'server' in w or \
                any(f in w for f in ('--embedding', '--embeddings', '--rerank', '--reranking',
                                     '--pooling'))
        cases = [c for c in cases if server_case(c['args'])]
        if has_fit_extra(src):
            FIT_EXTRA[:] = [True]
        tmp = tempfile.mkdtemp(prefix='servercmp-')
        shim = build_shim(src, tmp)
        procs, eps = start_servers(bindir, max([c['devices'] for c in cases] + [0]))
        try:
            return replay(bindir, shim, ggfit, tmp, cases, model_dir, eps, record, verbose)
        finally:
            for p in procs:
                p.terminate()
            shutil.rmtree(tmp, ignore_errors=True)
    if not bindir or not models:
        print(__doc__)
        return 2
    if fit_mib is not None and not flag_sets:
        flag_sets = ['-c 0', '']
    flag_sets = flag_sets or DEFAULT_FLAGS
    if mtp:   # an MTP context on the target, measured before it
        flag_sets = [f + ' --spec-type draft-mtp' for f in flag_sets]
    # the rows compared: the draft's (or the MTP context's), measured
    # first; or the target's, measured next (the shim skips the first)
    rows = rows or ('draft' if draft or mtp else 'target')
    skip = 2 if rows == 'target' and (draft or mtp) else 0   # measured, then printed
    if has_fit_extra(src):
        # b10584: the fit measures the model first (twice when it resolves
        # the context for several streams), then the draft or MTP context
        FIT_EXTRA[:] = [True]
        skip = 0
    tmp = tempfile.mkdtemp(prefix='servercmp-')
    shim = build_shim(src, tmp)
    procs, eps = start_servers(bindir, n_max)
    n_same = n_diff = n_fail = 0
    if MMPROJ:
        MMPROJ.append(os.path.join(tmp, 'mmproj-' + os.path.basename(MMPROJ[0])))
        shutil.copyfile(MMPROJ[0], MMPROJ[1])
        os.truncate(MMPROJ[1], 1 << 40)
    if draft:
        sparse_draft = os.path.join(tmp, 'draft-' + os.path.basename(draft))
        shutil.copyfile(draft, sparse_draft)
        os.truncate(sparse_draft, 1 << 40)
        draft = (draft, sparse_draft)
    if fit_mib is not None:
        try:
            return compare_fits(bindir, shim, ggfit, tmp, models, max(n_max, 1), eps,
                                flag_sets, fit_mib, draft, mtp, record)
        finally:
            for p in procs:
                p.terminate()
            shutil.rmtree(tmp, ignore_errors=True)
    try:
        for model in models:
            sparse = os.path.join(tmp, os.path.basename(model))
            shutil.copyfile(model, sparse)
            os.truncate(sparse, 1 << 40)
            for n_dev in range(n_max + 1):
                for flags in flag_sets:
                    gflags = ggfit_flags(flags)
                    sflags = flags
                    if draft:
                        sflags += ' -md ' + draft[1]
                        gflags += ' -md ' + draft[0]
                    label = '%s, %d device%s, %s' % (os.path.basename(model), n_dev,
                                                     '' if n_dev == 1 else 's', flags)
                    sk = skip
                    if FIT_EXTRA and rows == 'draft' and (draft or mtp):
                        sk = 4 if streams_resolved(flags) else 2   # two calls a measurement
                    want, werr = server_rows(bindir, shim, sparse, eps[:n_dev], sflags, sk)
                    got, gerr, estimated = ggfit_rows(ggfit, model, n_dev, gflags,
                                                      rows == 'draft')
                    if record and want is not None:
                        line = {'model': os.path.basename(model), 'devices': n_dev,
                                'args': gflags, 'rows': [[n] + v for n, v in want],
                                'tool': 'llama-server'}
                        if draft or mtp:   # whose rows: tests/test_spec.c replays these
                            line['rows_of'] = rows
                        record.write(json.dumps(line) + '\n')
                    verdict = judge_rows(label, want, werr, got, gerr, estimated, verbose)
                    n_same += verdict == 'same'
                    n_diff += verdict == 'differ'
                    n_fail += verdict == 'fail'
            os.remove(sparse)
    finally:
        for p in procs:
            p.terminate()
        shutil.rmtree(tmp, ignore_errors=True)
    if n_fail:
        print('%d cases where llama-server failed (crashed or refused) and ggfit '
              'estimated the compute buffers: not compared' % n_fail)
    print('%d same, %d differ' % (n_same, n_diff))
    return 1 if n_diff else 0


if __name__ == '__main__':
    sys.exit(main())
