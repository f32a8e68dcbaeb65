"use strict";
const native = require("./build/Release/fd_pass.node");
// Assigned one by one so Node's ESM loader sees the names (it cannot look into a .node file).
exports.listen = native.listen;
exports.accept = native.accept;
exports.connect = native.connect;
exports.peerUid = native.peerUid;
exports.sendFds = native.sendFds;
exports.receiveFds = native.receiveFds;
exports.closeFd = native.closeFd;
exports.watchReadable = native.watchReadable;
exports.unwatch = native.unwatch;
