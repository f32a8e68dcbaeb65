import type { IncomingMessage } from "node:http";
import { ErrorCode } from "../contract/types.ts";
import { ApiError, invalid } from "./errors.ts";

/** Request bodies larger than this are refused with 413: every JSON body of the API is small. */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** Read and parse a JSON body; 413 past the limit (without buffering it), 400 for bad JSON. */
export async function readJson(req: IncomingMessage, maxBytes = MAX_JSON_BODY_BYTES): Promise<unknown> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > maxBytes) {
    req.resume();
    throw new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, `request body over ${maxBytes} bytes`, { connection: "close" });
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        req.resume();
        throw new ApiError(ErrorCode.PAYLOAD_TOO_LARGE, `request body over ${maxBytes} bytes`, { connection: "close" });
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    // The client hung up (or its connection timed out) before its body was complete.
    throw invalid("the request ended before its body arrived");
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw invalid(`body is not valid JSON: ${(err as Error).message}`);
  }
}

// ---- field validation: each returns the typed value or throws a 400 naming the field ----

export type JsonObject = Record<string, unknown>;

export function expectObject(value: unknown, what = "body"): JsonObject {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw invalid(`${what} must be a JSON object`);
  return value as JsonObject;
}

/** 400 for a field the route does not know: a misspelt `comand` must not silently start a login shell. */
export function refuseUnknownFields(obj: JsonObject, known: readonly string[], what = "body"): void {
  for (const key of Object.keys(obj)) {
    if (!known.includes(key)) throw invalid(`${what} has an unknown field "${key}" (known: ${known.join(", ")})`);
  }
}

export function optionalString(obj: JsonObject, key: string, maxLength = 4096): string | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw invalid(`${key} must be a string`);
  if (v.length > maxLength) throw invalid(`${key} is longer than ${maxLength} characters`);
  return v;
}

export function requiredString(obj: JsonObject, key: string, maxLength = 4096): string {
  const v = optionalString(obj, key, maxLength);
  if (v === undefined) throw invalid(`${key} is required`);
  return v;
}

export function optionalInt(obj: JsonObject, key: string, min: number, max: number): number | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "number" || !Number.isInteger(v)) throw invalid(`${key} must be an integer`);
  if (v < min || v > max) throw invalid(`${key} must be between ${min} and ${max}`);
  return v;
}

export function optionalBoolean(obj: JsonObject, key: string): boolean | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "boolean") throw invalid(`${key} must be true or false`);
  return v;
}

export function optionalStringArray(obj: JsonObject, key: string, maxItems = 1024): string[] | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) throw invalid(`${key} must be an array of strings`);
  if (v.length > maxItems) throw invalid(`${key} has more than ${maxItems} items`);
  if (v.some((x: string) => x.includes("\0"))) throw invalid(`${key} must not contain NUL characters`);
  return v as string[];
}

export function optionalStringRecord(obj: JsonObject, key: string, maxItems = 1024): Record<string, string> | undefined {
  const v = obj[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v)) throw invalid(`${key} must be an object of strings`);
  const entries = Object.entries(v as JsonObject);
  if (entries.length > maxItems) throw invalid(`${key} has more than ${maxItems} entries`);
  const out: Record<string, string> = {};
  for (const [k, val] of entries) {
    if (typeof val !== "string") throw invalid(`${key}.${k} must be a string`);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw invalid(`${key} has an invalid variable name: ${k}`);
    if (val.includes("\0")) throw invalid(`${key}.${k} must not contain NUL characters`);
    out[k] = val;
  }
  return out;
}
