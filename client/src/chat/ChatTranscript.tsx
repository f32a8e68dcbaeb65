/**
 * The conversation: user turns as plain text, the agent's text as Markdown (chat/markdown.ts),
 * thinking and tool calls collapsible, each tool's result folded into its call. Rendered with
 * <Index>, so a delta redraws the one part it changed and an opened <details> stays open.
 */
import { createMemo, Index, Match, Show, Switch } from "solid-js";
import type { ChatMessage, ChatPart } from "../../../server/contract/chat.ts";
import { shownParts, toolCallIds, toolResults, type ResolvedPermission, type ToolResultPart } from "./chat-state.ts";
import { renderMarkdown } from "./markdown.ts";
import { formatInput, summarizeTool } from "./tool-view.ts";

/** Raster images only: an SVG, even in <img>, is more than pixels. */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

type ToolCallPart = Extract<ChatPart, { type: "tool_call" }>;

export type TranscriptProps = {
  messages: readonly ChatMessage[];
  /** resolved permission requests by the tool call they were about */
  resolvedByToolUse: ReadonlyMap<string, ResolvedPermission>;
  /** tool calls whose permission request is open */
  waitingToolUses: ReadonlySet<string>;
  busy: boolean;
};

export function ChatTranscript(props: TranscriptProps) {
  const calls = createMemo(() => toolCallIds(props.messages));
  const results = createMemo(() => toolResults(props.messages));
  return (
    <Index each={props.messages}>
      {(message) => {
        const parts = createMemo(() => shownParts(message(), calls()));
        return (
          <Show when={parts().length > 0}>
            <article class={`chat-msg chat-msg--${message().role}`} data-id={message().id} data-role={message().role}>
              <Index each={parts()}>
                {(part) => <PartView part={part()} role={message().role} results={results()} {...props} />}
              </Index>
            </article>
          </Show>
        );
      }}
    </Index>
  );
}

function PartView(props: { part: ChatPart; role: ChatMessage["role"]; results: ReadonlyMap<string, ToolResultPart> } & TranscriptProps) {
  const p = () => props.part;
  const text = () => (p() as { text: string }).text;
  return (
    <Switch>
      <Match when={p().type === "text" && props.role === "assistant"}>
        <div class="chat-md" innerHTML={renderMarkdown(text())} />
      </Match>
      <Match when={p().type === "text"}>
        <p class={props.role === "user" ? "chat-text" : "chat-service"}>{text()}</p>
      </Match>
      <Match when={p().type === "thinking"}>
        <details class="chat-thinking">
          <summary>Thinking</summary>
          <p class="chat-text">{text()}</p>
        </details>
      </Match>
      <Match when={p().type === "service"}>
        <p class="chat-service">{text()}</p>
      </Match>
      <Match when={p().type === "tool_call"}>
        <ToolCallView call={p() as ToolCallPart} {...props} />
      </Match>
      <Match when={p().type === "tool_result"}>
        <details class="chat-tool" data-state={(p() as ToolResultPart).isError ? "error" : "done"}>
          <summary>
            <span class="chat-tool__name">Tool result</span>
          </summary>
          <pre class="chat-tool__result">{(p() as ToolResultPart).content}</pre>
        </details>
      </Match>
      <Match when={p().type === "image" && p()}>
        {(image) => {
          const { mediaType, data } = image() as Extract<ChatPart, { type: "image" }>;
          return (
            <Show when={IMAGE_TYPES.has(mediaType)} fallback={<p class="chat-service">[image: {mediaType}]</p>}>
              <img class="chat-image" alt="" src={`data:${mediaType};base64,${data}`} />
            </Show>
          );
        }}
      </Match>
    </Switch>
  );
}

function ToolCallView(props: { call: ToolCallPart; results: ReadonlyMap<string, ToolResultPart> } & TranscriptProps) {
  const result = () => props.results.get(props.call.toolUseId);
  const resolved = () => props.resolvedByToolUse.get(props.call.toolUseId);
  const waiting = () => props.waitingToolUses.has(props.call.toolUseId);
  const state = () => {
    const r = result();
    if (r) return r.isError ? "error" : "done";
    if (waiting()) return "waiting";
    return props.busy ? "running" : "none";
  };
  const badge = () => {
    const answer = resolved();
    if (answer?.decision === "canceled") return "canceled";
    if (answer) return `${answer.decision === "allow" ? "allowed" : "denied"}${answer.by ? ` by ${answer.by.label || "another tab"}` : ""}`;
    return { error: "failed", done: "", waiting: "needs your answer", running: "running…", none: "" }[state()];
  };
  return (
    <details class="chat-tool" data-tool={props.call.name} data-state={state()} data-decision={resolved()?.decision ?? ""}>
      <summary>
        <span class="chat-tool__name">{props.call.name}</span>
        <span class="chat-tool__summary">{summarizeTool(props.call.name, props.call.input)}</span>
        <Show when={badge()}>
          <span class="chat-tool__badge">{badge()}</span>
        </Show>
      </summary>
      <pre class="chat-tool__input">{formatInput(props.call.input)}</pre>
      <Show when={result()}>
        {(r) => (
          <pre class="chat-tool__result" classList={{ "chat-tool__result--error": r().isError }}>
            {r().content}
          </pre>
        )}
      </Show>
    </details>
  );
}
