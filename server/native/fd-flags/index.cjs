"use strict";
const native = require("./build/Release/fd_flags.node");
// Assigned one by one so Node's ESM loader sees the names (it cannot look into a .node file).
exports.setCloseOnExec = native.setCloseOnExec;
exports.setCloseOnExecFrom = native.setCloseOnExecFrom;
exports.writeSome = native.writeSome;
exports.sendSome = native.sendSome;
