/** The C0 bytes the escape-sequence state machine (escape-sequence-machine.ts) acts on. */
export const ESC = 0x1b;
export const BEL = 0x07;
/** CAN and SUB abort a sequence in progress (ECMA-48). */
export const CAN = 0x18;
export const SUB = 0x1a;
