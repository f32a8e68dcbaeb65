/**
 * What the agent is waiting for, above the compose box: permission requests as Allow/Deny,
 * AskUserQuestion as its questions with their options as buttons and a field for an answer of the
 * user's own, and ExitPlanMode as the plan with Approve / Keep planning (tool-view.ts says how each
 * is answered). The first answer from any tab wins (the server resolves the request for everyone);
 * a card disappears when it is resolved.
 */
import { createSignal, For, Show } from "solid-js";
import type { ChatPermission } from "../../../server/contract/chat.ts";
import { renderMarkdown } from "./markdown.ts";
import { answerQuestions, ASK_USER_QUESTION, EXIT_PLAN_MODE, formatInput, questionAnswer, readPlan, readQuestions, summarizeTool, type Question } from "./tool-view.ts";

export type Respond = (requestId: string, decision: "allow" | "deny", extra?: { updatedInput?: unknown; message?: string }) => boolean;

export function ChatPrompts(props: { permissions: readonly ChatPermission[]; respond: Respond }) {
  return (
    <For each={props.permissions}>
      {(permission) => {
        const questions = permission.tool === ASK_USER_QUESTION ? readQuestions(permission.input) : null;
        if (questions) return <QuestionCard permission={permission} questions={questions} respond={props.respond} />;
        const plan = permission.tool === EXIT_PLAN_MODE ? readPlan(permission.input) : null;
        if (plan !== null) return <PlanCard permission={permission} plan={plan} respond={props.respond} />;
        return <PermissionCard permission={permission} respond={props.respond} />;
      }}
    </For>
  );
}

function PermissionCard(props: { permission: ChatPermission; respond: Respond }) {
  const [sent, setSent] = createSignal(false);
  const answer = (decision: "allow" | "deny") => {
    // Allow without updatedInput: the server passes the tool its input as the agent asked.
    if (props.respond(props.permission.requestId, decision)) setSent(true);
  };
  const summary = () => summarizeTool(props.permission.tool, props.permission.input);
  return (
    <section class="chat-prompt" aria-label={`Permission for ${props.permission.tool}`} data-request-id={props.permission.requestId}>
      <p class="chat-prompt__title">
        Allow <strong>{props.permission.tool}</strong>?
      </p>
      <Show when={summary()}>
        <code class="chat-prompt__summary">{summary()}</code>
      </Show>
      <details class="chat-prompt__details">
        <summary>Details</summary>
        <pre>{formatInput(props.permission.input)}</pre>
      </details>
      <div class="chat-prompt__actions">
        <button class="button" type="button" disabled={sent()} onClick={() => answer("deny")}>
          Deny
        </button>
        <button class="button button--primary" type="button" disabled={sent()} onClick={() => answer("allow")}>
          Allow
        </button>
      </div>
    </section>
  );
}

/**
 * A single-choice question alone goes out on the first tap of an option; otherwise (several
 * questions, several choices, or an answer typed in) the answers go with "Send answers".
 */
function QuestionCard(props: { permission: ChatPermission; questions: Question[]; respond: Respond }) {
  const [chosen, setChosen] = createSignal<ReadonlyMap<string, readonly string[]>>(new Map());
  const [typed, setTyped] = createSignal<ReadonlyMap<string, string>>(new Map());
  const [sent, setSent] = createSignal(false);
  const single = props.questions.length === 1 && !props.questions[0]!.multiSelect;
  const answers = (labels: ReadonlyMap<string, readonly string[]>) =>
    new Map(props.questions.map((q) => [q.question, questionAnswer(q, labels.get(q.question) ?? [], typed().get(q.question) ?? "")]));
  const send = (labels: ReadonlyMap<string, readonly string[]>) => {
    if (props.respond(props.permission.requestId, "allow", { updatedInput: answerQuestions(props.permission.input, answers(labels)) })) setSent(true);
  };
  const pick = (question: Question, label: string) => {
    if (single && (typed().get(question.question) ?? "").trim() === "") return send(new Map([[question.question, [label]]]));
    const current = chosen().get(question.question) ?? [];
    const next = question.multiSelect ? (current.includes(label) ? current.filter((l) => l !== label) : [...current, label]) : [label];
    setChosen(new Map(chosen()).set(question.question, next));
  };
  const complete = () => [...answers(chosen()).values()].every((answer) => answer !== "");
  return (
    <section class="chat-prompt chat-prompt--question" aria-label="Question" data-request-id={props.permission.requestId}>
      <For each={props.questions}>
        {(question) => (
          <fieldset class="chat-question" disabled={sent()}>
            <legend class="chat-question__text">
              <Show when={question.header}>
                <span class="chat-question__header">{question.header}</span>
              </Show>
              {question.question}
            </legend>
            <div class="chat-question__options">
              <For each={question.options}>
                {(option) => (
                  <button
                    class="button chat-question__option"
                    type="button"
                    aria-pressed={single ? undefined : (chosen().get(question.question) ?? []).includes(option.label)}
                    onClick={() => pick(question, option.label)}
                  >
                    <span class="chat-question__label">{option.label}</span>
                    <Show when={option.description}>
                      <span class="chat-question__description">{option.description}</span>
                    </Show>
                  </button>
                )}
              </For>
              <input
                class="chat-question__other"
                type="text"
                placeholder={question.multiSelect ? "Something else too…" : "Or answer in your own words…"}
                aria-label={`Your own answer: ${question.question}`}
                value={typed().get(question.question) ?? ""}
                onInput={(event) => setTyped(new Map(typed()).set(question.question, event.currentTarget.value))}
              />
            </div>
          </fieldset>
        )}
      </For>
      <div class="chat-prompt__actions">
        <button class="button" type="button" disabled={sent()} onClick={() => props.respond(props.permission.requestId, "deny") && setSent(true)}>
          Skip
        </button>
        <button class="button button--primary" type="button" disabled={sent() || !complete()} onClick={() => send(chosen())}>
          Send answers
        </button>
      </div>
    </section>
  );
}

/** The plan as the agent wrote it (Markdown); keeping on planning says what to change. */
function PlanCard(props: { permission: ChatPermission; plan: string; respond: Respond }) {
  const [feedback, setFeedback] = createSignal("");
  const [sent, setSent] = createSignal(false);
  const approve = () => props.respond(props.permission.requestId, "allow") && setSent(true);
  const keepPlanning = () => {
    const message = feedback().trim();
    if (props.respond(props.permission.requestId, "deny", message === "" ? {} : { message })) setSent(true);
  };
  return (
    <section class="chat-prompt chat-prompt--plan" aria-label="Plan" data-request-id={props.permission.requestId}>
      <p class="chat-prompt__title">The agent's plan — approve it to let it start:</p>
      <div class="chat-md chat-prompt__plan" innerHTML={renderMarkdown(props.plan)} />
      <textarea
        class="chat-prompt__feedback"
        rows={2}
        placeholder="What should change? (sent with Keep planning)"
        aria-label="What should change in the plan"
        disabled={sent()}
        value={feedback()}
        onInput={(event) => setFeedback(event.currentTarget.value)}
      />
      <div class="chat-prompt__actions">
        <button class="button" type="button" disabled={sent()} onClick={keepPlanning}>
          Keep planning
        </button>
        <button class="button button--primary" type="button" disabled={sent()} onClick={approve}>
          Approve plan
        </button>
      </div>
    </section>
  );
}
