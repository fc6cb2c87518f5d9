// Types of `llm-baton/gateway/node-server`: a fetch handler (the gateway) served over node:http.
/** A running server, from `serve`. */
export interface NodeGatewayServer {
  /** Where it listens, e.g. `http://127.0.0.1:8787`. */
  readonly url: string;
  /**
   * The node:http Server. Typed `unknown` so these types need no @types/node: with it, cast to
   * `import("node:http").Server`.
   */
  readonly server: unknown;
  /** How many requests have not finished their response yet. */
  readonly inFlight: number;
  /**
   * Stops accepting connections, closes idle keep-alive ones, and resolves once every in-flight
   * response has ended (each call still runs to its own end or deadline).
   */
  close(): Promise<void>;
  /** Closes every connection at once: in-flight calls see their client leave and abort upstream. */
  closeNow(): Promise<void>;
}

/**
 * Serves a WHATWG fetch handler (createGateway's result, or any `{ fetch }`) over node:http:
 * request bodies stream in, responses stream out at the client's pace, and a client's
 * disconnect aborts the Request's signal. createGateway's result is served on node's own request
 * and response, without a Request or Response per exchange (the same behaviour, at about half
 * the CPU). Resolves once listening.
 */
export declare function serve(
  handler: { fetch(request: Request): Promise<Response> | Response } | ((request: Request) => Promise<Response> | Response),
  options?: { host?: string; port?: number; onExchange?: (record: ExchangeRecord) => void },
): Promise<NodeGatewayServer>;

/** What an access log records of one ended exchange (`serve`'s `onExchange`); never a key. */
export interface ExchangeRecord {
  /** When it ended, ISO 8601. */
  time: string;
  method: string;
  /** The path, without its query string. */
  path: string;
  status: number;
  /** From the request's arrival to the response's end. */
  ms: number;
  /** The target that served, or was tried last (x-baton-target). */
  target?: string;
  /** The attempts the call took (x-baton-attempts). */
  attempts?: number;
  /** False when the connection closed before the response ended. */
  complete: boolean;
}
