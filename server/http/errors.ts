import type { ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { ERROR_HTTP_STATUS, ErrorCode, type ErrorBody } from "../contract/types.ts";

/** An error with a stable code; `sendError` is the one place that turns it into an HTTP response. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.status = ERROR_HTTP_STATUS[code];
  }
}

export const invalid = (message: string) => new ApiError(ErrorCode.INVALID_REQUEST, message);
export const notFound = (message: string) => new ApiError(ErrorCode.NOT_FOUND, message);

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  return { error: { code, message } };
}

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  return new ApiError(ErrorCode.INTERNAL_ERROR, "internal error");
}

export function sendError(res: ServerResponse, err: unknown): void {
  const apiError = toApiError(err);
  if (apiError.code === ErrorCode.INTERNAL_ERROR && !(err instanceof ApiError)) {
    console.error("webmux: internal error:", err);
  }
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = JSON.stringify(errorBody(apiError.code, apiError.message));
  res.writeHead(apiError.status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    ...apiError.headers,
  });
  res.end(body);
}

const STATUS_TEXT: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  409: "Conflict",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  503: "Service Unavailable",
};

/**
 * An error answered on a bare connection (a refused handshake, a request the HTTP parser refused,
 * a connection past a limit), in the same shape as sendError's; then the connection closes.
 */
export function answerSocket(socket: Duplex, status: number, code: ErrorCode, message: string, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(errorBody(code, message));
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? "Error"}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
