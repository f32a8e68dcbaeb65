/** The C0 bytes both VT scanners (terminal-scanner.ts, the CLI's query-scanner.ts) act on. */
export const ESC = 0x1b;
export const BEL = 0x07;
/** CAN and SUB abort a sequence in progress (ECMA-48). */
export const CAN = 0x18;
export const SUB = 0x1a;
