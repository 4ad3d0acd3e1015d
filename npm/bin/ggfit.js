#!/usr/bin/env node
// ggfit's command line in node: the same C, built for WebAssembly, with the
// same flags and the same output as the native ggfit (local files through
// node's fs, URLs and Hugging Face repos through fetch with Range).
'use strict';
const { load } = require('../ggfit.js');

load()
  .then((g) => g.run(process.argv.slice(2)))
  .then((r) => {
    process.stdout.write(r.stdout);
    process.stderr.write(r.stderr);
    process.exitCode = r.code;
  }, (e) => {
    process.stderr.write('ggfit: ' + (e && e.message ? e.message : e) + '\n');
    process.exitCode = 2;
  });
