// A Redis client for the few commands the Redis health store sends (pkg/gateway/redis.js),
// over node:net or node:tls, so the gateway needs no npm package to share its breakers.
//
// It speaks RESP2, which every Redis and Valkey answers without a HELLO: a command is an array of
// bulk strings, and replies come back in the order the commands went, so any number may be in
// flight on the one connection (pipelining) and each takes the next reply. A reply that does not
// come within `timeoutMs` leaves no way to tell which later reply is whose: the connection is
// closed, every command on it fails, and the next command opens a new one. A connection that
// fails (refused, reset, timed out, credentials refused) makes the client "down" for a backoff
// (RETRY_MIN_MS doubling to RETRY_MAX_MS): commands then fail at once, without touching the
// network, and the first command after the backoff connects again. The store fails open on any
// of these errors, so none of them ever waits longer than `timeoutMs`.
//
// A URL may carry a password (`redis://user:password@host:6379/2`). It goes to the server in
// AUTH and nowhere else: errors and `where` name the server as `redis://host:port/db`.
import { connect as connectTcp } from "node:net";
import { connect as connectTls } from "node:tls";

/** The first retry after a failed connection comes this long after it; each failure doubles it. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 2000;
const CRLF = "\r\n";

/** An error reply from the server (`-ERR ...`): the command failed, the connection is fine. */
export class RedisReplyError extends Error {
  name = "RedisReplyError";
}

/** The connection failed, timed out, or the client is down: the server could not be asked. */
export class RedisUnavailableError extends Error {
  name = "RedisUnavailableError";
}

/**
 * `{ tls, host, port, username, password, db, where }` from a `redis://` or `rediss://` URL, or
 * a TypeError that says what is wrong without repeating the URL (it may hold a password).
 */
export function parseRedisUrl(text, field = "the Redis URL") {
  let url;
  try {
    url = new URL(text);
  } catch {
    throw new TypeError(`${field} is not a URL; write redis://[user:password@]host[:port][/db] (rediss:// for TLS)`);
  }
  if (url.protocol !== "redis:" && url.protocol !== "rediss:") {
    throw new TypeError(`${field} must start with redis:// or rediss:// (TLS), not ${url.protocol}//`);
  }
  if (url.hostname === "") throw new TypeError(`${field} has no host; write redis://host:6379`);
  const path = url.pathname.replace(/^\//, "");
  if (!/^\d{0,2}$/.test(path)) {
    throw new TypeError(`${field} has a path that is not a database index such as /0 (got ${JSON.stringify(url.pathname)})`);
  }
  if (url.search !== "" || url.hash !== "") throw new TypeError(`${field} takes no query string or fragment`);
  const db = path === "" ? 0 : Number(path);
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port === "" ? 6379 : Number(url.port);
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  const where = `${url.protocol}//${url.host}/${db}`;
  return { tls: url.protocol === "rediss:", host, port, username, password, db, where };
}

/**
 * One connection to a Redis server, opened on the first command and again after a failure.
 * `send(...args)` resolves to the reply (a string, a number, null, or an array of those) and
 * rejects with RedisReplyError (the server's error reply) or RedisUnavailableError.
 * `onState(up, reason)` hears each change between reachable and not: `reason` says why not,
 * never with a secret.
 */
export class RedisClient {
  #settings;
  #timeoutMs;
  #onState;
  /** The open (or opening) socket, or null. */
  #socket = null;
  /** Commands sent on #socket, oldest first, waiting for their replies: {resolve, reject, timer}. */
  #waiting = [];
  #reader = new ReplyReader();
  /** Down until this time (performance.now()); 0 when up or never tried. */
  #downUntil = 0;
  #retryMs = RETRY_MIN_MS;
  #up = null;

  constructor(url, { timeoutMs = 1000, onState = () => {}, field } = {}) {
    this.#settings = parseRedisUrl(url, field);
    this.#timeoutMs = timeoutMs;
    this.#onState = onState;
  }

  /** The server as `redis://host:port/db`, without credentials. */
  get where() {
    return this.#settings.where;
  }

  send(...args) {
    return this.pipeline([args])[0];
  }

  /** Sends the commands at once; a promise per command, settled in order. */
  pipeline(commands) {
    if (this.#socket === null) {
      const now = performance.now();
      if (now < this.#downUntil) {
        const error = new RedisUnavailableError(`${this.where} is unreachable; trying again in ${Math.ceil(this.#downUntil - now)} ms`);
        return commands.map(() => Promise.reject(error));
      }
      this.#open();
    }
    const promises = commands.map(() => this.#waitForReply());
    this.#socket.write(commands.map(encode).join(""));
    return promises;
  }

  /** Closes the connection; a later command opens another. */
  close() {
    this.#fail(new RedisUnavailableError(`the connection to ${this.where} was closed`), false);
  }

  /** A promise of the next reply not yet promised to a command sent before (or to the handshake's AUTH, SELECT). */
  #waitForReply(handshake = false) {
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, timer: null, handshake };
      entry.timer = setTimeout(
        () => this.#fail(new RedisUnavailableError(`${this.where} did not answer within ${this.#timeoutMs} ms`), true),
        this.#timeoutMs,
      );
      this.#waiting.push(entry);
      this.#socket.ref();
    });
  }

  /** Opens the socket and queues the handshake (AUTH, SELECT) ahead of any command. */
  #open() {
    const { tls, host, port, username, password, db } = this.#settings;
    const socket = tls ? connectTls({ host, port, servername: isIp(host) ? undefined : host }) : connectTcp({ host, port });
    socket.setNoDelay(true);
    this.#socket = socket;
    this.#reader = new ReplyReader();
    socket.on("data", (chunk) => {
      if (this.#socket !== socket) return;
      let replies;
      try {
        replies = this.#reader.push(chunk);
      } catch (e) {
        this.#fail(new RedisUnavailableError(`${this.where} sent what is not RESP (${e.message})`), true);
        return;
      }
      for (const reply of replies) this.#settle(reply);
    });
    socket.on("error", (e) => {
      if (this.#socket === socket) this.#fail(new RedisUnavailableError(`cannot reach ${this.where}: ${e.code ?? e.message}`), true);
    });
    socket.on("close", () => {
      if (this.#socket === socket) this.#fail(new RedisUnavailableError(`${this.where} closed the connection`), true);
    });
    const handshake = [];
    if (password !== "") handshake.push(username === "" ? ["AUTH", password] : ["AUTH", username, password]);
    if (db !== 0) handshake.push(["SELECT", String(db)]);
    if (handshake.length === 0) return;
    for (let i = 0; i < handshake.length; i += 1) this.#waitForReply(true).catch(() => {});
    socket.write(handshake.map(encode).join(""));
  }

  #settle(reply) {
    const entry = this.#waiting.shift();
    if (entry === undefined) {
      this.#fail(new RedisUnavailableError(`${this.where} sent a reply to no command`), true);
      return;
    }
    clearTimeout(entry.timer);
    if (this.#waiting.length === 0) this.#socket.unref();
    if (reply instanceof RedisReplyError && entry.handshake) {
      // A refused AUTH or SELECT: the connection is of no use to the commands behind it, and
      // trying again at once would be refused the same way. The server's words (WRONGPASS,
      // NOAUTH, ...) never hold the password.
      this.#fail(new RedisUnavailableError(`${this.where} refused the connection's setup: ${reply.message}`), true);
    } else if (reply instanceof RedisReplyError) entry.reject(reply);
    else {
      entry.resolve(reply);
      if (this.#up !== true) {
        this.#up = true;
        this.#retryMs = RETRY_MIN_MS;
        this.#onState(true, null);
      }
    }
  }

  /** Ends the connection, failing every command on it; `down`: wait a backoff before the next. */
  #fail(error, down) {
    const socket = this.#socket;
    if (socket === null) return;
    this.#socket = null;
    socket.destroy();
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const entry of waiting) {
      clearTimeout(entry.timer);
      entry.reject(error);
    }
    if (!down) return;
    this.#downUntil = performance.now() + this.#retryMs;
    this.#retryMs = Math.min(this.#retryMs * 2, RETRY_MAX_MS);
    if (this.#up !== false) {
      this.#up = false;
      this.#onState(false, error.message);
    }
  }
}

