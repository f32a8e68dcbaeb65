import { describe, expect, it } from "vitest";
import { waitFor } from "../server/testing/wait.ts";
import { startEchoFloor } from "./ws-echo-floor.ts";

describe("startEchoFloor", () => {
  it("echoes each key from its own process, as a webmux output frame's payload", async () => {
    const floor = await startEchoFloor();
    try {
      const got: string[] = [];
      floor.subscribe((data) => got.push(Buffer.from(data).toString()));
      for (const key of ["a", "b", "\x1b[A"]) {
        const before = got.length;
        floor.send(key);
        await waitFor(() => got.length > before, { message: `echo of ${JSON.stringify(key)}` });
      }
      expect(got).toEqual(["a", "b", "\x1b[A"]);
    } finally {
      await floor.stop();
    }
  });
});
