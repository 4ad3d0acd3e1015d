// web.test.js - ggfit's web page (web/, built into WASM_DIR/web) in headless
// chromium, against the native CLI. tests/web/run.sh starts the server
// (tests/http_server.sh: the fake hub, and the page on a second origin) and
// runs this with:
//   node web.test.js WASM_DIR MODELS ARTIFACTS GGFIT SERVER_DIR
// Each test prints "ok NAME: ..." or "FAIL NAME: ..."; the last line is
// "web: N passed, M failed" (exit 1 when M > 0).
// Nothing beyond 127.0.0.1 and file:// is reached (other host names do not
// resolve; a request elsewhere fails the test "offline"); every wait is on
// the page's document.body.dataset.state, never a fixed sleep.
// WEB_ONLY=REGEX runs the tests whose names match.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const util = require('util');
const { spawnSync } = require('child_process');
const { chromium } = require('playwright-core');

const [wasmDir, models, artifacts, ggfit, srvDir] = process.argv.slice(2).map((p) => path.resolve(p));
const hubPort = Number(fs.readFileSync(path.join(srvDir, 'port'), 'utf8'));
const pagePort = Number(fs.readFileSync(path.join(srvDir, 'page_port'), 'utf8'));
const hub = 'http://127.0.0.1:' + hubPort + '/';
const pageHttp = 'http://127.0.0.1:' + pagePort + '/index.html?endpoint=' + encodeURIComponent(hub);
const pageFile = 'file://' + path.join(wasmDir, 'web', 'index.html');
const ANSWER_MS = 60000;     // the longest wait for one answer (a hub list reads 9 headers)
const LOCAL_MS_MAX = 500;    // a local header's answer, module loaded (expected < 50 ms)

let passed = 0, failed = 0;
function report(ok, name, detail) {
  if (ok) passed++; else failed++;
  console.log((ok ? 'ok ' : 'FAIL ') + name + (detail ? ': ' + detail : ''));
}
// runs one test: fn returns a detail string (ok) or throws (FAIL)
const only = process.env.WEB_ONLY ? new RegExp(process.env.WEB_ONLY) : null;   // a subset, while debugging
async function test(name, fn) {
  if (only && !only.test(name)) return;
  try {
    report(true, name, await fn());
  } catch (e) {
    report(false, name, String((e && e.message) || e).split('\n').slice(0, 6).join(' | '));
  }
}
function check(cond, what) { if (!cond) throw new Error(what); }

// ---- the native CLI ---------------------------------------------------------

let nativeRuns = 0;
// build/ggfit with argv, a clean environment (no LLAMA_ARG_*, no cache kept)
function native(argv, env) {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'ggfit-web-native-'));
  try {
    const r = spawnSync(ggfit, argv, {
      encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 120000,
      env: Object.assign({ PATH: process.env.PATH, HOME: home, GGFIT_CACHE_DIR: path.join(home, 'cache') }, env || {}),
    });
    nativeRuns++;
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
}

function replaceAll(s, subst) {
  for (const [a, b] of subst) s = s.split(a).join(b);
  return s;
}

