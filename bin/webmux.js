#!/usr/bin/env node
// The webmux command. Node runs the TypeScript sources through tsx's loader; Bun runs them natively
// (`bun server/main.ts …`).
import { register } from "tsx/esm/api";

register();
const { runMain } = await import("../server/main.ts");
runMain(process.argv.slice(2));
