// library.js - what ggfit's C asks of JavaScript in WebAssembly (emcc
// --js-library): -ot's patterns as RegExp (src/project/regex.c) and the
// replies to HTTP requests (src/remote/http_fetch.c). Strings cross here;
// the work is the host's, Module.ggfitHost (wasm/ggfit.js).
mergeInto(LibraryManager.library, {
  ggfit_js_regex_new: function (pattern, msg, n) {
    try {
      return Module['ggfitHost'].regexNew(UTF8ToString(pattern));
    } catch (e) {
      // V8's "Invalid regular expression: /(/: Unterminated group": the why
      var why = String(e.message || e).replace(/^Invalid regular expression: \/[\s\S]*\/[a-z]*: /, '');
      stringToUTF8(why, msg, n);
      return -1;
    }
  },
  ggfit_js_regex_test: function (id, s) {
    return Module['ggfitHost'].regexTest(id, UTF8ToString(s)) ? 1 : 0;
  },
  ggfit_js_regex_free: function (id) {
    Module['ggfitHost'].regexFree(id);
  },
  ggfit_js_http: function (url, from, len, token, inm, limit, connectMs, stallMs) {
    return Module['ggfitHost'].http({
      url: UTF8ToString(url), from: from, len: len, token: UTF8ToString(token),
      inm: UTF8ToString(inm), limit: limit, connectMs: connectMs >>> 0, stallMs: stallMs >>> 0,
    });
  },
  ggfit_js_reply_status: function (id) {
    return Module['ggfitHost'].reply(id).status;
  },
  ggfit_js_reply_failure: function (id, detail, n) {
    var r = Module['ggfitHost'].reply(id);
    stringToUTF8(r.detail || '', detail, n);
    return r.failure;
  },
  ggfit_js_reply_headers: function (id, buf, n) {
    return stringToUTF8(Module['ggfitHost'].reply(id).headers, buf, n);
  },
  ggfit_js_reply_url: function (id, buf, n) {
    return stringToUTF8(Module['ggfitHost'].reply(id).url || '', buf, n);
  },
  ggfit_js_reply_length: function (id) {
    return Module['ggfitHost'].reply(id).length;
  },
  ggfit_js_reply_body_size: function (id) {
    return Module['ggfitHost'].reply(id).body.length;
  },
  ggfit_js_reply_body: function (id, offset, dst, n) {
    HEAPU8.set(Module['ggfitHost'].reply(id).body.subarray(offset, offset + n), dst);
  },
});
