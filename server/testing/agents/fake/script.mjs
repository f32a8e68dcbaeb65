// Prompts script the fake: `say TEXT`, `slow N` (seconds of work), `tool NAME {json input}`,
// `fail` (an API error), `clear` (a new conversation id, as /clear does), joined with `;`.
// A prompt that is none of these is answered "You said: …".

const STEP = /^(say|slow|tool|fail|clear)\b\s*([\s\S]*)$/;

/** The steps of one prompt. */
export function parsePrompt(text) {
  const pieces = text.split(/;\s*(?=(?:say|slow|tool|fail|clear)\b)/);
  const steps = [];
  for (const piece of pieces) {
    const m = STEP.exec(piece.trim());
    if (!m) return [{ kind: "say", text: `You said: ${text.trim()}` }];
    const [, kind, rest] = m;
    if (kind === "say") steps.push({ kind, text: rest.trim() });
    else if (kind === "slow") steps.push({ kind, seconds: Math.max(0, Number(rest) || 1) });
    else if (kind === "tool") {
      const space = rest.search(/\s/);
      const name = (space === -1 ? rest : rest.slice(0, space)).trim() || "Bash";
      const json = space === -1 ? "" : rest.slice(space).trim();
      let input = {};
      try {
        input = json ? JSON.parse(json) : {};
      } catch {
        input = { argument: json };
      }
      steps.push({ kind, name, input });
    } else steps.push({ kind });
  }
  return steps;
}
