"use strict";
const native = require("./build/Release/malloc_trim.node");
// Assigned by name so Node's ESM loader sees it (it cannot look into a .node file).
exports.trimFreedMemory = native.trimFreedMemory;
