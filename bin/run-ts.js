#!/usr/bin/env node
// Run a TypeScript file of this repo under Node (used by `npm run bench`).
import { register } from "tsx/esm/api";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";

register();
const [file, ...rest] = process.argv.slice(2);
if (!file) {
  process.stderr.write("usage: run-ts.js <file.ts> [args…]\n");
  process.exit(2);
}
process.argv = [process.argv[0], resolve(file), ...rest];
await import(pathToFileURL(resolve(file)).href);
