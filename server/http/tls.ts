import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";

/** Paths of a PEM certificate (chain) and its private key, as `--tls-cert` / `--tls-key` name them. */
export type TlsFiles = { certFile: string; keyFile: string };

/** The PEM contents, checked to belong together; what `https.createServer` takes. */
export type TlsCredentials = { cert: Buffer; key: Buffer };

/** A certificate or key that cannot be used, with a message a user can act on (one line). */
export class TlsFileError extends Error {}

function readPem(what: string, file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "is a directory" : (code ?? (err as Error).message);
    throw new TlsFileError(`cannot read TLS ${what} ${file}: ${why}`);
  }
}

/** OpenSSL's messages name the failing routine; keep only the part after the last colon. */
function reason(err: unknown): string {
  const message = (err as Error).message ?? String(err);
  return message.split("\n")[0]!.replace(/^error:[0-9A-F]+:(?:[^:]*:)*/i, "").trim() || message;
}

/**
 * Read the certificate and key and make sure TLS can use them together, so a wrong file fails at
 * start with a clear line instead of at the first browser's handshake.
 */
export function loadTlsCredentials({ certFile, keyFile }: TlsFiles): TlsCredentials {
  const cert = readPem("certificate", certFile);
  const key = readPem("key", keyFile);
  if (!cert.includes("-----BEGIN CERTIFICATE-----")) throw new TlsFileError(`TLS certificate ${certFile} is not a PEM certificate`);
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(key.toString("latin1"))) throw new TlsFileError(`TLS key ${keyFile} is not a PEM private key`);
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    const why = reason(err);
    if (/mismatch/i.test(why)) throw new TlsFileError(`TLS key ${keyFile} does not belong to certificate ${certFile}`);
    throw new TlsFileError(`cannot use TLS certificate ${certFile} with key ${keyFile}: ${why}`);
  }
  return { cert, key };
}
