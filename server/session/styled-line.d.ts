// Types of styled-line.js (plain JavaScript so the headless worker can import it).
import type { IBufferCell, IBufferLine } from "@xterm/headless";

/** One buffer line as text with SGR escapes; trailing unstyled blanks trimmed. */
export function styledLine(line: IBufferLine | undefined, scratch: IBufferCell): string;
