/**
 * The shell-integration marks webmux's rc scripts print (./shell/webmux.bash,
 * ./shell/webmux.zsh), parsed from the scanner's OSC 133 / 633 events. A mark counts
 * only when it carries this session's nonce (`webmux=<nonce>`): a program that prints
 * `ESC ] 133 ; D ; 0 BEL` — by accident (`cat` of a log), from a nested shell with its
 * own integration, or on purpose — cannot end or start anything.
 *
 *   133;A;status=<n>;webmux=<nonce>   prompt start (status: $? at that moment)
 *   133;B;webmux=<nonce>              prompt end, input begins
 *   133;C;webmux=<nonce>              the command line starts executing
 *   133;D;<exit>;webmux=<nonce>       the command finished with status <exit>
 *   633;E;<escaped line>;webmux=<nonce>  the command line (zsh; `\\` and `\xNN` escapes)
 *   633;P;Integration=none;webmux=<nonce>  this shell cannot integrate (bash < 4.4)
 */

/** The variable a shell with integration gets its nonce in (./shell-integration.ts). */
export const SHELL_NONCE_VARIABLE = "WEBMUX_SHELL_NONCE";

export type Mark =
  | { kind: "A"; status: number | null }
  | { kind: "B" }
  | { kind: "C" }
  | { kind: "D"; exitCode: number | null }
  | { kind: "E"; command: string }
  | { kind: "P"; integration: "none" };

/** A genuine mark of the session whose nonce is `nonce`, or null (other OSC 133/633 text, forged marks). */
export function parseMark(code: number, data: string, nonce: string): Mark | null {
  const parts = data.split(";");
  if (parts.at(-1) !== `webmux=${nonce}`) return null;
  const kind = parts[0];
  if (code === 133) {
    switch (kind) {
      case "A": {
        const status = parts.find((p) => p.startsWith("status="));
        return { kind: "A", status: status ? parseStatus(status.slice("status=".length)) : null };
      }
      case "B":
        return { kind: "B" };
      case "C":
        return { kind: "C" };
      case "D":
        return { kind: "D", exitCode: parts.length > 2 ? parseStatus(parts[1]!) : null };
      default:
        return null;
    }
  }
  if (code === 633) {
    if (kind === "E" && parts.length === 3) return { kind: "E", command: unescapeCommandLine(parts[1]!) };
    if (kind === "P" && parts[1] === "Integration=none") return { kind: "P", integration: "none" };
  }
  return null;
}

function parseStatus(text: string): number | null {
  return /^\d{1,10}$/.test(text) ? Number(text) : null;
}

/** Undo the rc scripts' escaping of a command line: `\\` → `\`, `\xNN` → that character. */
export function unescapeCommandLine(text: string): string {
  return text.replace(/\\(\\|x([0-9a-fA-F]{2}))/g, (_, esc: string, hex: string | undefined) =>
    hex === undefined ? "\\" : String.fromCharCode(Number.parseInt(hex, 16)),
  );
}

/** The end of a captured command output that is the rc script's own marks (E, then D), to cut off. */
export const TRAILING_MARKS = /(?:\x1b\]633;E;[^\x07\x1b]*(?:\x07|\x1b\\))?\x1b\]133;D;[^\x07\x1b]*(?:\x07|\x1b\\)$/;

/** The end of captured output that is a prompt-start mark (a line that ran nothing ends there). */
export const TRAILING_PROMPT_MARK = /\x1b\]133;A;[^\x07\x1b]*(?:\x07|\x1b\\)$/;
