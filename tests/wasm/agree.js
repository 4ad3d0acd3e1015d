// agree.js GGFIT WASM_DIR CASES MODELS - the WebAssembly build answers every
// reference case (data/reference/cases.jsonl) with the native CLI's JSON and
// exit status, byte for byte: the memory run (-fitp on) and the fit's, as
// ../shared/reference/check.py runs them, each in one module kept across
// runs (as the page keeps it), then the whole set again in a fresh one
// reading in the other order. Exits 1 on the first difference.
'use strict';
const nativeRun = require('./native.js');
const fs = require('fs');
const path = require('path');
const [ggfit, wasmDir, casesFile, models] = process.argv.slice(2);
const G = require(path.resolve(wasmDir, 'ggfit.js'));

function argvOf(c, extra) {
  return ['-m', path.join(models, c.model), '--gpu',
          c.devices.length ? c.devices.map((m) => 'rpc:' + m + 'MiB').join(',') : 'none',
          ...c.args, ...extra, '--for', 'fit-params', '--json', '--host-mem', '32GiB'];
}

(async () => {
  const cases = fs.readFileSync(casesFile, 'utf8').split('\n').filter(Boolean).map(JSON.parse);
  const runs = [];
  for (const c of cases)
    for (const extra of [['-fitp', 'on'], []]) runs.push({ id: c.id, argv: argvOf(c, extra) });
  const native = runs.map((r) => nativeRun(ggfit, r.argv));   // a refusal is an answer too
  let g = await G.load();
  const t0 = Date.now();
  for (let i = 0; i < runs.length; i++) {
    const r = await g.run(runs[i].argv);
    if (r.stdout !== native[i].stdout || r.code !== native[i].code) {
      console.error('FAIL ' + runs[i].id + ': ggfit ' + runs[i].argv.join(' ') + ' (exit ' + r.code + ', native ' + native[i].code + ')');
      const a = native[i].stdout.split('\n'), b = r.stdout.split('\n');
      for (let k = 0; k < Math.max(a.length, b.length); k++)
        if (a[k] !== b[k]) { console.error('  native: ' + (a[k] || '').slice(0, 300) + '\n  wasm:   ' + (b[k] || '').slice(0, 300)); break; }
      process.exit(1);
    }
  }
  const ms = Date.now() - t0;
  g = await G.load();
  for (let i = runs.length - 1; i >= 0; i--) {
    const again = await g.run(runs[i].argv);
    if (again.stdout !== native[i].stdout || again.code !== native[i].code) {
      console.error('FAIL ' + runs[i].id + ' (a fresh module, reverse order)');
      process.exit(1);
    }
  }
  console.log('wasm agrees with the native CLI on ' + runs.length + ' runs of ' + cases.length +
              ' reference cases (' + (ms / runs.length).toFixed(1) + ' ms a run in WebAssembly)');
})().catch((e) => { console.error(e); process.exit(1); });
