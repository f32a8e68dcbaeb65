/**
 * docs/protocol.md stays true to the contract: its frame tables (both directions) and its close-code
 * table list exactly the contract's frame types and close codes, with the same numbers and names,
 * and every frame example decodes as the frame its row names.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { ClientFrame, decodeClientFrame, decodeServerFrame, ServerFrame } from "./frames.ts";
import { CloseCode } from "./protocol.ts";

const DOC = readFileSync(fileURLToPath(new URL("../../docs/protocol.md", import.meta.url)), "utf8");

/** The body of the section under `heading` (a whole heading line), up to the next heading. */
function section(heading: string): string {
  const lines = DOC.split("\n");
  const start = lines.indexOf(heading);
  if (start < 0) throw new Error(`docs/protocol.md has no heading "${heading}"`);
  const end = lines.findIndex((line, i) => i > start && /^#{1,6} /.test(line));
  return lines.slice(start + 1, end < 0 ? undefined : end).join("\n");
}

/** The rows of the first table in `markdown`, as trimmed cells, header and separator left out. */
function tableRows(markdown: string): string[][] {
  const lines = markdown.split("\n");
  const first = lines.findIndex((line) => line.startsWith("|"));
  if (first < 0) throw new Error("no table");
  const table: string[] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith("|")) break;
    table.push(line);
  }
  // Cells are split at unescaped pipes only: payload cells write alternatives as `a"\|"b`.
  return table.slice(2).map((line) => line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
}

const unquote = (cell: string): string => cell.replace(/^`|`$/g, "");

/** An example written as hex bytes, with at most one JSON object standing for its UTF-8 text. */
function exampleBytes(cell: string): Uint8Array {
  const span = /`([^`]+)`/.exec(cell)?.[1];
  if (span === undefined) throw new Error(`no example in "${cell}"`);
  const tokens = span.match(/\{.*\}|[0-9a-f]{2}(?![0-9a-f])/g) ?? [];
  const leftover = tokens.reduce((rest, token) => rest.replace(token, ""), span);
  if (leftover.trim() !== "") throw new Error(`example "${span}" has "${leftover.trim()}" that is neither a hex byte nor JSON`);
  const bytes: number[] = [];
  for (const token of tokens) {
    if (token.startsWith("{")) bytes.push(...new TextEncoder().encode(token));
    else bytes.push(parseInt(token, 16));
  }
  return Uint8Array.from(bytes);
}

/** A frame constant's name as its decoded message type: SUBMIT_STATUS → submitStatus. */
const messageType = (name: string): string => name.toLowerCase().replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

type FrameRow = { byte: number; name: string; example: Uint8Array };

function frameRows(heading: string): FrameRow[] {
  return tableRows(section(heading)).map(([byte, name, , example]) => {
    expect(byte, `a byte cell under "${heading}"`).toMatch(/^`0x[0-9a-f]{2}`$/);
    return { byte: parseInt(unquote(byte!), 16), name: unquote(name!), example: exampleBytes(example!) };
  });
}

describe.each([
  { heading: "### Server → client frames", frames: ServerFrame as Record<string, number>, decode: (b: Uint8Array) => decodeServerFrame(b) },
  { heading: "### Client → server frames", frames: ClientFrame as Record<string, number>, decode: (b: Uint8Array) => decodeClientFrame(b) },
])("docs/protocol.md, $heading", ({ heading, frames, decode }) => {
  const rows = frameRows(heading);

  it("documents every frame type of the contract, with its byte", () => {
    for (const [name, byte] of Object.entries(frames)) {
      expect(rows.find((row) => row.name === name), `${name} (0x${byte.toString(16).padStart(2, "0")}) is not documented`).toMatchObject({ byte });
    }
  });

  it("documents only frame types the contract has, each once", () => {
    for (const row of rows) expect(frames[row.name], `${row.name} is not a frame type of the contract`).toBe(row.byte);
    expect(new Set(rows.map((row) => row.byte)).size).toBe(rows.length);
  });

  it("gives an example of each frame that decodes as that frame", () => {
    for (const row of rows) {
      expect(row.example[0], `${row.name}'s example starts with its byte`).toBe(row.byte);
      const decoded = decode(row.example);
      expect(decoded.type === "invalid" ? decoded.detail : decoded.type, `${row.name}'s example`).toBe(messageType(row.name));
    }
  });
});

describe("docs/protocol.md, ### Close codes", () => {
  const rows = tableRows(section("### Close codes")).map(([code, name]) => ({ code: Number(code), name: unquote(name!) }));
  const contract = CloseCode as Record<string, number>;

  it("documents every close code of the contract under its name", () => {
    for (const [name, code] of Object.entries(contract)) {
      expect(rows.find((row) => row.code === code), `${code} (${name}) is not documented`).toEqual({ code, name });
    }
  });

  it("documents only codes the contract has, or WebSocket's own codes, each once", () => {
    for (const row of rows) {
      if (row.name === "—") {
        // RFC 6455's own range, and none the contract claims
        expect(row.code >= 1000 && row.code <= 1015 && !Object.values(contract).includes(row.code), `${row.code} without a name`).toBe(true);
      } else {
        expect(contract[row.name], `${row.name} is not a close code of the contract`).toBe(row.code);
      }
    }
    expect(new Set(rows.map((row) => row.code)).size).toBe(rows.length);
  });
});
