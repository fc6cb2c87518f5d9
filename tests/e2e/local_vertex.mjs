// A local Google Vertex AI for the e2e tests: a real HTTP/1.1 server on 127.0.0.1 with
// - a token endpoint (`/token`) that takes a service account's JWT (RFC 7523's jwt-bearer grant),
//   verifies it with google-auth-library (OAuth2Client#verifySignedJwtWithCertsAsync, against the
//   public half of a key pair made here with node:crypto), checks its scope, audience and issuer,
//   counts the mints per service account and answers an access token;
// - Vertex's endpoints for Gemini (`…/publishers/google/models/{m}:generateContent`,
//   `:streamGenerateContent?alt=sse`) and Anthropic (`…/publishers/anthropic/models/{m}:rawPredict`,
//   `:streamRawPredict`, the body without `model` and with `anthropic_version`), which take only
//   a token it minted and has not expired or revoked, or the fixed ACCESS_TOKEN, else answer 401
//   in Google's words.
// Models by name: the MODELS answer; "exhausted" is a 429 RESOURCE_EXHAUSTED, "unavailable" a 503
// UNAVAILABLE, "overloaded" (Anthropic) a 529 overloaded_error. A service account whose email
// starts with "short" is given tokens that live SHORT_TOKEN_S seconds.
// Test-only controls (plain fetch, so a scenario in any runtime can use them):
//   GET /_test/mints?iss=EMAIL -> {"mints": n}     POST /_test/revoke?iss=EMAIL (its tokens: 401)
// Import `startVertex` to compose it with other local providers.
import { createServer } from "node:http";
import { generateKeyPairSync, randomBytes } from "node:crypto";
import { OAuth2Client } from "google-auth-library";

export const PROJECT = "baton-local";
export const REGION = "us-east5";
/** A token any call may carry, as from `gcloud auth print-access-token`. */
export const ACCESS_TOKEN = "ya29.local-fixed-access-token-0123456789";
export const SCOPE = "https://www.googleapis.com/auth/cloud-platform";
export const SHORT_TOKEN_S = 2;
export const GEMINI_TEXT = "Hello from Gemini on Vertex.";
export const CLAUDE_TEXT = "Hello from Claude on Vertex.";
export const USAGE = { inputTokens: 9, outputTokens: 6 };

const UNAUTHENTICATED = {
  error: {
    code: 401,
    message: "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.",
    status: "UNAUTHENTICATED",
  },
};

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function googleError(res, status, name, message) {
  json(res, status, { error: { code: status, message, status: name } });
}

/** Writes SSE events one write each, a few milliseconds apart, so a reader meets them across reads. */
async function writeEvents(res, events) {
  res.writeHead(200, { "content-type": "text/event-stream" });
  for (const e of events) {
    res.write(e);
    await new Promise((r) => setTimeout(r, 3));
  }
  res.end();
}

function geminiAnswer(text, finishReason = "STOP") {
  return {
    candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason }],
    usageMetadata: { promptTokenCount: USAGE.inputTokens, candidatesTokenCount: USAGE.outputTokens, totalTokenCount: 15 },
    modelVersion: "gemini-2.5-flash",
  };
}

function claudeEvents(model) {
  const data = (type, body) => `event: ${type}\ndata: ${JSON.stringify({ type, ...body })}\n\n`;
  const events = [
    data("message_start", { message: { id: "msg_vrtx_1", type: "message", role: "assistant", model, content: [], stop_reason: null, usage: { input_tokens: USAGE.inputTokens, output_tokens: 1 } } }),
    data("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
  ];
  for (const piece of CLAUDE_TEXT.match(/.{1,7}/g)) events.push(data("content_block_delta", { index: 0, delta: { type: "text_delta", text: piece } }));
  events.push(data("content_block_stop", { index: 0 }));
  events.push(data("message_delta", { delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: USAGE.outputTokens } }));
  events.push(data("message_stop", {}));
  return events;
}

/**
 * Starts the local Vertex. Returns `{ url, origin, tokenUri, serviceAccount(email?), seen, mints(iss),
 * stop }`: `origin` is what a target's `baseUrl` takes (`{url}/v1`), `serviceAccount` a JSON key
 * for this server (a new email each call unless given, so each test counts its own mints), `seen`
 * the Vertex requests received ({path, auth, body}; also at GET `/_test/seen`, for another runtime).
 */
