/**
 * Claude Code's chat end: `claude -p --input-format stream-json --output-format stream-json
 * --verbose --include-partial-messages --permission-prompt-tool stdio --resume <id>`, one JSON
 * object per line each way. Permission prompts arrive as `control_request`/`can_use_tool` and are
 * answered with `control_response`; these control messages are undocumented and change between
 * versions, so the driver starts only after the agent answered `initialize`, and reports when
 * tools were refused without a prompt instead of pretending approvals work.
 */
import type { ChatMessage } from "../../contract/chat.ts";
import { Emitter } from "../../session/emitter.ts";
import type { ChatDriver, ChatDriverEvents, PermissionAnswer } from "./adapter.ts";
import { AgentProcess, within } from "./agent-process.ts";
import { AssistantMessages, userMessage } from "./claude-blocks.ts";

/** How long the agent may take to answer `initialize` (it starts MCP servers first; the SDK allows 60 s). */
export const CHAT_START_TIMEOUT_MS = 60_000;
/** The model name Claude Code gives the messages it makes up itself (API errors). */
const SYNTHETIC_MODEL = "<synthetic>";
/** A tool result that says this was refused for want of a prompt: permission events are not arriving. */
const REFUSED_WITHOUT_PROMPT = /requested permissions|haven't granted/i;

type Json = Record<string, unknown>;

