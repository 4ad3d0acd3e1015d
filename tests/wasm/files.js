// files.js GGFIT WASM_DIR DIR... - folders of GGUF files through the
// WebAssembly build (make wasm-test: the malformed-file catalogue, and the
// small headers of every architecture and projector type): each file's
// `inspect` and plan answered as the native CLI answers them (exit status,
// stdout and stderr equal, byte for byte), never a trap, an abort or a
// hang of the module, which one instance keeps across every file.
'use strict';
const nativeRun = require('./native.js');
const fs = require('fs');
const path = require('path');
const [ggfit, wasmDir, ...dirs] = process.argv.slice(2);
const G = require(path.resolve(wasmDir, 'ggfit.js'));

const native = (argv) => nativeRun(ggfit, argv);

(async () => {
  const g = await G.load();
  let n = 0, failed = 0;
  for (const dir of dirs)
    for (const f of fs.readdirSync(dir).sort()) {
      const file = path.join(dir, f);
      if (!fs.statSync(file).isFile()) continue;
      for (const argv of [['inspect', '-m', file], ['-m', file, '--gpu', 'rtx-3090', '--host-mem', '32GiB', '--json']]) {
        n++;
        const want = native(argv);
        let got;
        try {
          got = await g.run(argv);
        } catch (e) {
          got = { code: 'threw', stdout: '', stderr: String(e.message || e) };
        }
        if (got.code !== want.code || got.stdout !== want.stdout || got.stderr !== want.stderr) {
          failed++;
          console.log('FAIL ggfit ' + argv.join(' ') + ': exit ' + got.code + ' (native ' + want.code + ')\n  wasm:   ' +
                      got.stderr.trim().slice(0, 200) + '\n  native: ' + (want.stderr || '').trim().slice(0, 200));
        }
      }
    }
  console.log('files: ' + (n - failed) + ' of ' + n + ' runs answered as the native CLI answers them');
  process.exit(failed ? 1 : 0);
})().catch((e) => { console.error(e); process.exit(1); });
