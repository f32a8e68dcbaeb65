/** What a host or server says it is in the hello: the package version and the runtime. */
import { readFileSync } from "node:fs";
import { HOST_PROTOCOL } from "./protocol.ts";

const version = (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

export const WEBMUX_BUILD = `webmux ${version}`;

/**
 * The host protocol this process speaks: HOST_PROTOCOL, or in tests WEBMUX_TEST_HOST_PROTOCOL, so
 * that a test can play a build of another protocol version and make its host be replaced
 * (docs/design.md, What survives a restart).
 */
export const SPOKEN_HOST_PROTOCOL: number = (() => {
  const test = Number(process.env.WEBMUX_TEST_HOST_PROTOCOL);
  return Number.isInteger(test) && test > 0 && test <= 0xffff ? test : HOST_PROTOCOL;
})();

/**
 * Tests only: WEBMUX_TEST_HOST_BEFORE_HANDOVERS=1 makes a host answer a handover request as every
 * build from before handovers does, by closing the connection at a first frame that is not a
 * hello (docs/design.md, What survives a restart).
 */
export const PLAYS_HOST_BEFORE_HANDOVERS = process.env.WEBMUX_TEST_HOST_BEFORE_HANDOVERS === "1";
