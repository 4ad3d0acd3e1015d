// ggfit's web page: runs the ggfit CLI (WebAssembly, wasm/ggfit.js's GGFIT)
// and draws its JSON. Every figure shown comes from the C's answer; this
// file only builds command lines and renders.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const SVGNS = 'http://www.w3.org/2000/svg';
  const HW_KEY = 'ggfit.hardware';
  const query = new URLSearchParams(location.search);
  const endpoint = query.get('endpoint') || '';
  let g = null;                 // the one GGFIT instance
  let files = new Map();        // dropped file name -> /local/ path
  let source = null;            // what is planned: {kind: file|hf|url|line|list, ...}
  let catalog = [];             // devices --catalog --json's devices
  let busy = false, again = false, seq = 0;
  let lastPlan = null, lastSweep = null, jump = false, autoMm = false;   // jump: a new model, shown on a phone

  function setState(s) {
    document.body.dataset.state = s;
    $('answer').setAttribute('aria-busy', String(s === 'busy' || s === 'loading'));
  }
  function el(tag, attrs, text, ns) {
    const e = document.createElementNS(ns || 'http://www.w3.org/1999/xhtml', tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  const sv = (tag, attrs, text) => el(tag, attrs, text, SVGNS);
  const MiB = 1048576, GiB = 1073741824;
  function bytes(n) {
    const a = Math.abs(n);
    if (a >= 100 * GiB) return (n / GiB).toFixed(0) + ' GiB';
    if (a >= GiB) return (n / GiB).toFixed(1) + ' GiB';
    if (a >= MiB) return Math.round(n / MiB) + ' MiB';
    return Math.ceil(n / 1024) + ' KiB';
  }
  function tps(x) {
    return x >= 100 ? Math.round(x).toString() : x >= 10 ? x.toFixed(1) : x.toFixed(2);
  }
  function ctxLabel(n) {
    return n >= 1024 && n % 1024 === 0 ? n / 1024 + 'K' : String(n);
  }

  // ---- the command line's parts --------------------------------------
  function localPath(v) {
    if (files.has(v)) return files.get(v);
    const base = v.replace(/^.*[\\/]/, '');
    return files.has(base) ? files.get(base) : null;
  }
  function catalogHas(id, pred) {
    const d = catalog.find((x) => x.id === id.trim().toLowerCase());
    return d ? pred(d) : false;
  }
  function hardware() {
    const gpus = $('gpus').value.trim().replace(/\s*,\s*/g, ',').replace(/,$/, '');
    const ram = $('ram').value.trim();
    const a = ['--gpu', gpus || 'none'];
    // a Mac's or APU's system memory is its own (the catalog's), else the field's
    const own = gpus.split(',').some((id) => catalogHas(id, (d) => d.system_memory > 0));
    if (ram || !own) a.push('--host-mem', ram || '32GiB');
    if ($('llama').value) a.push('--llama-version', $('llama').value);
    return a;
  }
  function question() {
    const a = [];
    const v = (id) => $(id).value.trim();
    if (v('ctx')) a.push('-c', v('ctx'));
    if (v('ctk')) a.push('-ctk', v('ctk'), '-ctv', v('ctk'));
    if (v('np')) a.push('-np', v('np'));
    if (v('fa')) a.push('-fa', v('fa'));
    if (v('mmproj')) a.push('-mm', localPath(v('mmproj')) || v('mmproj'));
    if (v('draft')) a.push('-md', localPath(v('draft')) || v('draft'));
    return a;
  }
  function model(src) {
    if (src.kind === 'file' || src.kind === 'url') return ['-m', src.path];
    const a = ['-hf', src.repo];
    if (src.file) a.push('-hff', src.file);
    return a;
  }
  function env() {
    const e = {};
    if (endpoint) e.MODEL_ENDPOINT = endpoint;
    if ($('token').value.trim()) e.HF_TOKEN = $('token').value.trim();
    return Object.assign(e, (source && source.env) || {});
  }

  // A shell's words: quotes, backslashes, line continuations, # comments.
  function shellWords(s) {
    const out = [];
    let cur = null, i = 0;
    while (i < s.length) {
      const c = s[i];
      if (c === '\\') {
        if (s[i + 1] !== '\n') cur = (cur || '') + (s[i + 1] || '');
        i += 2;
      } else if (c === "'") {
        const j = s.indexOf("'", i + 1);
        if (j < 0) throw new Error('the line has an unmatched single quote');
        cur = (cur || '') + s.slice(i + 1, j);
        i = j + 1;
      } else if (c === '"') {
        cur = cur || '';
        for (i++; i < s.length && s[i] !== '"'; i++) {
          if (s[i] === '\\' && '"\\$`\n'.indexOf(s[i + 1]) >= 0) {
            i++;
            if (s[i] !== '\n') cur += s[i];
          } else cur += s[i];
        }
        if (i >= s.length) throw new Error('the line has an unmatched double quote');
        i++;
      } else if (/\s/.test(c)) {
        if (cur !== null) out.push(cur);
        cur = null;
        i++;
      } else if (c === '#' && cur === null) {
        while (i < s.length && s[i] !== '\n') i++;
      } else {
        cur = (cur || '') + c;
        i++;
      }
    }
    if (cur !== null) out.push(cur);
    return out;
  }
  const FILE_FLAGS = ['-m', '--model', '-mm', '--mmproj', '-md', '--model-draft', '--spec-draft-model'];
  // the pasted line -> {prog, words, env}; files it names are the dropped ones
  function parseLine(text) {
    let words = shellWords(text.replace(/^\s*\$\s+/, ''));
    const envs = {};
    while (words.length && /^[A-Za-z_]\w*=/.test(words[0])) {
      const k = words[0].indexOf('=');
      envs[words[0].slice(0, k)] = words[0].slice(k + 1);
      words.shift();
    }
    let prog = 'llama-server';
    if (words.length && words[0][0] !== '-') {
      const base = words.shift().replace(/^.*[\\/]/, '').replace(/\.exe$/i, '');
      if (/^llama-/.test(base)) prog = base;
    }
    if (!words.length) throw new Error('the line has no flags: paste a whole llama-server command line');
    words = words.slice();
    for (let i = 0; i < words.length; i++) {
      let flag = words[i], val = words[i + 1], eq = flag.indexOf('=');
      if (flag.startsWith('--') && eq > 0) { val = flag.slice(eq + 1); flag = flag.slice(0, eq); }
      if (FILE_FLAGS.indexOf(flag) < 0 || val === undefined) continue;
      if (/^https?:\/\//i.test(val)) continue;
      const p = localPath(val);
      if (!p)
        throw new Error('the line\'s ' + flag + ' names ' + val + ', a file this page cannot read: ' +
                        'drop that file here (only its header is read), or use -hf user/model:QUANT in the line');
      if (eq > 0 && words[i].startsWith('--')) words[i] = flag + '=' + p;
      else words[++i] = p;
    }
    return { kind: 'line', prog, words, env: envs };
  }

  // ---- running ggfit ---------------------------------------------------
  async function ggfit(argv) {
    const t = performance.now();
    const r = await g.run(argv, { env: env() });
    return { argv: argv.slice(), code: r.code, stdout: r.stdout, stderr: r.stderr,
             ms: Math.round(performance.now() - t) };
  }
  function message(r) {
    const m = (r.stderr || '').split('\n').filter((l) => l && !/ -h for help$/.test(l))
      .map((l) => l.replace(/^ggfit( \w+)?: /, '').split('/local/').join('')).join('\n').trim();
    return (m || 'ggfit failed (exit status ' + r.code + ')').slice(0, 800);
  }
  function parse(r) {
    if (r.code === 2 || r.code > 3) throw new Error(message(r));
    try { return JSON.parse(r.stdout); } catch (e) { throw new Error(message(r)); }
  }
  function fail(msg) {
    clearAnswer();
    // the CLI's words name HF_TOKEN: here it is the token field
    if (/HF_TOKEN/.test(msg) && !$('token').value) msg += '\n(Here: paste the token in the Hugging Face token field, under Hardware.)';
    $('error').textContent = msg;
    $('error').hidden = false;
    $('status').textContent = '';
    setState('error');
  }
  function clearAnswer() {
    $('error').hidden = true;
    $('verdict').textContent = '';
    $('verdict').className = 'verdict';
    $('quants-box').hidden = true;
    $('plan-box').hidden = true;
  }

  async function answer() {
    if (!g) return;
    if (busy) { again = true; return; }
    if (!source) { fail('Choose a model first: drop a GGUF file, name a Hugging Face repo, or paste a llama-server line.'); return; }
    busy = true;
    const my = ++seq;
    setState('busy');
    $('status').textContent = 'Reading the header and planning…';
    saveHardware();
    try {
      if (source.kind === 'list') await quantList();
      else await plan();
      if (my === seq) setState('done');
      if (jump && window.matchMedia && matchMedia('(max-width: 700px)').matches) $('answer').scrollIntoView();
      jump = false;
    } catch (e) {
      fail(String(e.message || e));
    } finally {
      busy = false;
      if (again) { again = false; answer(); }
    }
  }

  async function quantList() {
    const r = await ggfit(['-hf', source.repo, '--list'].concat(hardware(), question(), ['--json']));
    window.ggfitLast = r;
    window.ggfitRuns = [r];
    const j = parse(r);
    clearAnswer();
    $('status').textContent = 'For llama.cpp ' + j.llama.text + ' · ' + r.ms + ' ms';
    renderQuants(j);
  }

  async function plan() {
    const src = source;
    let argv, sweep;
    if (src.kind === 'line') {
      argv = hardware().concat(['--json', '--', src.prog], src.words);
      sweep = src.prog === 'llama-server' ? ['sweep'].concat(hardware(), ['--json'], src.words) : null;
    } else {
      argv = model(src).concat(hardware(), question(), ['--json']);
      sweep = ['sweep'].concat(model(src), hardware(), question(), ['--json']);
    }
    const r = await ggfit(argv);
    window.ggfitLast = r;
    window.ggfitRuns = [r];
    const j = parse(r);
    // the line to paste: the CLI's own (--print-command), when there is one
    let line = '';
    if (j.argv && j.argv.length) {
      const k = argv.indexOf('--json');
      const pc = await ggfit(argv.slice(0, k).concat(['--print-command'], argv.slice(k + 1)));
      window.ggfitRuns.push(pc);
      if (pc.code === 0 || pc.code === 1 || pc.code === 3) line = pc.stdout.trim();
    }
    clearAnswer();
    lastPlan = j;
    renderPlan(j, line, r.ms);
    $('plan-box').hidden = false;
    drawBars(j);
    lastSweep = null;
    const box = $('sweep');
    box.textContent = '';
    if (sweep) {
      $('status').textContent += ' · drawing the sweep…';
      const s = await ggfit(sweep);
      window.ggfitRuns.push(s);
      try { lastSweep = parse(s); } catch (e) { lastSweep = { error: e.message }; }
      $('status').textContent = $('status').textContent.replace(' · drawing the sweep…', '');
    } else lastSweep = { error: 'the sweep is for llama-server lines' };
    drawSweep(lastSweep);
  }

  // ---- rendering -------------------------------------------------------
  const VERDICT = { fits: 'ok', fits_part_in_ram: 'part', host_short: 'warn', no_fit: 'bad' };
  function renderPlan(j, line, ms) {
    const v = j.verdict || {};
    const what = source.kind === 'line' ? 'The line' : (source.name || source.repo || source.path);
    $('verdict').textContent = what + ': ' + (v.summary || j.status) + '.';
    $('verdict').className = 'verdict ' + (VERDICT[v.status] || (j.exit_status === 0 ? 'ok' : 'bad'));
    window.ggfitVerdictAt = performance.now();   // for the tests: the verdict shown
    $('status').textContent = 'For llama.cpp ' + j.llama.text +
      (j.llama.exact ? '' : ' (nearest rules: ' + j.llama.match + ')') + ' · ' + ms + ' ms';
    const sp = j.speed;
    const speed = $('speed');
    speed.textContent = '';
    if (sp) {
      const of = sp.of === 'flags_as_given' ? 'the flags as given, were they to fit'
        : sp.of === 'llama_cpp_fit' ? "llama.cpp's own fit" : 'this plan';
      speed.append(el('strong', {}, 'pp' + sp.n_prompt + ' ' + tps(sp.pp_tps) + ' t/s'), ' prompt · ',
                   el('strong', {}, 'tg' + sp.n_gen + ' ' + tps(sp.tg_tps) + ' t/s'), ' generation',
                   el('small', {}, ' (llama-bench at depth ' + sp.depth + ', for ' + of +
                      '; system memory ' + sp.host_bw_gbs + ' GB/s: ' + sp.host_bw_from + ')'));
    }
    const cmd = $('cmd');
    // no line to recommend: say what llama.cpp's own fit would still run
    // (j.args, its flags), which ggfit never refuses, beside the verdict
    const fitArgs = j.status === 'fits' && j.args ? j.args : '';
    cmd.textContent = line ? line.split('/local/').join('')
      : fitArgs ? 'No line recommended: llama.cpp\'s fit would still run it with ' + fitArgs +
                  ', and the verdict above says what happens then.'
      : 'No line: as asked it does not fit' + (j.changes && j.changes.length ? '; see the nearest changes below.' : '.');
    $('copy').hidden = !line;
    const ch = $('changes');
    ch.textContent = '';
    for (const c of j.changes || []) {
      const li = el('li');
      li.append(el('code', {}, c.change));
      if (c.in_place_of) li.append(' in place of ', el('code', {}, c.in_place_of));
      li.append(' · ' + bytes(c.spare) + ' to spare');
      ch.append(li);
    }
    $('changes-box').hidden = !ch.children.length;
    const notes = $('notes');
    notes.textContent = '';
    const add = (t) => { if (t) notes.append(el('li', {}, t)); };
    if (j.reason) add("llama.cpp's fit: " + j.reason);
    add(j.warning);
    (j.notes || []).forEach(add);
    for (const d of j.devices || []) add(d.assumed && d.name + ': ' + d.assumed);
    add(j.system_memory && 'System memory: ' + j.system_memory.source);
  }

  function renderQuants(j) {
    $('quants-repo').textContent = j.repo;
    const t = $('quants');
    t.textContent = '';
    const head = el('tr');
    for (const h of ['#', 'File', 'Quant', 'Size', 'Verdict', 'Context', 'GPU layers', 'tg t/s'])
      head.append(el('th', { scope: 'col' }, h));
    t.appendChild(el('thead')).append(head);
    const body = t.appendChild(el('tbody'));
    const tags = {};
    for (const q of j.quants) tags[q.quant] = (tags[q.quant] || 0) + 1;
    for (const q of j.quants) {
      const tr = el('tr', { class: VERDICT[q.status] || 'bad' });
      const shown = q.shards > 1 ? q.name.replace(/-0*1-of-\d+(\.gguf)$/i, '$1') + ' (' + q.shards + ' shards)' : q.name;
      const b = el('button', { type: 'button', class: 'link', title: q.name }, shown);
      const pick = tags[q.quant] === 1 ? { repo: j.repo + ':' + q.quant } : { repo: j.repo, file: q.name };
      b.addEventListener('click', () => {
        $('repo').value = pick.repo;
        source = { kind: 'hf', repo: pick.repo, file: pick.file, name: q.name };
        answer();
      });
      const sp = q.plan && q.plan.speed;
      tr.append(el('td', {}, q.rank), el('td'), el('td', {}, q.quant), el('td', {}, bytes(q.size)),
                el('td', {}, q.error || q.verdict), el('td', {}, q.n_ctx ? ctxLabel(q.n_ctx) : ''),
                el('td', {}, q.n_gpu_layers + '/' + (q.n_layer + 1)),
                el('td', {}, sp ? tps(sp.tg_tps) : ''));
      tr.children[1].append(b);
      body.append(tr);
    }
    const best = j.quants[0];
    $('verdict').textContent = best ? j.repo + ': best ' + best.name + ' (' + (best.error || best.verdict) + ').'
      : j.repo + ': no GGUF files.';
    $('verdict').className = 'verdict ' + (best ? VERDICT[best.status] || 'bad' : 'bad');
    $('quants-box').hidden = false;
  }

  const SEGS = [['held', 'not available (held by others)', 'c-h'], ['model', 'weights', 'c-w'], ['context', 'KV cache / context', 'c-k'],
                ['compute', 'compute', 'c-c'], ['other', 'other (prompt cache, projector, draft)', 'c-o'],
                ['margin', 'margin kept free', 'c-m'], ['free', 'free', 'c-f']];
  function drawBars(j) {
    const svg = $('bars');
    svg.textContent = '';
    const W = Math.max(280, svg.getBoundingClientRect().width || 600);
    const pools = (j.verdict && j.verdict.pools) || [];
    const rows = pools.map((p) => {
      const s = { model: 0, context: 0, compute: 0 };
      const parts = p.kind === 'device' ? [j.devices[p.device]] : p.kind === 'host' ? [j.host, j.cpu_extra] : [];
      for (const x of parts) if (x) for (const k in s) s[k] += x[k] || 0;
      const known = s.model + s.context + s.compute;
      s.other = Math.max(0, p.used - known);
      if (p.kind === 'unified') { s.other = p.used; }
      s.margin = Math.max(0, Math.min(p.margin, p.free_after));
      s.free = Math.max(0, p.free_after - p.margin);
      s.held = Math.max(0, p.total - p.free);
      return { p, s, span: Math.max(p.total, p.used + s.margin + s.free + s.held) };
    });
    const pad = 8, barH = 22, rowH = 58;
    let y = 4;
    // legend
    let x = pad;
    const over = rows.some((r) => r.span > r.p.total + MiB);
    for (const [k, name, cls] of SEGS.concat(over ? [['over', 'beyond its memory', 'over']] : [])) {
      if (k !== 'over' && !rows.some((r) => r.s[k] > 0)) continue;
      const w = 18 + name.length * 6.6;
      if (x + w > W - pad) { x = pad; y += 20; }
      svg.append(sv('rect', { x, y: y + 2, width: 12, height: 12, class: cls }));
      svg.append(sv('text', { x: x + 16, y: y + 12, class: 'lg' }, name));
      x += w + 10;
    }
    y += 30;
    for (const { p, s, span } of rows) {
      const scale = (W - 2 * pad) / span;   // each bar its own device's width
      const l1 = p.name + ': ' + bytes(p.used) + ' used of ' + bytes(p.free) + ' free';
      const l2 = (p.total !== p.free ? bytes(p.total) + ' total · ' : '') +
        (p.short_by > 0 ? 'short by ' + bytes(p.short_by) : bytes(p.free_after) + ' left');
      const two = (l1.length + l2.length + 3) * 7.4 > W;
      svg.append(sv('text', { x: pad, y: y + 12, class: 'lb' + (p.ok ? '' : ' bad') }, two ? l1 : l1 + ' · ' + l2));
      if (two) { y += 16; svg.append(sv('text', { x: pad, y: y + 12, class: 'lb' + (p.ok ? '' : ' bad') }, l2)); }
      let bx = pad;
      const by = y + 18;
      for (const [k, name, cls] of SEGS) {
        const w = s[k] * scale;
        if (w <= 0) continue;
        const r = sv('rect', { x: bx, y: by, width: Math.max(w, 0.5), height: barH, class: cls });
        r.append(sv('title', {}, p.name + ' ' + name + ': ' + bytes(s[k])));
        svg.append(r);
        if (w > 52) svg.append(sv('text', { x: bx + w / 2, y: by + 15, class: 'in ' + cls + 't' }, bytes(s[k])));
        bx += w;
      }
      // the pool's total: the line a bar must stay left of
      const tx = pad + p.total * scale;
      svg.append(sv('line', { x1: tx, x2: tx, y1: by - 4, y2: by + barH + 4, class: 'tot' }));
      if (bx > tx + 1) svg.append(sv('rect', { x: tx, y: by - 2, width: bx - tx, height: barH + 4, class: 'over' }));
      y += rowH;
    }
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + y);
    svg.setAttribute('height', y);
    svg.setAttribute('aria-label', 'memory per device: ' + rows.map((r) => r.p.name + ' ' + bytes(r.p.used) +
      ' used of ' + bytes(r.p.free) + (r.p.ok ? '' : ', short by ' + bytes(r.p.short_by))).join('; '));
  }

  const LINE = ['#2360a5', '#b4451a', '#1f7a4a', '#8a6d00', '#0e7c86'], TG = '#6a2c91';
  function ticks(max) {
    const step0 = max / 4, p = Math.pow(10, Math.floor(Math.log10(step0 || 1)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= step0) || step0;
    const out = [];
    for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
    return out;
  }
  function drawSweep(d) {
    const svg = $('sweep');
    svg.textContent = '';
    const W = Math.max(280, svg.getBoundingClientRect().width || 600);
    if (!d || d.error || !d.points || !d.points.length) {
      svg.setAttribute('viewBox', '0 0 ' + W + ' 30');
      svg.setAttribute('height', 30);
      svg.append(sv('text', { x: 8, y: 20, class: 'lb' }, 'No sweep: ' + ((d && d.error) || 'no points')));
      return;
    }
    const pts = d.points;
    const L = 54, R = 12, PH = 150, gap = 46;
    const xs = pts.map((p) => Math.log2(p.x));
    const x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    const X = (v) => L + (x1 > x0 ? (Math.log2(v) - x0) / (x1 - x0) : 0.5) * (W - L - R);
    let top = 26;
    // legend line
    const legend = d.pools.map((p, i) => [p.name + ' used', LINE[i % LINE.length], ''])
      .concat([['tg, empty cache', TG, ''], ['tg, full cache', TG, '5 4']],
              pts.some((p) => !p.fits) ? [['does not fit', '#c0392b', 'x']] : []);
    function panel(title, max, series, limits) {
      const Y = (v) => top + PH - (v / max) * PH;
      svg.append(sv('text', { x: L, y: top - 8, class: 'ax' }, title));
      for (const t of ticks(max)) {
        svg.append(sv('line', { x1: L, x2: W - R, y1: Y(t), y2: Y(t), class: 'grid' }));
        svg.append(sv('text', { x: L - 6, y: Y(t) + 4, class: 'tk', 'text-anchor': 'end' }, +t.toFixed(1)));
      }
      let lastX = 1e9;   // labelled from the right: the largest context always
      pts.slice().reverse().forEach((p) => {
        const x = X(p.x);
        svg.append(sv('line', { x1: x, x2: x, y1: top + PH, y2: top + PH + 4, class: 'axl' }));
        if (lastX - x >= 34) { svg.append(sv('text', { x, y: top + PH + 16, class: 'tk', 'text-anchor': 'middle' }, ctxLabel(p.x))); lastX = x; }
      });
      svg.append(sv('line', { x1: L, x2: W - R, y1: top + PH, y2: top + PH, class: 'axl' }));
      svg.append(sv('line', { x1: L, x2: L, y1: top, y2: top + PH, class: 'axl' }));
      for (const l of limits || [])
        svg.append(sv('line', { x1: L, x2: W - R, y1: Y(l.v), y2: Y(l.v), stroke: l.c, class: 'lim' }));
      for (const s of series) {
        const path = pts.map((p, i) => (i ? 'L' : 'M') + X(p.x).toFixed(1) + ' ' + Y(s.f(p)).toFixed(1)).join(' ');
        svg.append(sv('path', { d: path, stroke: s.c, 'stroke-dasharray': s.dash || '', class: 'ln' }));
        for (const p of pts) {
          const c = sv('circle', { cx: X(p.x), cy: Y(s.f(p)), r: 3.5, fill: p.fits ? s.c : '#fff', stroke: p.fits ? s.c : '#c0392b', class: 'pt' });
          c.append(sv('title', {}, 'context ' + p.x + ': ' + s.name + ' ' + s.fmt(s.f(p)) + (p.fits ? '' : ' (does not fit)') + ', -ngl ' + p.n_gpu_layers));
          svg.append(c);
        }
      }
      if (d.n_ctx && lastPlan && lastPlan.n_ctx) {
        const c = lastPlan.n_ctx;
        if (Math.log2(c) >= x0 && Math.log2(c) <= x1)
          svg.append(sv('line', { x1: X(c), x2: X(c), y1: top, y2: top + PH, class: 'mark' }));
      }
      top += PH + gap;
    }
    const mem = d.pools.map((p, i) => ({ name: p.name, c: LINE[i % LINE.length], f: (q) => q.used[i] / GiB, fmt: (v) => v.toFixed(2) + ' GiB' }));
    const memMax = Math.max.apply(null, pts.map((p) => Math.max.apply(null, p.used)).concat(d.pools.map((p) => p.limit))) / GiB * 1.05;
    // the legend, wrapped
    let lx = 8, ly = 12;
    for (const [name, c, dash] of legend) {
      const w = 26 + name.length * 6.8;
      if (lx + w > W - R) { lx = 8; ly += 18; }
      if (dash === 'x') svg.append(sv('circle', { cx: lx + 8, cy: ly - 4, r: 3.5, fill: '#fff', stroke: c }));
      else svg.append(sv('line', { x1: lx, x2: lx + 18, y1: ly - 4, y2: ly - 4, stroke: c, 'stroke-dasharray': dash, class: 'ln' }));
      svg.append(sv('text', { x: lx + 22, y: ly, class: 'lg' }, name));
      lx += w + 12;
    }
    top = ly + 40;
    panel('memory, GiB (dashed: each one\'s limit)', memMax, mem,
          d.pools.map((p, i) => ({ v: p.limit / GiB, c: LINE[i % LINE.length] })));
    const tgMax = Math.max.apply(null, pts.map((p) => Math.max(p.tg_tps, p.tg_tps_full))) * 1.1;
    panel('generation, tokens/s', tgMax || 1, [
      { name: 'tg (empty cache)', c: TG, f: (p) => p.tg_tps, fmt: (v) => tps(v) + ' t/s' },
      { name: 'tg (full cache)', c: TG, dash: '5 4', f: (p) => p.tg_tps_full, fmt: (v) => tps(v) + ' t/s' }]);
    svg.append(sv('text', { x: (L + W - R) / 2, y: top - gap + 32, class: 'ax', 'text-anchor': 'middle' },
                  'context (tokens' + (lastPlan && lastPlan.n_ctx ? '; grey line: this plan\'s ' + ctxLabel(lastPlan.n_ctx) : '') + ')'));
    const h = top - gap + 40;
    svg.setAttribute('viewBox', '0 0 ' + W + ' ' + h);
    svg.setAttribute('height', h);
    svg.setAttribute('aria-label', 'memory and generation speed against the context, ' + pts.length + ' points from ' +
      ctxLabel(pts[0].x) + ' to ' + ctxLabel(pts[pts.length - 1].x) + '; fits up to ' +
      (pts.filter((p) => p.fits).map((p) => ctxLabel(p.x)).pop() || 'none'));
  }

  // ---- inputs ------------------------------------------------------------
  // Workaround for GGFIT.setFiles on a page (not a worker): /local is not
  // made (ENOENT), and emscripten's WORKERFS mount asserts a worker
  // (FileReaderSync); its reads go through GGFIT's own stream_ops.read.
  function useFiles(list) {
    list = Array.from(list || []);
    if (!list.length || !g) return;
    let paths;
    try { paths = g.setFiles(list); } catch (e) { fail('These files cannot be read here: ' + (e.message || e)); return; }
    files = new Map(list.map((f, i) => [f.name, paths[i]]));
    const dl = $('local-files');
    dl.textContent = '';
    list.forEach((f) => dl.append(el('option', { value: f.name })));
    $('files').textContent = list.map((f) => f.name + ' (' + bytes(f.size) + ')').join(', ');
    const ggufs = list.filter((f) => /\.gguf$/i.test(f.name));
    const models = ggufs.filter((f) => !/mmproj/i.test(f.name));
    const proj = ggufs.find((f) => /mmproj/i.test(f.name));
    if (autoMm || !$('mmproj').value) { $('mmproj').value = proj ? proj.name : ''; autoMm = !!proj; }
    // the model: a split one's first shard, else the largest file
    const m = models.find((f) => /-0*1-of-\d+\.gguf$/i.test(f.name)) ||
      models.reduce((a, f) => (!a || f.size > a.size ? f : a), null);
    if (!m) { fail('No model among the files: drop a .gguf model file (an mmproj alone is not a model).'); return; }
    source = { kind: 'file', path: files.get(m.name), name: m.name };
    jump = true;
    answer();
  }
  function unAuto() {   // an mmproj the files brought is theirs
    if (autoMm) $('mmproj').value = '';
    autoMm = false;
  }
  function repoGo() {
    unAuto();
    const v = $('repo').value.trim();
    if (!v) { fail('Name a Hugging Face repo (user/model or user/model:QUANT) or a GGUF URL.'); return; }
    if (/^https?:\/\//i.test(v)) source = { kind: 'url', path: v, name: v.replace(/^.*\//, '') };
    else if (v.indexOf(':') > 0) source = { kind: 'hf', repo: v, name: v };
    else source = { kind: 'list', repo: v };
    jump = true;
    answer();
  }
  function lineGo() {
    unAuto();
    try { source = parseLine($('line').value); } catch (e) {
      source = null;
      window.ggfitLast = null;   // nothing ran
      window.ggfitRuns = [];
      fail(e.message);
      return;
    }
    jump = true;
    answer();
  }
  function saveHardware() {
    try {
      localStorage.setItem(HW_KEY, JSON.stringify({ gpus: $('gpus').value, ram: $('ram').value, llama: $('llama').value }));
    } catch (e) { /* storage off: not remembered */ }
  }
  function loadHardware() {
    let h = null;
    try { h = JSON.parse(localStorage.getItem(HW_KEY) || 'null'); } catch (e) { h = null; }
    $('gpus').value = h && typeof h.gpus === 'string' ? h.gpus : 'rtx-3090';
    $('ram').value = h && typeof h.ram === 'string' ? h.ram : '32GiB';
    if (h && h.llama && Array.from($('llama').options).some((o) => o.value === h.llama)) $('llama').value = h.llama;
  }
  // the datalist offers catalog ids after what is typed up to the last comma
  function gpuSuggest() {
    const v = $('gpus').value, k = v.lastIndexOf(',');
    const pre = k >= 0 ? v.slice(0, k + 1) : '';
    const dl = $('gpu-list');
    if (dl.dataset.pre === pre && dl.children.length) return;
    dl.dataset.pre = pre;
    dl.textContent = '';
    for (const d of catalog)
      dl.append(el('option', { value: pre + d.id, label: d.name + ' · ' + bytes(d.memory) }));
  }

  function wire() {
    const file = $('file'), drop = $('drop');
    // emptied once read, so that choosing the same file again answers again
    $('example').addEventListener('click', example);
    file.addEventListener('change', () => { window.ggfitInputAt = performance.now(); const l = Array.from(file.files || []); file.value = ''; useFiles(l); });
    drop.addEventListener('click', () => file.click());
    drop.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); file.click(); }
    });
    // files dropped anywhere on the page (text drops left to the fields)
    const isFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).indexOf('Files') >= 0;
    document.addEventListener('dragover', (e) => { if (isFiles(e)) { e.preventDefault(); drop.classList.add('over'); } });
    document.addEventListener('dragleave', (e) => { if (!e.relatedTarget) drop.classList.remove('over'); });
    document.addEventListener('drop', (e) => {
      drop.classList.remove('over');
      if (!isFiles(e)) return;
      e.preventDefault();
      useFiles(e.dataTransfer.files);
    });
    $('repo-go').addEventListener('click', repoGo);
    $('repo').addEventListener('keydown', (e) => { if (e.key === 'Enter') { e.preventDefault(); repoGo(); } });
    $('line-go').addEventListener('click', lineGo);
    $('line').addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); lineGo(); }
    });
    $('form').addEventListener('submit', (e) => { e.preventDefault(); answer(); });
    for (const id of ['gpus', 'ram', 'llama', 'ctx', 'ctk', 'np', 'fa', 'mmproj', 'draft'])
      $(id).addEventListener('change', () => { if (id === 'mmproj') autoMm = false; if (source) answer(); });
    $('gpus').addEventListener('input', gpuSuggest);
    $('gpus').addEventListener('focus', gpuSuggest);
    $('copy').addEventListener('click', copy);
    let t = 0;
    window.addEventListener('resize', () => {
      clearTimeout(t);
      t = setTimeout(() => {
        if (!$('plan-box').hidden && lastPlan) { drawBars(lastPlan); drawSweep(lastSweep); }
      }, 150);
    });
  }
  function copy() {
    const text = $('cmd').textContent, btn = $('copy');
    const done = (ok) => {
      btn.textContent = ok ? 'Copied' : 'Select and copy';
      setTimeout(() => { btn.textContent = 'Copy'; }, 1500);
    };
    const fallback = () => {
      const ta = el('textarea', { readonly: '', class: 'sr' });
      ta.value = text;
      document.body.append(ta);
      ta.select();
      let ok = false;
      try { ok = document.execCommand('copy'); } catch (e) { ok = false; }
      ta.remove();
      btn.focus();
      done(ok);
    };
    if (navigator.clipboard && navigator.clipboard.writeText)
      navigator.clipboard.writeText(text).then(() => done(true), fallback);
    else fallback();
  }

  // The example: a real model's header shipped in the page (example.js,
  // gzip in base64), as a File. Planned once while the page waits, so that
  // the WebAssembly a plan runs is compiled before the first real answer.
  async function exampleFile() {
    const ex = window.GGFIT_EXAMPLE;
    if (!ex || typeof DecompressionStream === 'undefined') return null;
    const gz = Uint8Array.from(atob(ex.gz), (c) => c.charCodeAt(0));
    const raw = await new Response(new Blob([gz]).stream().pipeThrough(new DecompressionStream('gzip'))).blob();
    return new File([raw], ex.name);
  }
  async function warmUp() {
    try {
      const f = await exampleFile();
      if (!f || source || busy) return;
      $('example').hidden = false;
      const p = g.setFiles([f])[0];
      // a card too small for it: the fit's search runs too (twice: the
      // engine compiles what runs often a second time, faster)
      const hw = ['--gpu', 'rtx-3060-12gb', '--host-mem', '32GiB'];
      for (let i = 0; i < 2 && !source; i++) {
        await g.run(['-m', p].concat(hw, ['--json']));
        await g.run(['sweep', '-m', p].concat(hw, ['--json']));
      }
    } catch (e) { /* only a warm-up */ }
    window.ggfitWarm = true;
  }
  async function example() {
    window.ggfitInputAt = performance.now();
    const f = await exampleFile();
    if (f) useFiles([f]);
  }

  async function start() {
    setState('loading');
    wire();
    // another hub than Hugging Face, set by the page's address: said where
    // the token is typed, since the token goes there
    if (endpoint) {
      const n = $('hub-note');
      n.textContent = 'Repos are read from ' + endpoint + ' (this page\'s address says so), and a token typed here is sent there.';
      n.hidden = false;
    }
    try {
      g = await GGFIT.load();
      const v = await g.run(['--version']);
      const sel = $('llama');
      const found = [];
      v.stdout.replace(/\b(b\d+) \(([^)]*)\)/g, (m, b, info) => { found.push([b, info]); return m; });
      found.sort((a, b) => +b[0].slice(1) - +a[0].slice(1));
      found.forEach(([b, info], i) => sel.append(el('option', { value: b, title: info }, b + (i ? '' : ' (default)'))));
      if (!found.length) sel.append(el('option', { value: '' }, 'latest'));
      $('version').textContent = v.stdout.split('\n')[0];
      const c = await g.run(['devices', '--catalog', '--json']);
      try { catalog = JSON.parse(c.stdout).devices || []; } catch (e) { catalog = []; }
      loadHardware();
      gpuSuggest();
      $('status').textContent = 'Ready: drop a GGUF file, name a repo, or paste a llama-server line.';
      setState('ready');
      const pre = query.get('repo');
      if (pre) { $('repo').value = pre; repoGo(); window.ggfitWarm = true; }
      else warmUp();
    } catch (e) {
      fail('ggfit could not start in this browser: ' + (e.message || e));
    }
  }
  start();
})();