export async function startVertex() {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const kid = randomBytes(20).toString("hex");
  const certs = { [kid]: publicKey.export({ type: "spki", format: "pem" }) };
  const privatePem = privateKey.export({ type: "pkcs8", format: "pem" });
  const verifier = new OAuth2Client();
  /** token -> { iss, expiresAt } */
  const tokens = new Map();
  const mints = new Map();
  const seen = [];
  let url;

  async function token(req, res, body) {
    const form = new URLSearchParams(body);
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return json(res, 400, { error: "unsupported_grant_type", error_description: "Invalid grant_type" });
    }
    let payload;
    try {
      const ticket = await verifier.verifySignedJwtWithCertsAsync(form.get("assertion") ?? "", certs, `${url}/token`);
      payload = ticket.getPayload();
    } catch {
      return json(res, 400, { error: "invalid_grant", error_description: "Invalid JWT Signature." });
    }
    if (payload.scope !== SCOPE || !/@baton-local\.iam\.gserviceaccount\.com$/.test(payload.iss) || payload.exp - payload.iat !== 3600) {
      return json(res, 400, { error: "invalid_scope", error_description: "Invalid OAuth scope, issuer or lifetime." });
    }
    mints.set(payload.iss, (mints.get(payload.iss) ?? 0) + 1);
    const lifetime = payload.iss.startsWith("short") ? SHORT_TOKEN_S : 3599;
    const access = `ya29.local-${randomBytes(12).toString("hex")}`;
    tokens.set(access, { iss: payload.iss, expiresAt: Date.now() + lifetime * 1000 });
    json(res, 200, { access_token: access, expires_in: lifetime, token_type: "Bearer" });
  }

  function authorized(req) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    if (bearer === ACCESS_TOKEN) return true;
    const known = tokens.get(bearer);
    return !!known && Date.now() < known.expiresAt;
  }

  async function vertex(req, res, body, route) {
    const [, project, region, publisher, model, method] = route;
    const parsed = body ? JSON.parse(body) : null;
    seen.push({ path: req.url, auth: req.headers.authorization?.split(" ")[0], body: parsed, anthropicVersionHeader: req.headers["anthropic-version"] });
    if (!authorized(req)) return json(res, 401, UNAUTHENTICATED);
    if (project !== PROJECT || region !== REGION) return googleError(res, 404, "NOT_FOUND", `Project ${project} or location ${region} not found.`);
    if (model === "exhausted") return googleError(res, 429, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/generate_content_requests_per_minute_per_project_per_base_model with base model: " + model + ". Please submit a quota increase request.");
    if (model === "unavailable") return googleError(res, 503, "UNAVAILABLE", "The service is currently unavailable.");
    if (publisher === "google") {
      if (method === "generateContent") return json(res, 200, geminiAnswer(GEMINI_TEXT));
      if (method === "streamGenerateContent" && req.url.endsWith("?alt=sse")) {
        const pieces = GEMINI_TEXT.match(/.{1,8}/g);
        return writeEvents(res, pieces.map((text, i) => `data: ${JSON.stringify(i === pieces.length - 1 ? geminiAnswer(text) : { candidates: [{ content: { role: "model", parts: [{ text }] } }] })}\r\n\r\n`));
      }
    }
    if (publisher === "anthropic" && (method === "rawPredict" || method === "streamRawPredict")) {
      // Google documents "vertex-2023-10-16"; @anthropic-ai/vertex-sdk sends its API version
      // (from its anthropic-version header), which Vertex takes too.
      if (!/^(vertex-2023-10-16|\d{4}-\d\d-\d\d)$/.test(parsed?.anthropic_version ?? "") || "model" in parsed) {
        return json(res, 400, { type: "error", error: { type: "invalid_request_error", message: "anthropic_version is required (vertex-2023-10-16) and model is not allowed in the body" } });
      }
      if (model === "overloaded") return json(res, 529, { type: "error", error: { type: "overloaded_error", message: "Overloaded" } });
      if (method === "streamRawPredict" && parsed.stream === true) return writeEvents(res, claudeEvents(model));
      if (method === "rawPredict" && !parsed.stream) {
        return json(res, 200, {
          id: "msg_vrtx_1", type: "message", role: "assistant", model, content: [{ type: "text", text: CLAUDE_TEXT }],
          stop_reason: "end_turn", stop_sequence: null, usage: { input_tokens: USAGE.inputTokens, output_tokens: USAGE.outputTokens },
        });
      }
    }
    googleError(res, 404, "NOT_FOUND", `No ${method} for ${publisher} model ${model}.`);
  }

  const server = createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks).toString("utf8");
    const at = new URL(req.url, "http://x");
    // The browser runner's page is another origin.
    res.setHeader("access-control-allow-origin", "*");
    if (req.method === "OPTIONS") {
      res.writeHead(204, { "access-control-allow-headers": "*", "access-control-allow-methods": "POST, GET" });
      return res.end();
    }
    if (at.pathname === "/token" && req.method === "POST") return token(req, res, body);
    if (at.pathname === "/_test/seen") return json(res, 200, seen);
    if (at.pathname === "/_test/mints") return json(res, 200, { mints: mints.get(at.searchParams.get("iss")) ?? 0 });
    if (at.pathname === "/_test/revoke") {
      for (const [t, { iss }] of tokens) if (iss === at.searchParams.get("iss")) tokens.delete(t);
      return json(res, 200, {});
    }
    const route = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):(\w+)$/.exec(at.pathname);
    if (route && req.method === "POST") return vertex(req, res, body, route);
    googleError(res, 404, "NOT_FOUND", "Not found.");
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    origin: `${url}/v1`,
    tokenUri: `${url}/token`,
    privatePem,
    serviceAccount: (email = `sa-${randomBytes(4).toString("hex")}@baton-local.iam.gserviceaccount.com`) => ({
      type: "service_account",
      project_id: PROJECT,
      private_key_id: kid,
      private_key: privatePem,
      client_email: email,
      client_id: "1234567890",
      token_uri: `${url}/token`,
    }),
    seen,
    mints: (iss) => mints.get(iss) ?? 0,
    stop: () => new Promise((resolve) => server.close(resolve)),
  };
}
