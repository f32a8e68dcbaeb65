import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { generate } from "selfsigned";

/** A self-signed certificate for tests, valid for the names a local test server is reached by. */
export type TestCertificate = { certFile: string; keyFile: string; /** PEM; also the CA to trust */ cert: string };

/** Write `cert.pem` and `key.pem` for localhost / 127.0.0.1 / ::1 into `dir`. */
export async function writeTestCertificate(dir: string): Promise<TestCertificate> {
  const pems = await generate([{ name: "commonName", value: "localhost" }], {
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      { name: "subjectAltName", altNames: [{ type: 2, value: "localhost" }, { type: 7, ip: "127.0.0.1" }, { type: 7, ip: "::1" }] },
    ],
  });
  const certFile = join(dir, "cert.pem");
  const keyFile = join(dir, "key.pem");
  writeFileSync(certFile, pems.cert);
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  return { certFile, keyFile, cert: pems.cert };
}
