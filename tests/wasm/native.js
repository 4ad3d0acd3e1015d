// native.js - the native CLI's answer to a command line, as the WebAssembly
// tests compare it: { code, stdout, stderr } (a refusal is an answer too).
'use strict';
const { execFileSync } = require('child_process');

module.exports = function native(ggfit, argv) {
  try {
    const stdout = execFileSync(ggfit, argv, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { code: 0, stdout, stderr: '' };
  } catch (e) {
    return { code: e.status, stdout: e.stdout, stderr: e.stderr };
  }
};
