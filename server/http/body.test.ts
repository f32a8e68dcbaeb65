import { createServer, type Server } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { readJson } from "./body.ts";
import { ApiError } from "./errors.ts";

let server: Server | null = null;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = null;
});

/** What readJson made of the body a raw client sent as `raw` (and then, maybe, hung up on). */
async function readWhat(raw: string, hangUp: boolean): Promise<unknown> {
  let settle!: (outcome: unknown) => void;
  const outcome = new Promise<unknown>((resolve) => (settle = resolve));
  server = createServer((req) => readJson(req).then(settle, settle));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
  socket.on("error", () => {});
  socket.write(raw, () => {
    if (hangUp) socket.destroy();
  });
  return outcome;
}

describe("readJson", () => {
  it("reads a whole body", async () => {
    expect(await readWhat('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 8\r\n\r\n{"a":12}', false)).toEqual({ a: 12 });
  });

  it("answers a body the client hung up on with a 400, not an internal error", async () => {
    const outcome = await readWhat('POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"a":', true);
    expect(outcome).toBeInstanceOf(ApiError);
    expect((outcome as ApiError).status).toBe(400);
  });
});
