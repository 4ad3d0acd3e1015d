// api.js GGFIT WASM_DIR MODELS - the JavaScript API (wasm/ggfit.js) in
// node: its commands by name (plan, bench, sweep, inspect) answer with the
// native CLI's JSON; a model given as bytes is planned as its file is; a
// plan that does not fit is an answer and a bad flag an Error with ggfit's
// message; and one module answers a command as a fresh process does after
// any other (what a run sets, --wide or the command whose -h a message
// names, does not outlive it).
'use strict';
const nativeRun = require('./native.js');
const fs = require('fs');
const path = require('path');
const [ggfit, wasmDir, models] = process.argv.slice(2);
const G = require(path.resolve(wasmDir, 'ggfit.js'));
let pass = 0, fail = 0;

const native = (argv) => nativeRun(ggfit, argv);
function check(what, ok, detail) {
  if (ok) pass++; else fail++;
  console.log((ok ? 'ok ' : 'FAIL ') + what + (ok || !detail ? '' : ': ' + detail));
}
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

(async () => {
  const g = await G.load();
  const m = path.join(models, 'llama-3.3-70b-Q4_K_M.gguf');
  const hw = ['--gpu', 'rtx-3060-12gb', '--host-mem', '16GiB'];
  const want = JSON.parse(native(['-m', m, ...hw, '--json']).stdout);
  const p = await g.plan(m, { gpu: 'rtx-3060-12gb', hostMem: '16GiB' });
  check('plan(path): native JSON, host short (exit 3) answered, not thrown', same(p, want) && p.exit_status === 3);
  const b = await g.plan(new Uint8Array(fs.readFileSync(m)), { gpu: ['rtx-3060-12gb'], hostMem: '16GiB' });
  check('plan(bytes): the same plan', same(b.devices, want.devices) && same(b.verdict.pools, want.verdict.pools));
  const flags = ['-c', '8192', '-ctk', 'q8_0', '-ctv', 'q8_0'];
  check('bench(): native JSON',
        same(await g.bench(m, { gpu: 'rtx-4090', hostMem: '64GiB', flags }),
             JSON.parse(native(['bench', '-m', m, '--gpu', 'rtx-4090', '--host-mem', '64GiB', ...flags, '--json']).stdout)));
  check('sweep(): native JSON',
        same(await g.sweep(m, { gpu: 'rtx-4090', hostMem: '64GiB', llamaVersion: 'b10309' }),
             JSON.parse(native(['sweep', '-m', m, '--gpu', 'rtx-4090', '--host-mem', '64GiB', '--llama-version', 'b10309', '--json']).stdout)));
  check('inspect(): native JSON', same(await g.inspect(m), JSON.parse(native(['inspect', '-m', m, '--json']).stdout)));
  try {
    await g.plan(m, { gpu: 'nosuchgpu' });
    check('a bad flag throws', false, 'no Error');
  } catch (e) {
    const n = native(['-m', m, '--gpu', 'nosuchgpu', '--json']);
    check('a bad flag throws ggfit\'s message, exit status 2',
          e.code === 2 && e.message === n.stderr.replace(/^ggfit: /, '').trim(), e.message + ' / ' + n.stderr);
  }
  // one module, a sequence of commands: each as a fresh process answers it
  const seq = [
    ['-m', m, ...hw, '--wide'],
    ['-m', m, ...hw],
    ['bench', '-m', m, '--gpu', 'nosuchgpu'],
    ['-m', m, '--gpu', 'nosuchgpu'],
    ['-m', m, ...hw, '-ot', 'blk\\.1[0-9]\\.=CPU', '--print-flags'],
    ['-m', m, ...hw, '--print-flags'],
    ['inspect', '-m', path.join(models, 'nothing.gguf')],
    ['-m', m, ...hw, '--llama-version', 'b10309', '--json'],
    ['-m', m, ...hw, '--json'],
  ];
  for (const argv of seq) {
    const r = await g.run(argv), n = native(argv);
    check('in sequence: ggfit ' + argv.join(' ').replace(models + '/', ''),
          r.code === n.code && r.stdout === n.stdout && r.stderr === n.stderr,
          'exit ' + r.code + ' / ' + n.code + '; ' + r.stderr.slice(0, 120) + ' / ' + n.stderr.slice(0, 120));
  }
  console.log('api: ' + pass + ' passed, ' + fail + ' failed');
  process.exit(fail ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
