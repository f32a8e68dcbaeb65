/** What a host or server says it is in the hello: the package version and the runtime. */
import { readFileSync } from "node:fs";

const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export const WEBMUX_BUILD = `webmux ${version}`;