function obj(value: unknown): Json {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

export type ClaudeChatSpec = { command: string[]; cwd: string; env: Readonly<Record<string, string>>; conversationId: string };

export class ClaudeChatDriver implements ChatDriver {
  readonly events = new Emitter<ChatDriverEvents>();
  private proc: AgentProcess | null = null;
  private readonly assistant = new AssistantMessages();
  private readonly pendingControl = new Map<string, () => void>();
  /** open permission requests: request id → the tool input the agent asked about */
  private readonly permissionInputs = new Map<string, unknown>();
  private readonly askedToolUses = new Set<string>();
  private turn: { id: string; messageId: string; interrupted: boolean; shownErrors: Set<string> } | null = null;
  private streaming: string | null = null;
  private requestCounter = 0;
  private closing = false;
  private warnedPermissions = false;

  constructor(private readonly spec: ClaudeChatSpec) {}

  get pid(): number | null {
    return this.proc?.pid ?? null;
  }

  async start(): Promise<void> {
    const proc = new AgentProcess(this.spec.command, this.spec, (line) => this.onLine(line));
    this.proc = proc;
    void proc.exited.then((exit) => {
      for (const resolve of this.pendingControl.values()) resolve();
      this.pendingControl.clear();
      const error = this.closing ? undefined : (exit.error ?? `the agent exited (${exit.code ?? exit.signal})${proc.stderr ? `: ${proc.stderr}` : ""}`);
      this.events.emit("exit", exit.code, error);
    });
    let answered = false;
    const ready = this.control({ subtype: "initialize", hooks: null }).then(() => (answered = true));
    await within(Promise.race([ready, proc.exited]), CHAT_START_TIMEOUT_MS);
    if (answered && proc.running) return;
    const exit = proc.running ? null : await proc.exited;
    this.closing = true;
    await proc.stop(0);
    if (exit) throw new Error(exit.error ?? `${this.spec.command[0]} exited with ${exit.code ?? exit.signal}${proc.stderr ? `: ${proc.stderr}` : ""}`);
    throw new Error(`${this.spec.command[0]} did not answer within ${CHAT_START_TIMEOUT_MS / 1000} s`);
  }

  send(turn: { id: string; text: string; messageId: string }): Promise<boolean> {
    this.turn = { id: turn.id, messageId: turn.messageId, interrupted: false, shownErrors: new Set() };
    const line = {
      type: "user",
      message: { role: "user", content: [{ type: "text", text: turn.text }] },
      parent_tool_use_id: null,
      session_id: this.spec.conversationId,
      uuid: turn.messageId,
    };
    return this.proc?.write(`${JSON.stringify(line)}\n`) ?? Promise.resolve(false);
  }

  respond(requestId: string, answer: PermissionAnswer): void {
    if (!this.permissionInputs.has(requestId)) return; // answered or canceled already: first answer wins
    const input = this.permissionInputs.get(requestId);
    this.permissionInputs.delete(requestId);
    const response =
      answer.behavior === "allow"
        ? { behavior: "allow", updatedInput: answer.updatedInput ?? input }
        : { behavior: "deny", message: answer.message ?? "The user refused this from webmux.", ...(answer.interrupt ? { interrupt: true } : {}) };
    void this.proc?.write(`${JSON.stringify({ type: "control_response", response: { subtype: "success", request_id: requestId, response } })}\n`);
  }

  interrupt(): void {
    if (!this.turn) return;
    this.turn.interrupted = true;
    void this.control({ subtype: "interrupt" });
  }

  async close(): Promise<void> {
    this.closing = true;
    for (const requestId of [...this.permissionInputs.keys()]) this.respond(requestId, { behavior: "deny", message: "The session moved.", interrupt: true });
    await this.proc?.stop();
  }

  /** Send a control request; resolves on its answer (success or error) or when the agent exits. */
  private control(request: Json): Promise<void> {
    const id = `webmux_${++this.requestCounter}`;
    return new Promise((resolve) => {
      this.pendingControl.set(id, resolve);
      void this.proc?.write(`${JSON.stringify({ type: "control_request", request_id: id, request })}\n`).then((ok) => {
        if (!ok) this.settleControl(id);
      });
    });
  }

  private settleControl(id: string): void {
    const resolve = this.pendingControl.get(id);
    this.pendingControl.delete(id);
    resolve?.();
  }

  private onLine(line: string): void {
    let event: Json;
    try {
      event = obj(JSON.parse(line));
    } catch {
      return; // not protocol (a stray print): ignored
    }
    // Subagent traffic (the Task tool) belongs to a sidechain, which the transcript keeps apart too.
    if (typeof event.parent_tool_use_id === "string") return;
    switch (event.type) {
      case "system":
        if (event.subtype === "init" && typeof event.session_id === "string" && event.session_id !== "") this.events.emit("init", event.session_id);
        else if (event.subtype === "compact_boundary" && typeof event.uuid === "string") {
          this.events.emit("message", { id: event.uuid, role: "system", parts: [{ type: "service", text: "Conversation compacted" }], createdAt: Date.now() });
        }
        return;
      case "stream_event":
        this.onStreamEvent(obj(event.event));
        return;
      case "assistant": {
        const message = obj(event.message);
        const id = typeof message.id === "string" && message.id !== "" ? message.id : typeof event.uuid === "string" ? event.uuid : "";
        if (id === "") return;
        const merged = this.assistant.merge(id, message.content, Date.now(), this.turn?.id);
        // An API error arrives as a message Claude Code made up ("API Error: …"), then as the result's text.
        if (message.model === SYNTHETIC_MODEL) for (const part of merged.parts) if (part.type === "text") this.turn?.shownErrors.add(part.text.trim());
        this.events.emit("message", merged);
        return;
      }
      case "user":
        this.onUser(event);
        return;
      case "result": {
        const turn = this.turn;
        this.turn = null;
        this.streaming = null;
        const cost = typeof event.total_cost_usd === "number" && event.total_cost_usd >= 0 ? event.total_cost_usd : undefined;
        const failed = event.is_error === true;
        const status = turn?.interrupted ? "interrupted" : failed ? "error" : "success";
        let error = failed && !turn?.interrupted ? (typeof event.result === "string" && event.result ? event.result : String(event.subtype ?? "error")) : undefined;
        if (error !== undefined && turn?.shownErrors.has(error.trim())) error = undefined; // shown once already, as its message
        this.events.emit("turnEnd", status, cost, error);
        return;
      }
      case "control_request":
        this.onControlRequest(event);
        return;
      case "control_response": {
        const id = obj(event.response).request_id;
        if (typeof id === "string") this.settleControl(id);
        return;
      }
      case "control_cancel_request": {
        const id = event.request_id;
        if (typeof id === "string" && this.permissionInputs.delete(id)) this.events.emit("permissionCanceled", id);
        return;
      }
      default:
        return;
    }
  }

  private onStreamEvent(event: Json): void {
    const index = typeof event.index === "number" ? event.index : -1;
    switch (event.type) {
      case "message_start": {
        const id = obj(event.message).id;
        this.streaming = typeof id === "string" && id !== "" ? id : null;
        return;
      }
      case "content_block_start":
        if (this.streaming && index >= 0) {
          this.events.emit("message", this.assistant.startBlock(this.streaming, index, event.content_block, Date.now(), this.turn?.id));
        }
        return;
      case "content_block_delta": {
        const delta = obj(event.delta);
        const text = delta.type === "text_delta" ? delta.text : delta.type === "thinking_delta" ? delta.thinking : undefined;
        if (this.streaming && index >= 0 && typeof text === "string" && text !== "") {
          this.assistant.appendText(this.streaming, index, text);
          this.events.emit("delta", this.streaming, index, text);
        }
        return;
      }
      case "message_stop":
        this.streaming = null;
        return;
      default:
        return;
    }
  }

  private onUser(event: Json): void {
    const content = obj(event.message).content;
    const uuid = typeof event.uuid === "string" ? event.uuid : "";
    const message: ChatMessage | null = userMessage(content, uuid, Date.now());
    if (!message || message.id === this.turn?.messageId) return; // our own prompt: the core has it already
    if (this.turn) message.turnId = this.turn.id;
    for (const part of message.parts) {
      if (part.type === "tool_result" && part.isError && REFUSED_WITHOUT_PROMPT.test(part.content) && !this.askedToolUses.has(part.toolUseId) && !this.warnedPermissions) {
        this.warnedPermissions = true;
        this.events.emit("warning", "permissions_unavailable", "permissions unavailable: this agent refused a tool without asking (no permission events arrive)");
      }
    }
    this.events.emit("message", message);
  }

  private onControlRequest(event: Json): void {
    const id = event.request_id;
    const request = obj(event.request);
    if (typeof id !== "string") return;
    if (request.subtype !== "can_use_tool") {
      const response = { subtype: "error", request_id: id, error: `webmux does not handle ${String(request.subtype)}` };
      void this.proc?.write(`${JSON.stringify({ type: "control_response", response })}\n`);
      return;
    }
    const toolUseId = typeof request.tool_use_id === "string" ? request.tool_use_id : undefined;
    if (toolUseId) this.askedToolUses.add(toolUseId);
    this.permissionInputs.set(id, request.input ?? {});
    this.events.emit("permission", {
      requestId: id,
      tool: typeof request.tool_name === "string" ? request.tool_name : "tool",
      input: request.input ?? {},
      ...(toolUseId ? { toolUseId } : {}),
    });
  }
}
