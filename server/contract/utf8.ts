/**
 * UTF-8 for the contract without ambient types.
 *
 * TextEncoder/TextDecoder exist in every runtime webmux targets (Node ≥ 11, Bun,
 * every browser) but are not in the ES lib, and a global `declare var` here would
 * clash with the declarations @types/node and lib.dom bring into the other
 * tsconfigs. So this module reads them through a minimal typed view of
 * `globalThis` that is local to the contract.
 */

type Utf8Encoder = { encode(input: string): Uint8Array };
type Utf8Decoder = { decode(input: Uint8Array): string };
type EncodingGlobals = {
  TextEncoder: new () => Utf8Encoder;
  TextDecoder: new (label: "utf-8", options: { fatal: boolean; ignoreBOM: boolean }) => Utf8Decoder;
};

const encodingGlobals = globalThis as unknown as EncodingGlobals;
const encoder = new encodingGlobals.TextEncoder();
/** Fatal: a JSON payload with broken UTF-8 is malformed, not silently repaired. */
const strictDecoder = new encodingGlobals.TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** UTF-8 bytes of a string (lone surrogates become U+FFFD, as the Encoding Standard says). */
export function encodeUtf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The string the bytes spell, or null when they are not well-formed UTF-8. */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  try {
    return strictDecoder.decode(bytes);
  } catch {
    return null;
  }
}

/** Bytes as given, or the UTF-8 encoding of a string. */
export function toBytes(data: Uint8Array | string): Uint8Array {
  return typeof data === "string" ? encoder.encode(data) : data;
}