function encode(args) {
  let out = `*${args.length}${CRLF}`;
  for (const arg of args) {
    const text = String(arg);
    out += `$${Buffer.byteLength(text)}${CRLF}${text}${CRLF}`;
  }
  return out;
}

function isIp(host) {
  return /^[\d.]+$/.test(host) || host.includes(":");
}

/**
 * Reads RESP2 replies from a byte stream cut anywhere: `push(chunk)` returns the replies it
 * completes (an error reply as a RedisReplyError value) and keeps the rest for the next chunk.
 */
export class ReplyReader {
  #buffer = Buffer.alloc(0);

  push(chunk) {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const replies = [];
    let at = 0;
    for (;;) {
      const read = this.#read(at);
      if (read === null) break;
      replies.push(read.value);
      at = read.end;
    }
    this.#buffer = this.#buffer.subarray(at);
    return replies;
  }

  /** The reply starting at `at` and where it ends, or null when it is not all here yet. */
  #read(at) {
    const buffer = this.#buffer;
    const lineEnd = buffer.indexOf(CRLF, at);
    if (lineEnd === -1) return null;
    const type = String.fromCharCode(buffer[at]);
    const line = buffer.toString("utf8", at + 1, lineEnd);
    const next = lineEnd + 2;
    switch (type) {
      case "+":
        return { value: line, end: next };
      case "-":
        return { value: new RedisReplyError(line), end: next };
      case ":":
        return { value: integer(line), end: next };
      case "$": {
        const length = integer(line);
        if (length === -1) return { value: null, end: next };
        if (buffer.length < next + length + 2) return null;
        return { value: buffer.toString("utf8", next, next + length), end: next + length + 2 };
      }
      case "*": {
        const count = integer(line);
        if (count === -1) return { value: null, end: next };
        const items = [];
        let end = next;
        for (let i = 0; i < count; i += 1) {
          const item = this.#read(end);
          if (item === null) return null;
          items.push(item.value);
          end = item.end;
        }
        return { value: items, end };
      }
      default:
        throw new Error(`a reply starts with ${JSON.stringify(type)}`);
    }
  }
}

function integer(text) {
  if (!/^-?\d+$/.test(text)) throw new Error(`${JSON.stringify(text)} is not an integer`);
  return Number(text);
}