// The page's last answer (window.ggfitLast) against the native CLI's for
// the same argv (the page's /local/NAME paths made the real files'):
// the exit status, and stdout byte for byte (JSON also compared parsed, to
// name the first difference). Returns a detail string.
function agree(last, subst, env) {
  check(last && Array.isArray(last.argv), 'window.ggfitLast has no argv');
  const argv = last.argv.map((a) => replaceAll(String(a), subst));
  const n = native(argv, env);
  const pageOut = replaceAll(last.stdout, subst);
  const where = 'ggfit ' + argv.join(' ');
  check(n.code === last.code, 'exit status ' + last.code + ' in the page, native ' + n.code + ' (' + where + '; native stderr: ' + n.stderr.trim().slice(0, 200) + ')');
  if (pageOut !== n.stdout) {
    let detail = '';
    try {
      const a = JSON.parse(pageOut), b = JSON.parse(n.stdout);
      detail = util.isDeepStrictEqual(a, b) ? 'equal as JSON, not byte for byte' : 'JSON differs: ' + firstDiff(a, b);
    } catch (e) {
      const x = pageOut.split('\n'), y = n.stdout.split('\n');
      for (let k = 0; k < Math.max(x.length, y.length); k++)
        if (x[k] !== y[k]) { detail = 'line ' + (k + 1) + ': page ' + JSON.stringify(x[k]) + ' native ' + JSON.stringify(y[k]); break; }
    }
    throw new Error('stdout differs from the native CLI\'s (' + where + '): ' + detail);
  }
  return { argv, json: /^\s*[{[]/.test(n.stdout), bytes: n.stdout.length, where };
}
function firstDiff(a, b, at) {
  at = at || '$';
  if (typeof a !== typeof b || Array.isArray(a) !== Array.isArray(b) || a === null || b === null || typeof a !== 'object')
    return util.isDeepStrictEqual(a, b) ? '' : at + ': page ' + JSON.stringify(a) + ' native ' + JSON.stringify(b);
  for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const d = firstDiff(a[k], b[k], at + '.' + k);
    if (d) return d;
  }
  return '';
}

// ---- GGUF headers and the hub's log ------------------------------------------

// where a GGUF file's tensor data starts: the bytes a planner needs
function ggufDataOffset(file) {
  const fd = fs.openSync(file, 'r');
  let buf = Buffer.alloc(0), pos = 0;
  const need = (n) => {
    while (buf.length < pos + n) {
      const more = Buffer.alloc(Math.max(1 << 16, n));
      const got = fs.readSync(fd, more, 0, more.length, buf.length);
      if (got <= 0) throw new Error(file + ': a truncated header');
      buf = Buffer.concat([buf, more.subarray(0, got)]);
    }
  };
  const u32 = () => { need(4); pos += 4; return buf.readUInt32LE(pos - 4); };
  const u64 = () => { need(8); pos += 8; return Number(buf.readBigUInt64LE(pos - 8)); };
  const str = () => { const n = u64(); need(n); pos += n; return buf.toString('utf8', pos - n, pos); };
  const SIZE = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const value = (t) => {
    if (t === 8) return str();
    if (t === 9) { const et = u32(), n = u64(); for (let i = 0; i < n; i++) value(et); return null; }
    check(SIZE[t], file + ': value type ' + t);
    need(SIZE[t]); pos += SIZE[t];
    return t === 4 ? buf.readUInt32LE(pos - 4) : null;
  };
  try {
    need(4);
    check(buf.toString('latin1', 0, 4) === 'GGUF', file + ': not a GGUF file');
    pos = 4;
    u32();
    const nTensors = u64(), nKv = u64();
    let alignment = 32;
    for (let i = 0; i < nKv; i++) {
      const key = str(), v = value(u32());
      if (key === 'general.alignment' && v) alignment = v;
    }
    for (let i = 0; i < nTensors; i++) { str(); const nd = u32(); for (let d = 0; d < nd; d++) u64(); u32(); u64(); }
    return Math.ceil(pos / alignment) * alignment;
  } finally {
    fs.closeSync(fd);
  }
}

const accessLog = path.join(srvDir, 'access.log');
function logLines() {
  return fs.existsSync(accessLog) ? fs.readFileSync(accessLog, 'utf8').split('\n').filter(Boolean) : [];
}
// What the hub served since mark (a line count of access.log): GGUF bytes
// per file against each file's header (its data offset), the API's JSON,
// the redirects' bodies, the preflights. log_format: URI STATUS BYTES METHOD "RANGE"
const FIRST_READ = 32768;    // src/remote's first Range read of a remote file
function served(mark) {
  const t = { gguf: 0, header: 0, allowance: 0, api: 0, redirect: 0, other: 0, requests: 0, preflights: 0, files: new Map() };
  for (const line of logLines().slice(mark)) {
    const m = /^(\S+) (\d+) (\d+) (\S+)/.exec(line);
    if (!m) continue;
    const [, uri, status, bytesS, method] = m;
    const bytes = Number(bytesS);
    t.requests++;
    if (method === 'OPTIONS') { t.preflights++; continue; }
    if (status === '301' || status === '302') t.redirect += bytes;
    else if (uri.startsWith('/api/')) t.api += bytes;
    else if (/\.gguf$/.test(uri.split('?')[0])) {
      t.gguf += bytes;
      const f = path.join(srvDir, 'www', decodeURIComponent(uri.split('?')[0]));
      const e = t.files.get(f) || { bytes: 0, header: ggufDataOffset(f) };
      e.bytes += bytes;
      t.files.set(f, e);
    } else t.other += bytes;
  }
  for (const e of t.files.values()) {
    t.header += e.header;
    // a header shorter than the first read costs that read (real headers,
    // megabytes of tokenizer, do not)
    t.allowance += Math.max(Math.ceil(1.1 * e.header), FIRST_READ);
  }
  return t;
}
function bytesLine(t) {
  return t.files.size + ' GGUF files: ' + t.gguf + ' bytes served for ' + t.header + ' bytes of headers (' +
    (t.header ? (t.gguf / t.header).toFixed(2) : '-') + 'x; allowed ' + t.allowance + '), API JSON ' + t.api +
    ', redirect bodies ' + t.redirect + ', other ' + t.other + '; ' + t.requests + ' requests (' + t.preflights + ' preflights)' +
    [...t.files].filter(([, e]) => e.header > FIRST_READ)
      .map(([f, e]) => '; ' + path.basename(f) + ' ' + e.bytes + '/' + e.header + ' (' + (e.bytes / e.header).toFixed(3) + 'x)').join('');
}
const totals = [];
function checkBytes(name, t) {
  totals.push([name, t]);
  for (const [f, e] of t.files)
    check(e.bytes <= Math.max(Math.ceil(1.1 * e.header), FIRST_READ),
      path.basename(f) + ': ' + e.bytes + ' bytes served for a header of ' + e.header);
  check(t.other === 0, t.other + ' bytes of something neither GGUF nor API');
  return bytesLine(t);
}

// ---- the browser --------------------------------------------------------------

const external = [];
const pageErrors = [];
let browser;

// Before the page's scripts: every data-state change recorded with its
// time, and the moment the file input changes.
function initScript() {
  window.__states = [];
  window.__errors = [];
  window.__fileAt = null;
  window.addEventListener('error', (e) => window.__errors.push(String(e.message || e)));
  window.addEventListener('unhandledrejection', (e) => window.__errors.push(String((e.reason && e.reason.message) || e.reason)));
  const push = () => {
    const s = document.body && document.body.dataset.state;
    if (s) window.__states.push({ s, t: performance.now() });
  };
  new MutationObserver((list) => { for (const m of list) if (m.target === document.body) push(); })
    .observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state'] });
  document.addEventListener('DOMContentLoaded', push);
  for (const ev of ['input', 'change'])
    document.addEventListener(ev, (e) => {
      if (e.target && e.target.id === 'file' && window.__fileAt === null) window.__fileAt = performance.now();
    }, true);
}

async function open(url, opts) {
  const context = await browser.newContext(Object.assign({ viewport: { width: 1280, height: 900 } }, opts || {}));
  const page = await context.newPage();
  // nothing beyond this machine: other hosts do not resolve (the browser's
  // --host-resolver-rules), and any request elsewhere fails "offline".
  // (Not page.route: intercepting, playwright answers the CORS preflights
  // itself, and the hub's would go untested.)
  page.on('request', (r) => { if (!/^(file:|data:|blob:|http:\/\/127\.0\.0\.1[:/])/.test(r.url())) external.push(r.url()); });
  page.on('pageerror', (e) => pageErrors.push(url + ': ' + e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') console.log('  (console error: ' + m.text().slice(0, 300) + ' ' + (m.location().url || '') + ')');
  });
  await page.addInitScript(initScript);
  await page.goto(url);
  await page.waitForFunction(() => document.body && ['ready', 'done', 'error'].includes(document.body.dataset.state), null, { timeout: 30000 });
  check(await page.evaluate(() => document.body.dataset.state) !== 'error',
    'the page loaded into data-state=error: ' + await text(page, '#error'));
  // the page's warm-up (its example planned while it waits) done, as it
  // is by the time a user has found a file
  await page.waitForFunction(() => window.ggfitWarm, null, { timeout: 30000 });
  return page;
}

async function text(page, sel) {
  return page.evaluate((s) => { const e = document.querySelector(s); return e ? e.textContent.trim() : null; }, sel);
}

// Does action, then waits for the answer: data-state reaches done or error
// after it (ms: from the mark to that state, in the page's clock).
async function answer(page, action) {
  await page.evaluate(() => {
    window.__mark = window.__states.length; window.__errMark = window.__errors.length;
    window.__markAt = performance.now(); window.__fileAt = null;
  });
  await action();
  await page.waitForFunction(() => {
    const cur = document.body.dataset.state;
    if (window.__errors.length > window.__errMark) return true;   // an uncaught error: no answer comes
    return (cur === 'done' || cur === 'error') &&
      window.__states.slice(window.__mark).some((x) => x.s === 'done' || x.s === 'error');
  }, null, { timeout: ANSWER_MS });
  const uncaught = await page.evaluate(() => window.__errors.slice(window.__errMark));
  check(!uncaught.length, 'uncaught in the page: ' + uncaught.join(' | '));
  return page.evaluate(() => {
    const end = window.__states.slice(window.__mark).find((x) => x.s === 'done' || x.s === 'error');
    const start = window.__fileAt !== null ? window.__fileAt : window.__markAt;
    return {
      state: document.body.dataset.state, states: window.__states.slice(window.__mark).map((x) => x.s),
      ms: end.t - start, last: window.ggfitLast ? JSON.parse(JSON.stringify(window.ggfitLast)) : null,
      runs: (window.ggfitRuns || []).map((r) => (r.argv[0] === 'sweep' ? 'sweep' : r.argv.includes('--print-command') ? 'print-command' : 'plan') + ' ' + r.ms + ' ms'),
      error: (document.getElementById('error') || {}).textContent || '',
    };
  });
}

async function setHardware(page, gpus, ram) {
  for (const [sel, v] of [['#gpus', gpus], ['#ram', ram]]) {
    await page.fill(sel, v);
    await page.dispatchEvent(sel, 'change');
  }
}
async function visible(page, sel) {
  return page.locator(sel).first().isVisible();
}
async function shot(page, name) {
  const f = path.join(artifacts, name + '.png');
  await page.screenshot({ path: f, fullPage: true });
  shots.push(f);
  return f;
}
const shots = [];
const timings = [];
const verdicts = [];   // a local file chosen to its verdict shown, once warm
let listed = null;           // the hub list's JSON

// ---- the tests -----------------------------------------------------------------

async function localFile(layout, gpus, ram, extra) {
  const page = await open(pageFile, extra && extra.context);
  try {
    await setHardware(page, gpus, ram);
    const file = path.join(models, layout);
    const a = await answer(page, () => page.setInputFiles('#file', file));
    check(a.state === 'done', 'data-state=' + a.state + ' (' + a.states.join(' > ') + '): ' + a.error.trim());
    check(a.last, 'no window.ggfitLast after the answer');
    check(a.last.argv.includes('--host-mem'), 'the page ran without --host-mem: ' + a.last.argv.join(' '));
    const ag = agree(a.last, [['/local/' + layout, file]]);
    const verdict = await text(page, '#verdict');
    check(verdict, '#verdict is empty');
    timings.push([layout, a.ms, a.runs]);
    if (extra && extra.after) await extra.after(page, a);
    return { page, a, ag, verdict };
  } catch (e) {
    await page.context().close();
    throw e;
  }
}

async function main() {
  fs.mkdirSync(artifacts, { recursive: true });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1'],
  });
  console.log('web: ' + (await browser.version()) + '; hub ' + hub + ', page http://127.0.0.1:' + pagePort + '/ and ' + pageFile);

  // 1. a local file from file://: the native CLI's answer, quickly
  for (const [layout, gpus, ram, name] of [
    ['qwen3-14b-Q4_K_M.gguf', 'rtx-3090', '32GiB', 'desktop-local'],
    ['gpt-oss-20b-mxfp4.gguf', '24GiB,rtx-4090', '64GiB', null],
    ['llama-3.3-70b-Q4_K_M.gguf', 'rtx-3060-12gb', '16GiB', 'desktop-nofit'],
  ]) {
    await test('file:// ' + layout + ' on ' + gpus + ' ' + ram, async () => {
      const r = await localFile(layout, gpus, ram);
      try {
        // once loaded: the answer to a second, identical choice
        // (chromium fires no change for the same file list: cleared first)
        await r.page.setInputFiles('#file', []);
        const again = await answer(r.page, () => r.page.setInputFiles('#file', path.join(models, layout)));
        check(again.state === 'done', 'the second answer: data-state=' + again.state);
        const verdictMs = await r.page.evaluate(() => window.ggfitVerdictAt - window.ggfitInputAt);
        verdicts.push(layout + ' ' + verdictMs.toFixed(1) + ' ms');
        if (name) await shot(r.page, name);
        // the first answer warms the module up (its code compiled on first
        // use); the second is what a user waits for
        check(again.ms <= LOCAL_MS_MAX,
          'setInputFiles to done took ' + again.ms.toFixed(1) + ' ms (> ' + LOCAL_MS_MAX + '; the first ' + r.a.ms.toFixed(1) + ' ms)');
        return 'native\'s answer (' + (r.ag.json ? 'JSON, ' : '') + r.ag.bytes + ' bytes, ' + r.ag.where.replace(models + '/', '') +
          '); setInputFiles to done ' + r.a.ms.toFixed(1) + ' ms, again ' + again.ms.toFixed(1) + ' ms' +
          (again.ms > 50 ? ' (over 50 ms)' : '') + '; the verdict shown ' + verdictMs.toFixed(1) + ' ms after the choice' + ' (' + again.runs.join(', ') + ')' + '; verdict "' + r.verdict.slice(0, 100) + '"';
      } finally {
        await r.page.context().close();
      }
    });
  }

  // the node build answers the same (build-wasm/ggfit.js)
  await test('node API agrees with the page', async () => {
    const G = require(path.join(wasmDir, 'ggfit.js'));
    const g = await G.load();
    const r = await localFile('qwen3-14b-Q4_K_M.gguf', 'rtx-3090', '32GiB');
    try {
      const file = path.join(models, 'qwen3-14b-Q4_K_M.gguf');
      const argv = r.a.last.argv.map((a) => replaceAll(String(a), [['/local/qwen3-14b-Q4_K_M.gguf', file]]));
      const n = await g.run(argv);
      check(n.code === r.a.last.code && n.stdout === replaceAll(r.a.last.stdout, [['/local/qwen3-14b-Q4_K_M.gguf', file]]),
        'node\'s answer differs from the page\'s for ' + argv.join(' '));
      return 'the same stdout (' + n.stdout.length + ' bytes)';
    } finally {
      await r.page.context().close();
    }
  });

  // 2. the hub, the page on another origin
  for (const [label, phone] of [['desktop', false], ['phone', true]]) {
    const ctx = phone ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : undefined;
    if (phone) {
      await test('phone: local file and hub list', async () => {
        const r = await localFile('qwen3-14b-Q4_K_M.gguf', 'rtx-3090', '32GiB', { context: ctx });
        try {
          await shot(r.page, 'phone-local');
        } finally {
          await r.page.context().close();
        }
        const page = await open(pageHttp, ctx);
        try {
          await setHardware(page, 'rtx-4090', '32GiB');
          const a = await answer(page, async () => { await page.fill('#repo', 'ggfit/Qwen3-GGUF'); await page.click('#repo-go'); });
          check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
          await shot(page, 'phone-quants');
          const wide = await page.evaluate(() => document.documentElement.scrollWidth);
          check(wide <= 390, 'the page is ' + wide + ' px wide on a 390 px phone (scrolls sideways)');
          return 'screenshots; no sideways scrolling';
        } finally {
          await page.context().close();
        }
      });
      continue;
    }
    const page = await open(pageHttp, ctx);
    try {
      await setHardware(page, 'rtx-4090', '32GiB');
      await test('hub: ggfit/Qwen3-GGUF lists its quants', async () => {
        const mark = logLines().length;
        const a = await answer(page, async () => { await page.fill('#repo', 'ggfit/Qwen3-GGUF'); await page.click('#repo-go'); });
        const t = served(mark);
        check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
        const ag = agree(a.last, [], { MODEL_ENDPOINT: hub });
        listed = JSON.parse(a.last.stdout);
        check(await visible(page, '#quants'), '#quants is not visible');
        const rows = await page.evaluate(() => [...document.querySelectorAll('#quants tbody tr, #quants tr')]
          .filter((tr) => tr.querySelector('td')).map((tr) => tr.textContent.replace(/\s+/g, ' ').trim()));
        check(rows.length >= 7, rows.length + ' rows in #quants (7 models in the repo)');
        const split = rows.filter((r) => /Split/.test(r));
        check(split.length === 1, 'the split model is in ' + split.length + ' rows: ' + split.join(' / '));
        await shot(page, 'desktop-quants');
        return rows.length + ' rows, the split model in one (' + (ag.json ? 'JSON ' : '') + 'equal to native\'s); ' + checkBytes('list', t);
      });
      await test('hub: a row chosen -> a verdict', async () => {
        const mark = logLines().length;
        const row = page.locator('#quants tr', { hasText: 'Qwen3-14B-Q4_K_M' }).first();
        const target = (await row.locator('button, a').count()) ? row.locator('button, a').first() : row;
        const a = await answer(page, () => target.click());
        const t = served(mark);
        check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
        check(a.last.argv.join(' ').includes('Qwen3-14B-Q4_K_M'), 'the row ran ' + a.last.argv.join(' '));
        agree(a.last, [], { MODEL_ENDPOINT: hub });
        const v = await text(page, '#verdict');
        check(v, '#verdict is empty');
        check(await text(page, '#cmd'), '#cmd is empty');
        await shot(page, 'desktop-hub-verdict');
        return '"' + v.slice(0, 100) + '"; ' + checkBytes('row', t);
      });
      await test('hub: ggfit/Qwen3-GGUF:Q4_K_M typed -> a verdict', async () => {
        const mark = logLines().length;
        const a = await answer(page, async () => { await page.fill('#repo', 'ggfit/Qwen3-GGUF:Q4_K_M'); await page.press('#repo', 'Enter'); });
        const t = served(mark);
        check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
        check(a.last.argv.join(' ').includes('ggfit/Qwen3-GGUF:Q4_K_M'), 'Enter in #repo ran ' + a.last.argv.join(' '));
        const ag = agree(a.last, [], { MODEL_ENDPOINT: hub });
        const v = await text(page, '#verdict');
        check(v, '#verdict is empty');
        return 'Enter in #repo; native\'s answer (' + ag.where.replace(/^ggfit /, '') + '); "' + v.slice(0, 80) + '"; ' + checkBytes('typed', t);
      });
      await test('hub: the split model (Q6_K, two shards) plans as one', async () => {
        // a fresh page: both shards read in this answer
        const p3 = await open(pageHttp);
        try {
          await setHardware(p3, 'rtx-4090', '32GiB');
          const mark = logLines().length;
          const a = await answer(p3, async () => { await p3.fill('#repo', 'ggfit/Qwen3-GGUF:Q6_K'); await p3.click('#repo-go'); });
          const t = served(mark);
          check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
          agree(a.last, [], { MODEL_ENDPOINT: hub });
          const shards = [...t.files.keys()].filter((f) => /Split-Q6_K-0000[12]-of-00002/.test(f)).length;
          check(shards === 2, shards + ' of the 2 shards read');
          // the plan's weights are both shards' (the list's size, less the headers)
          const j = JSON.parse(a.last.stdout);
          const weights = j.devices.reduce((n, d) => n + d.model, 0) + j.host.model + j.cpu_extra.model;
          const q = listed && listed.quants.find((x) => /Split-Q6_K/.test(x.name));
          check(q && q.shards === 2, 'the list has no 2-shard Q6_K');
          check(Math.abs(weights - q.size) < 1 << 20, 'the plan\'s weights ' + weights + ' bytes, the split model ' + q.size);
          return 'native\'s answer; both shards read; weights ' + weights + ' of ' + q.size + ' bytes (the rest headers); "' +
            (await text(p3, '#verdict')).slice(0, 80) + '"; ' + checkBytes('split', t);
        } finally {
          await p3.context().close();
        }
      });
      await test('hub: the gated repo -> #error says so', async () => {
        const a = await answer(page, async () => { await page.fill('#repo', 'ggfit/gated-GGUF'); await page.click('#repo-go'); });
        check(a.state === 'error', 'data-state=' + a.state);
        check(await visible(page, '#error'), '#error is not visible');
        const e = await text(page, '#error');
        check(/gated|HF_TOKEN|token/i.test(e), '#error: ' + e);
        await shot(page, 'desktop-gated');
        return '"' + e.slice(0, 160) + '"';
      });
      await test('hub: a fresh page, Q4_K_M alone: bytes against headers', async () => {
        const p2 = await open(pageHttp);
        try {
          await setHardware(p2, 'rtx-4090', '32GiB');
          const mark = logLines().length;
          const a = await answer(p2, async () => { await p2.fill('#repo', 'ggfit/Qwen3-GGUF:Q4_K_M'); await p2.click('#repo-go'); });
          const t = served(mark);
          check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
          agree(a.last, [], { MODEL_ENDPOINT: hub });
          return checkBytes('fresh Q4_K_M', t) + '; answered in ' + a.ms.toFixed(0) + ' ms';
        } finally {
          await p2.context().close();
        }
      });
      await test('hub: from file:// (Origin null)', async () => {
        const p5 = await open(pageFile + '?endpoint=' + encodeURIComponent(hub));
        try {
          await setHardware(p5, 'rtx-4090', '32GiB');
          const a = await answer(p5, async () => { await p5.fill('#repo', 'ggfit/Qwen3-GGUF:Q4_K_M'); await p5.click('#repo-go'); });
          check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
          agree(a.last, [], { MODEL_ENDPOINT: hub });
          return 'native\'s answer';
        } finally {
          await p5.context().close();
        }
      });
      await test('hub: with a token (Authorization: CORS preflights)', async () => {
        const p4 = await open(pageHttp);
        try {
          await setHardware(p4, 'rtx-4090', '32GiB');
          await p4.fill('#token', 'hf_ggfitTestToken0123456789abcdefghijklmnop');
          const mark = logLines().length;
          const a = await answer(p4, async () => { await p4.fill('#repo', 'ggfit/Qwen3-GGUF:Q4_K_M'); await p4.click('#repo-go'); });
          const t = served(mark);
          check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
          agree(a.last, [], { MODEL_ENDPOINT: hub, HF_TOKEN: 'hf_ggfitTestToken0123456789abcdefghijklmnop' });
          check(t.preflights > 0, 'no OPTIONS preflight: was the token sent?');
          return checkBytes('token', t);
        } finally {
          await p4.context().close();
        }
      });
    } finally {
      await page.context().close();
    }
  }

  // 3. keyboard: labels, tab order, the file chooser from the keyboard
  await test('keyboard: labels and tab order', async () => {
    const page = await open(pageFile);
    try {
      const unlabelled = await page.evaluate(() => [...document.querySelectorAll('input, textarea, select, button, [role=button]')]
        .filter((e) => e.type !== 'hidden')
        .filter((e) => {
          const tag = e.tagName.toLowerCase();
          const named = e.getAttribute('aria-label') || e.getAttribute('aria-labelledby') || e.title;
          if (tag === 'button' || e.getAttribute('role') === 'button') return !(named || e.textContent.trim());
          return !((e.labels && e.labels.length && [...e.labels].some((l) => l.textContent.trim())) || named);
        }).map((e) => e.id || e.name || e.outerHTML.slice(0, 60)));
      check(!unlabelled.length, 'without a label: ' + unlabelled.join(', '));
      const order = [];
      await page.evaluate(() => { document.activeElement && document.activeElement.blur(); });
      for (let i = 0; i < 60; i++) {
        await page.keyboard.press('Tab');
        const id = await page.evaluate(() => {
          const e = document.activeElement;
          return !e || e === document.body ? '(body)' : e.id || e.tagName.toLowerCase();
        });
        if (order.length && id === order[0]) break;
        order.push(id);
      }
      // the file input itself may be hidden behind #drop (a button opening the chooser)
      const fileStop = order.includes('file') ? 'file' : order.includes('drop') ? 'drop' : null;
      check(fileStop, 'neither #file nor #drop in the tab order: ' + order.join(' '));
      for (const id of ['repo', 'repo-go', 'line', 'line-go', 'gpus', 'ram'])
        check(order.includes(id), '#' + id + ' not in the tab order: ' + order.join(' '));
      check(order.indexOf(fileStop) < order.indexOf('repo') && order.indexOf('repo') < order.indexOf('line'),
        'the order: ' + order.join(' '));
      let chooser = 'the #file input';
      if (fileStop === 'drop') {
        // Enter, then Space, each opening the chooser (closed again, no file
        // chosen, before the next: one open chooser holds the next back);
        // a key press that opened nothing is tried again, twice at most
        // (the window's focus in a headless browser is not always there)
        const opens = async (key) => {
          for (let tries = 1; ; tries++) {
            await page.bringToFront();   // (a file chooser opens from the focused window only)
            await page.focus('#drop');
            try {
              const [fc] = await Promise.all([page.waitForEvent('filechooser', { timeout: 3000 }), page.keyboard.press(key)]);
              await fc.setFiles([]);
              return fc.isMultiple();
            } catch (e) {
              if (tries === 3) throw new Error(JSON.stringify(key) + ' on #drop opened no file chooser: ' + e.message.split('\n')[0]);
            }
          }
        };
        const multiple = (await opens('Enter')) && (await opens(' '));
        chooser = 'Enter and Space on #drop open the file chooser' + (multiple ? ' (multiple)' : '');
      }
      return 'every control labelled; tab order: ' + order.join(' ') + '; ' + chooser;
    } finally {
      await page.context().close();
    }
  });

  // the screens before any answer
  await test('screenshots: the empty page', async () => {
    for (const [name, ctx] of [['desktop-empty', undefined],
      ['phone-empty', { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }]]) {
      const page = await open(pageFile, ctx);
      try { await shot(page, name); } finally { await page.context().close(); }
    }
    return shots.length + ' screenshots';
  });

  // 4. a pasted llama-server line, and the copy button (last: after a
  // clipboard read, chromium loses the next file chooser, another context's)
  await test('pasted line -> #cmd, #copy', async () => {
    const page = await open(pageHttp, { permissions: ['clipboard-read', 'clipboard-write'] });
    try {
      await setHardware(page, 'rtx-4090', '32GiB');
      const line = 'llama-server -hf ggfit/Qwen3-GGUF:Q4_K_M -c 8192 -ngl 99';
      const a = await answer(page, async () => { await page.fill('#line', line); await page.click('#line-go'); });
      check(a.state === 'done', 'data-state=' + a.state + ': ' + a.error.trim());
      const ag = agree(a.last, [], { MODEL_ENDPOINT: hub });
      const cmd = await text(page, '#cmd');
      check(/^llama-server /.test(cmd), '#cmd: ' + cmd);
      check(/-c 8192/.test(cmd), '#cmd lost the line\'s -c 8192: ' + cmd);
      await shot(page, 'desktop-line');
      await page.click('#copy');
      let copied = null, how = 'clipboard';
      try {
        copied = await page.evaluate(() => navigator.clipboard.readText());
      } catch (e) {
        how = 'selection (no clipboard: ' + e.message.split('\n')[0] + ')';
        copied = await page.evaluate(() => String(window.getSelection()));
      }
      check(copied && copied.trim() === cmd, '#copy gave ' + JSON.stringify(copied) + ' for ' + JSON.stringify(cmd));
      return '"' + cmd + '" (native\'s answer: ' + ag.where.replace(/^ggfit /, '') + '); copied via ' + how;
    } finally {
      await page.context().close();
    }
  });

  await test('offline: nothing beyond 127.0.0.1 and file://', async () => {
    check(!external.length, external.length + ' requests elsewhere: ' + [...new Set(external)].slice(0, 5).join(' '));
    return 'no request elsewhere';
  });
  await test('no uncaught error in the page', async () => {
    check(!pageErrors.length, pageErrors.slice(0, 3).join(' | '));
    return 'none';
  });

  await browser.close();
  for (const f of shots) console.log('  screenshot ' + f);
  console.log('  verdicts (the choice to the verdict shown): ' + verdicts.join('; '));
  console.log('  local answers (setInputFiles to data-state=done): ' + timings.map(([l, ms, runs]) => l + ' ' + ms.toFixed(1) + ' ms (' + runs.join(', ') + ')').join('; '));
  console.log('  native runs compared: ' + nativeRuns);
  console.log('web: ' + passed + ' passed, ' + failed + ' failed');
  process.exit(failed ? 1 : 0);
}

main().catch(async (e) => {
  console.log('FAIL web.test.js: ' + (e && e.stack || e));
  if (browser) await browser.close().catch(() => {});
  console.log('web: ' + passed + ' passed, ' + (failed + 1) + ' failed');
  process.exit(1);
});
