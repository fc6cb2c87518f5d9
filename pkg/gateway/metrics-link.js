// A deployed gateway's link to its `/metrics` (docs/gateway.md, "Metrics"): `gateway.metrics`
// read from the config, the scraper's key checked, and the counting code (metrics.js) imported at
// the first request. Here, not in pkg/gateway.js or core.js, which a Baton's download shares
// (baton.fetch): only an app of `llm-baton/gateway`'s createGateway carries this.
import { configError, guard, readOptionObject } from "../core.js";

const utf8 = new TextEncoder();

/**
 * `[config for the wasm, metrics key or undefined]`: `gateway.metrics` (`{ apiKey }`, the key a
 * scraper of `/metrics` sends) is read here, since only the gateway's JavaScript serves metrics;
 * the rest of the config goes to the wasm, which validates it. Throws a config error for a
 * `gateway.metrics` that is not such an object.
 */
export function splitMetrics(config) {
  const gateway = config?.gateway;
  if (gateway === null || typeof gateway !== "object" || !("metrics" in gateway)) return [config, undefined];
  const { metrics, ...rest } = gateway;
  if (metrics === undefined || metrics === null) return [{ ...config, gateway: rest }, undefined];
  const example = "{ apiKey: process.env.METRICS_KEY }";
  const { apiKey } = readOptionObject(metrics, "gateway.metrics", ["apiKey"], example, "createGateway") ?? {};
  const unusable = /[^\x21-\x7e]/;
  if (typeof apiKey !== "string" || apiKey.length < 16 || unusable.test(apiKey)) {
    const got =
      apiKey === undefined
        ? "it is missing; is its environment variable set?"
        : typeof apiKey === "string"
          ? `got a string of ${apiKey.length} characters${unusable.test(apiKey) ? ", some of them spaces or not printable ASCII" : ""}`
          : `got ${typeof apiKey}`;
    throw configError(
      "gateway.metrics.apiKey",
      `must be a key of 16 or more printable ASCII characters, without spaces, that a scraper sends as \`Authorization: Bearer <key>\` (${got}); not one of gateway.apiKeys`,
      "createGateway",
    );
  }
  if (Array.isArray(rest.apiKeys) && rest.apiKeys.includes(apiKey)) {
    throw configError("gateway.metrics.apiKey", "is also in gateway.apiKeys; give the scraper a key of its own, so a client key cannot read the metrics", "createGateway");
  }
  return [{ ...config, gateway: rest }, apiKey];
}

/**
 * The metrics link of a gateway on `runtime` whose WasmGateway `instance()` gives, for pkg/gateway.js:
 * `current`, the GatewayMetrics (metrics.js) once imported, else null; `load()`, resolving with it
 * (or null when the import failed: reported with console.error, that request goes uncounted and
 * the next one imports again); `scrape(request)`, the answer to `/metrics`; `health()`, this
 * process's breakers; and `gather(metrics)`, what a scrape shows (`{ snapshot, health }`): this
 * process's counts and breakers, unless pkg/gateway/cluster.js made it ask the primary for every
 * worker's. `code`: the imported module.
 */
export function metricsLink(apiKey, runtime, instance) {
  let loading = null;
  const link = {
    current: null,
    code: null,
    load() {
      loading ??= import("./metrics.js").then(
        (code) => {
          link.code = code;
          return (link.current = new code.GatewayMetrics(instance.config));
        },
        (e) => {
          loading = null;
          console.error("llm-baton: gateway/metrics.js could not be loaded; this request goes uncounted:", e);
          return null;
        },
      );
      return loading;
    },
    scrape: (request) => scrape(link, apiKey, request),
    health: () => guard(runtime, () => instance().health()),
    gather: async (metrics) => ({ snapshot: metrics.snapshot(), health: link.health() }),
  };
  return link;
}

/**
 * `GET /metrics`: the Prometheus text of every process of this gateway, for a scraper that sends
 * the metrics key as a Bearer token. Any other caller gets a 401 that says nothing else (the
 * gateway's client keys are not this key), before anything else is looked at.
 */
async function scrape(link, apiKey, request) {
  if (!authorized(request, apiKey)) {
    return new Response("unauthorized\n", { status: 401, headers: { "content-type": "text/plain; charset=utf-8", "www-authenticate": 'Bearer realm="metrics"' } });
  }
  if (request.method !== "GET" && request.method !== "HEAD") {
    return new Response(`/metrics takes GET, not ${request.method}\n`, { status: 405, headers: { "content-type": "text/plain; charset=utf-8", allow: "GET, HEAD" } });
  }
  const metrics = link.current ?? (await link.load());
  if (metrics === null) return new Response("metrics unavailable\n", { status: 503, headers: { "content-type": "text/plain; charset=utf-8" } });
  const { render, CONTENT_TYPE } = link.code;
  const { snapshot, health } = await link.gather(metrics);
  const body = request.method === "HEAD" ? null : render(snapshot, health, metrics.targets);
  return new Response(body, { status: 200, headers: { "content-type": CONTENT_TYPE, "cache-control": "no-store" } });
}

/**
 * Whether `request` carries the metrics key as `Authorization: Bearer <key>` (what Prometheus's
 * `authorization` setting sends). Compared in time independent of where the two differ.
 */
function authorized(request, apiKey) {
  const header = request.headers.get("authorization") ?? "";
  const sent = utf8.encode(header.startsWith("Bearer ") ? header.slice(7) : "");
  const key = utf8.encode(apiKey);
  let differ = sent.length ^ key.length;
  for (let i = 0; i < key.length; i += 1) differ |= (sent[i % (sent.length || 1)] ?? 0) ^ key[i];
  return differ === 0;
}
