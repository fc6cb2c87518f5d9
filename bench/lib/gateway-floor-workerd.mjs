// The floor under any JavaScript gateway in workerd, for the gateway bench: a Worker that
// forwards the client's body to env.UPSTREAM and pipes the answer back through a JavaScript
// ReadableStream, one enqueue per chunk read, parsing and deciding nothing (the same proxy as
// gateway-floor-deno.mjs). What llm-baton's gateway costs above this in workerd is its own work;
// what this costs is workerd's. bench/gateway.mjs runs it in Miniflare.
export default {
  async fetch(request, env) {
    const res = await fetch(`${env.UPSTREAM}${new URL(request.url).pathname}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: await request.arrayBuffer(),
    });
    const reader = res.body.getReader();
    const body = new ReadableStream({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
  },
};
