// ggfit.js - ggfit's C, built for WebAssembly, as a JavaScript API: the
// same command lines as the ggfit CLI, answered with the CLI's own output.
// Used by the web page (web/) and the npm package (npm/); works in a
// browser (a <script> tag, or a page opened from file://) and in node.
//
//   const g = await GGFIT.load();              // node: require('ggfit').load()
//   const r = await g.run(['-m', 'model.gguf', '--gpu', '24G', '--json']);
//   r.code, r.stdout, r.stderr                 // as the CLI's
//   const plan = await g.json(['-m', url, '--gpu', 'RTX 4090']);
//
// Reading is asynchronous in JavaScript and synchronous in the C reader,
// so a command runs again from its start whenever it asked for bytes not
// held yet (a file's, or an HTTP reply): they are fetched, all at once,
// and the run repeats until it asks for nothing new (src/remote/
// http_fetch.c). Only the bytes asked for are read: a header, never a
// 60 GB file.
(function (root, factory) {
  if (typeof module === 'object' && module.exports) module.exports = factory();
  else root.GGFIT = factory();
})(typeof self !== 'undefined' ? self : this, function () {
  'use strict';

  const MAX_ROUNDS = 400;           // replays of one command
  const FIRST_READ = 4 << 20;       // a local file's first read (bytes)
  // src/remote/xfer.h's GGFIT__XFER_*
  const XFER = { DONE: 0, CONNECT: 1, STALLED: 2, REDIRECTS: 3, FAILED: 6 };
  const isNode = typeof process === 'object' && process.versions && process.versions.node &&
                 typeof window === 'undefined';

  // The byte ranges of one local file held so far (a browser's File).
  class FileBytes {
    constructor(file) { this.file = file; this.chunks = []; this.held = 0; }
    // bytes [pos, pos + n) if held, else null
    get(pos, n) {
      for (const c of this.chunks)
        if (pos >= c.start && pos + n <= c.start + c.bytes.length)
          return c.bytes.subarray(pos - c.start, pos - c.start + n);
      return null;
    }
    // what to read for a miss at pos: at least n, and as much again as is
    // held, so that a header costs a few reads, not one per parser step
    async read(pos, n) {
      const want = Math.max(n, FIRST_READ, this.held);
      const end = Math.min(this.file.size, pos + want);
      const bytes = new Uint8Array(await this.file.slice(pos, end).arrayBuffer());
      this.chunks.push({ start: pos, bytes });
      this.held += bytes.length;
    }
  }

  class Host {
    constructor() {
      this.regexes = [];
      this.replies = new Map();     // request key -> reply
      this.byId = [];
      this.pending = new Map();     // what the current run lacked: key -> () => Promise
      this.fetched = { requests: 0, bytes: 0 };
    }
    regexNew(pattern) {
      const re = new RegExp(pattern);   // throws SyntaxError: the C says why
      const id = this.regexes.indexOf(null);
      if (id >= 0) { this.regexes[id] = re; return id; }
      this.regexes.push(re);
      return this.regexes.length - 1;
    }
    regexTest(id, s) { return this.regexes[id].test(s); }
    regexFree(id) { this.regexes[id] = null; }
    http(req) {
      const key = JSON.stringify([req.url, req.from, req.len, req.token, req.inm]);
      const r = this.replies.get(key);
      if (r) return r.id;
      if (!this.pending.has(key))
        this.pending.set(key, () => this.fetchReply(req).then((reply) => {
          reply.id = this.byId.length;
          this.byId.push(reply);
          this.replies.set(key, reply);
        }));
      return -1;
    }
    reply(id) { return this.byId[id]; }

    // One GET, as src/remote/http_curl.c sends it: Range when asked, the
    // token, If-None-Match; redirects followed; the body cut at limit.
    async fetchReply(req) {
      const headers = {};
      if (req.from >= 0) headers.Range = 'bytes=' + req.from + '-' + (req.from + req.len - 1);
      if (req.token) headers.Authorization = 'Bearer ' + req.token;
      if (req.inm) headers['If-None-Match'] = req.inm;
      if (isNode) headers['Accept-Encoding'] = 'identity';   // a browser forbids setting it
      const ctl = new AbortController();
      let timedOut = false;
      const timer = (ms) => setTimeout(() => { timedOut = true; ctl.abort(); }, ms || 1e9);
      let t = timer(req.connectMs);
      const fail = (failure, detail) => ({ failure, detail, status: 0, headers: '', body: new Uint8Array(0), length: -1 });
      let res;
      this.fetched.requests++;
      try {
        res = await fetch(req.url, { headers, signal: ctl.signal, redirect: 'follow', cache: 'no-store' });
      } catch (e) {
        clearTimeout(t);
        if (timedOut) return fail(XFER.CONNECT, 'no connection in ' + req.connectMs + ' ms');
        const why = String((e.cause && (e.cause.message || e.cause.code)) || e.message || e);
        return fail(/redirect/i.test(why) ? XFER.REDIRECTS : XFER.FAILED, why);
      }
      clearTimeout(t);
      const parts = [];
      let n = 0;
      const limit = req.limit;
      try {
        const reader = res.body ? res.body.getReader() : null;
        while (reader && n < limit) {
          t = timer(req.stallMs);
          const { done, value } = await reader.read();
          clearTimeout(t);
          if (done) break;
          parts.push(value);
          n += value.length;
        }
        if (reader && n >= limit) { ctl.abort(); reader.cancel().catch(() => {}); }
      } catch (e) {
        clearTimeout(t);
        if (timedOut) return fail(XFER.STALLED, 'no byte in ' + req.stallMs + ' ms');
        return fail(XFER.FAILED, String(e.message || e));
      }
      const body = new Uint8Array(Math.min(n, limit));
      let at = 0;
      for (const p of parts) {
        const k = Math.min(p.length, body.length - at);
        body.set(p.subarray(0, k), at);
        at += k;
      }
      this.fetched.bytes += n;
      let lines = '';
      for (const h of ['etag', 'content-range'])
        if (res.headers.get(h) !== null) lines += h + ': ' + res.headers.get(h) + '\n';
      const cl = res.headers.get('content-length');
      return {
        failure: XFER.DONE, detail: '', status: res.status, headers: lines, url: res.url,
        length: cl !== null && /^\d+$/.test(cl) ? Number(cl) : -1, body,
      };
    }
  }

  class Ggfit {
    constructor(mod, host) {
      this.mod = mod;
      this.host = host;
      this.files = new Map();       // browser: name -> FileBytes
      this.mounted = false;
      this.out = [];
      this.err = [];
      this.queue = Promise.resolve();
    }
    // Browser: local files (File or Blob with a name) the commands read as
    // /local/<name>; returns those paths.
    setFiles(files) {
      const FS = this.mod.FS;
      const W = FS.filesystems.WORKERFS;
      if (this.mounted) FS.unmount('/local');
      if (!FS.analyzePath('/local').exists) FS.mkdir('/local');
      const list = Array.from(files);
      this.files = new Map();
      for (const f of list) this.files.set(f.name, new FileBytes(f));
      // WORKERFS's nodes, made here: its own mount wants a worker's
      // FileReaderSync, which its reads (load(), below) do not use
      const type = Object.assign({}, W, {
        mount: function () {
          const root = W.createNode(null, '/', W.DIR_MODE, 0);
          for (const f of list) W.createNode(root, f.name, W.FILE_MODE, 0, f, f.lastModifiedDate);
          return root;
        },
      });
      FS.mount(type, {}, '/local');
      this.mounted = true;
      return list.map((f) => '/local/' + f.name);
    }
    // Runs a command line (the words after "ggfit"); env: variables set
    // for it (HF_TOKEN, ...). Resolves to { code, stdout, stderr, rounds }.
    run(argv, opts) {
      // one command at a time: a replay must not meet another's
      const r = this.queue.then(() => this.runNow(argv, opts));
      this.queue = r.catch(() => {});
      return r;
    }
    async runNow(argv, opts) {
      const env = (opts && opts.env) || {};
      const m = this.mod;
      const saved = {};
      for (const k of Object.keys(env)) {
        const was = m.ccall('getenv', 'number', ['string'], [k]);
        saved[k] = was ? m.UTF8ToString(was) : null;
        setenv(m, k, env[k]);
      }
      try {
        for (let round = 1; round <= MAX_ROUNDS; round++) {
          this.host.pending.clear();
          this.out.length = 0;
          this.err.length = 0;
          const code = this.mod.callMain(argv.map(String));
          if (!this.host.pending.size)
            return { code, stdout: utf8(this.out), stderr: utf8(this.err), rounds: round };
          await Promise.all([...this.host.pending.values()].map((f) => f()));
        }
        throw new Error('ggfit: more than ' + MAX_ROUNDS + ' rounds of reading for one command');
      } finally {
        for (const k of Object.keys(env)) setenv(m, k, saved[k]);
      }
    }
    // Runs a command with --json and returns the parsed answer (a plan
    // that does not fit is an answer: its exit_status says so); a command
    // that fails (bad flags, an unreadable model) throws an Error with
    // ggfit's message, and its exit status in .code.
    async json(argv, opts) {
      const r = await this.run(argv.concat(argv.includes('--json') ? [] : ['--json']), opts);
      let j = null;
      if (r.code !== 2 && r.stdout.trim()) {
        try { j = JSON.parse(r.stdout); } catch (e) { j = null; }
      }
      if (j === null) {
        const e = new Error(r.stderr.replace(/^ggfit: /, '').trim() || 'ggfit failed: exit status ' + r.code);
        e.code = r.code;
        throw e;
      }
      return j;
    }

    // The commands by name, their answers as JSON. model: a path, a URL,
    // a Hugging Face repo ('user/model:QUANT', or { hf: ... }), or (a
    // page) a File or Blob, or bytes (a Uint8Array: a header is enough).
    // opts: gpu ('rtx-4090', '24GiB', or a list), hostMem ('32GiB'),
    // llamaVersion ('b10309'), flags (more words of the command line, as
    // ggfit -h lists them), env.
    plan(model, opts) { return this.json(this.model(model).concat(machine(opts)), opts); }
    bench(model, opts) { return this.json(['bench'].concat(this.model(model), machine(opts)), opts); }
    sweep(model, opts) { return this.json(['sweep'].concat(this.model(model), machine(opts)), opts); }
    inspect(model, opts) { return this.json(['inspect'].concat(this.model(model), (opts && opts.flags) || []), opts); }
    quants(repo, opts) { return this.json(['-hf', repo, '--list'].concat(machine(opts)), opts); }

    model(m) {
      if (m && typeof m === 'object' && !(m instanceof Uint8Array) && (m.hf || m.url || m.path))
        return m.hf ? ['-hf', m.hf] : ['-m', m.url || m.path];
      if (typeof m === 'string') {
        if (/^https?:\/\//i.test(m) || /\.gguf$/i.test(m) || m.split('/').length !== 2) return ['-m', m];
        return ['-hf', m];   // user/model[:QUANT]
      }
      if (m instanceof Uint8Array) {
        if (isNode) {   // node reads files: the bytes in one, removed at exit
          const fs = require('fs'), os = require('os'), path = require('path');
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ggfit-'));
          const file = path.join(dir, 'model.gguf');
          fs.writeFileSync(file, m);
          process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
          return ['-m', file];
        }
        m = new File([m], 'model.gguf');
      }
      if (typeof Blob !== 'undefined' && m instanceof Blob) {
        const f = typeof File !== 'undefined' && m instanceof File ? m : new File([m], 'model.gguf');
        return ['-m', this.setFiles([f])[0]];
      }
      throw new TypeError('ggfit: a model is a path, a URL, a repo (user/model:QUANT), a File, a Blob or bytes');
    }
  }

  // opts as flags: the machine, the version, then the caller's own
  function machine(opts) {
    const o = opts || {};
    const a = [];
    if (o.gpu !== undefined) a.push('--gpu', Array.isArray(o.gpu) ? o.gpu.join(',') : String(o.gpu));
    if (o.hostMem !== undefined) a.push('--host-mem', String(o.hostMem));
    if (o.llamaVersion !== undefined) a.push('--llama-version', String(o.llamaVersion));
    return a.concat((o.flags || []).map(String));
  }

  // The C library's environment (read at start-up: ENV is only its seed).
  // null or undefined: unset.
  function setenv(m, k, v) {
    if (v === null || v === undefined) m.ccall('unsetenv', 'number', ['string'], [k]);
    else m.ccall('setenv', 'number', ['string', 'string', 'number'], [k, String(v), 1]);
  }

  function capture(FS, fd, sink, tty) {
    FS.streams[fd] = {
      fd: fd, flags: 1 /* O_WRONLY */, position: 0, seekable: false, tty: tty ? {} : undefined,
      path: fd === 1 ? '/dev/stdout' : '/dev/stderr', node: { mode: 0o20666 /* a character device */ },
      stream_ops: {
        write: function (stream, buffer, offset, length) {
          for (let i = 0; i < length; i++) sink.push(buffer[offset + i]);
          return length;
        },
      },
    };
  }

  function utf8(bytes) {
    return new TextDecoder().decode(new Uint8Array(bytes));
  }

  // The WebAssembly module: factory is the emscripten module's (the
  // global ggfitWasm in a browser; node: ./ggfit-wasm.js beside this file).
  async function load(factory, options) {
    const host = new Host();
    const g = new Ggfit(null, host);
    const opts = Object.assign({}, options || {});
    if (!factory) {
      if (isNode) {
        factory = require('./ggfit-wasm.js');
        // the .wasm beside it, read here (emscripten's loader would fetch
        // a path, which node's fetch refuses)
        if (!opts.wasmBinary)
          opts.wasmBinary = require('fs').readFileSync(require('path').join(__dirname, 'ggfit-wasm.wasm'));
      } else {
        factory = root.ggfitWasm;
        // a page from file:// may not fetch the .wasm: its bytes come as a
        // script beside it (ggfit-wasm-file.js, base64)
        if (!opts.wasmBinary && typeof location !== 'undefined' && location.protocol === 'file:')
          opts.wasmBinary = await wasmFromScript();
      }
    }
    const mod = await factory(Object.assign(opts, {
      ggfitHost: host,
      noInitialRun: true,
      preRun: [function (m) {
        if (isNode) Object.assign(m.ENV, process.env);
        else m.ENV.GGFIT_CACHE_DIR = '';   // a page keeps its replies in memory (Host)
      }],
    }));
    g.mod = mod;
    // stdout and stderr kept for the run's answer (a replayed run's are
    // dropped), a terminal where node's are one (the CLI's output depends
    // on it, as the native CLI's does)
    capture(mod.FS, 1, g.out, isNode && process.stdout.isTTY);
    capture(mod.FS, 2, g.err, isNode && process.stderr.isTTY);
    // Browser: the WORKERFS files read through FileBytes, as asked.
    const W = mod.FS.filesystems && mod.FS.filesystems.WORKERFS;
    if (W && !isNode) {
      W.stream_ops.read = function (stream, buffer, offset, length, position) {
        const node = stream.node;
        if (position >= node.size) return 0;
        const n = Math.min(length, node.size - position);
        const fb = g.files.get(node.name);
        const got = fb && fb.get(position, n);
        if (!got) {
          const key = 'file:' + node.name + ':' + position + ':' + n;
          if (fb && !host.pending.has(key)) host.pending.set(key, () => fb.read(position, n));
          throw new mod.FS.ErrnoError(29);   // EIO: this run ends, the next has the bytes
        }
        buffer.set(got, offset);
        return n;
      };
    }
    return g;
  }

  var root = typeof self !== 'undefined' ? self : typeof globalThis !== 'undefined' ? globalThis : this;
  // where this script was loaded from (a page's <script src>)
  var here = typeof document !== 'undefined' && document.currentScript ? document.currentScript.src : '';

  function wasmFromScript() {
    return new Promise(function (resolve, reject) {
      const decode = () => {
        const b = atob(root.GGFIT_WASM_BASE64);
        const bytes = new Uint8Array(b.length);
        for (let i = 0; i < b.length; i++) bytes[i] = b.charCodeAt(i);
        resolve(bytes);
      };
      if (root.GGFIT_WASM_BASE64) return decode();
      const s = document.createElement('script');
      s.src = new URL('ggfit-wasm-file.js', here || location.href).href;
      s.onload = decode;
      s.onerror = () => reject(new Error('cannot load ' + s.src + ' (the module, for a page opened from a file)'));
      document.head.appendChild(s);
    });
  }
  return { load };
});
