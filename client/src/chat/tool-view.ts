/**
 * How a tool call reads in the chat: its one-line summary, and the two Claude Code tools that are
 * questions to the user rather than actions (docs/design.md, Hybrid sessions):
 * - AskUserQuestion arrives as a permission request with `input.questions` ({question, header?,
 *   multiSelect?, options: [{label, description?}]}) and is answered by allowing it with
 *   `updatedInput` = the input plus `answers`: question text → the answer (chosen labels joined
 *   with ", ", or what the user typed instead). Allowed without answers, the model is told "The
 *   user did not answer the questions."
 * - ExitPlanMode (`input.plan`, Markdown) asks to leave plan mode with that plan: allowing it
 *   approves the plan; denying it with a message keeps planning, and the model reads the message.
 */

/** Longest summary shown on the collapsed line; the full input is one tap away. */
export const SUMMARY_CHARS = 80;

/** The input field that says what each well-known tool does. */
const SUMMARY_FIELDS: Record<string, string> = {
  Bash: "command",
  Read: "file_path",
  Write: "file_path",
  Edit: "file_path",
  MultiEdit: "file_path",
  NotebookEdit: "notebook_path",
  Glob: "pattern",
  Grep: "pattern",
  WebFetch: "url",
  WebSearch: "query",
  Task: "description",
};

function clip(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
}

/** One line about what a tool call does: its command, path or pattern, else its first string field. */
export function summarizeTool(name: string, input: unknown): string {
  if (typeof input !== "object" || input === null) return typeof input === "string" ? clip(input) : "";
  const fields = input as Record<string, unknown>;
  const known = SUMMARY_FIELDS[name];
  if (known && typeof fields[known] === "string") return clip(fields[known] as string);
  if (name === "AskUserQuestion") {
    const questions = readQuestions(input);
    if (questions) return clip(questions.map((q) => q.question).join(" · "));
  }
  const first = Object.values(fields).find((v) => typeof v === "string");
  return typeof first === "string" ? clip(first) : "";
}

export function formatInput(input: unknown): string {
  return typeof input === "string" ? input : JSON.stringify(input, null, 2);
}

export const ASK_USER_QUESTION = "AskUserQuestion";

export type QuestionOption = { label: string; description: string };
export type Question = { question: string; header: string; multiSelect: boolean; options: QuestionOption[] };

/** The questions of an AskUserQuestion input; null when it does not look like one. */
export function readQuestions(input: unknown): Question[] | null {
  const list = (input as { questions?: unknown } | null)?.questions;
  if (!Array.isArray(list) || list.length === 0) return null;
  const questions: Question[] = [];
  for (const item of list) {
    const q = item as Record<string, unknown> | null;
    if (typeof q?.question !== "string" || !Array.isArray(q.options)) return null;
    const options: QuestionOption[] = [];
    for (const o of q.options) {
      const option = o as Record<string, unknown> | null;
      if (typeof option?.label !== "string") return null;
      options.push({ label: option.label, description: typeof option.description === "string" ? option.description : "" });
    }
    questions.push({ question: q.question, header: typeof q.header === "string" ? q.header : "", multiSelect: q.multiSelect === true, options });
  }
  return questions;
}

/**
 * One question's answer: for a single choice the typed text when there is some, else the chosen
 * label; for several choices the chosen labels and the typed text. "" when nothing was given.
 */
export function questionAnswer(question: Question, labels: readonly string[], typed: string): string {
  const text = typed.trim();
  if (!question.multiSelect) return text !== "" ? text : (labels[0] ?? "");
  return [...labels, ...(text !== "" ? [text] : [])].join(", ");
}

/** The `updatedInput` that answers an AskUserQuestion: the answer per question text (empty ones left out). */
export function answerQuestions(input: unknown, answers: ReadonlyMap<string, string>): Record<string, unknown> {
  const byQuestion: Record<string, string> = {};
  for (const [question, answer] of answers) if (answer !== "") byQuestion[question] = answer;
  return { ...(input as Record<string, unknown>), answers: byQuestion };
}

export const EXIT_PLAN_MODE = "ExitPlanMode";

/** The plan an ExitPlanMode input proposes; null when it does not look like one. */
export function readPlan(input: unknown): string | null {
  const plan = (input as { plan?: unknown } | null)?.plan;
  return typeof plan === "string" ? plan : null;
}
