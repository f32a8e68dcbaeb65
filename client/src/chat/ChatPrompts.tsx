/**
 * What the agent is waiting for, above the compose box: permission requests as Allow/Deny, and
 * AskUserQuestion as its questions with their options as buttons. The first answer from any tab
 * wins (the server resolves the request for everyone); a card disappears when it is resolved.
 */
import { createSignal, For, Show } from "solid-js";
import type { ChatPermission } from "../../../server/contract/chat.ts";
import { answerQuestions, ASK_USER_QUESTION, formatInput, readQuestions, summarizeTool, type Question } from "./tool-view.ts";

export type Respond = (requestId: string, decision: "allow" | "deny", updatedInput?: unknown) => boolean;

export function ChatPrompts(props: { permissions: readonly ChatPermission[]; respond: Respond }) {
  return (
    <For each={props.permissions}>
      {(permission) => {
        const questions = permission.tool === ASK_USER_QUESTION ? readQuestions(permission.input) : null;
        return questions ? (
          <QuestionCard permission={permission} questions={questions} respond={props.respond} />
        ) : (
          <PermissionCard permission={permission} respond={props.respond} />
        );
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
 * One question with one answer goes out on the first tap; several questions, or several answers
 * to one, are chosen first and sent with "Send answers".
 */
function QuestionCard(props: { permission: ChatPermission; questions: Question[]; respond: Respond }) {
  const [chosen, setChosen] = createSignal<ReadonlyMap<string, readonly string[]>>(new Map());
  const [sent, setSent] = createSignal(false);
  const single = props.questions.length === 1 && !props.questions[0]!.multiSelect;
  const send = (answers: ReadonlyMap<string, readonly string[]>) => {
    if (props.respond(props.permission.requestId, "allow", answerQuestions(props.permission.input, answers))) setSent(true);
  };
  const pick = (question: Question, label: string) => {
    if (single) return send(new Map([[question.question, [label]]]));
    const current = chosen().get(question.question) ?? [];
    const next = question.multiSelect ? (current.includes(label) ? current.filter((l) => l !== label) : [...current, label]) : [label];
    setChosen(new Map(chosen()).set(question.question, next));
  };
  const complete = () => props.questions.every((q) => (chosen().get(q.question)?.length ?? 0) > 0);
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
            </div>
          </fieldset>
        )}
      </For>
      <div class="chat-prompt__actions">
        <button class="button" type="button" disabled={sent()} onClick={() => props.respond(props.permission.requestId, "deny") && setSent(true)}>
          Skip
        </button>
        <Show when={!single}>
          <button class="button button--primary" type="button" disabled={sent() || !complete()} onClick={() => send(chosen())}>
            Send answers
          </button>
        </Show>
      </div>
    </section>
  );
}
