/**
 * The default of a switch that handles every member of a union (message types above all): the
 * compiler fails when a member is added and not handled, so no message type is dropped silently.
 * Reaching it at run time is a bug — decoders only hand out the members they know.
 */
export function unreachable(value: never, what = "case"): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
