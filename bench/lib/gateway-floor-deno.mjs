// The floor under any JavaScript gateway on Deno, for the gateway bench: a proxy that forwards
// the client's body to UPSTREAM and pipes the answer back through a JavaScript ReadableStream,
// one enqueue per chunk read, parsing and deciding nothing. What llm-baton's gateway costs above
// this is its own work; what this costs is Deno's (a fetch body read, a promise and a socket
// write per chunk the upstream sent). Prints GATEWAY_URL=... once listening.
// FLOOR_READER=byob reads the upstream into one reused buffer, as llm-baton's gateway does
// (src/driver/attempt.rs), instead of the default reader's fresh zeroed 64 KiB per read.
//
//   UPSTREAM=http://127.0.0.1:PORT/ok deno run --allow-net=127.0.0.1 --allow-env bench/lib/gateway-floor-deno.mjs
const upstream = Deno.env.get("UPSTREAM");
const byob = Deno.env.get("FLOOR_READER") === "byob";
const READ_BUFFER_BYTES = 64 << 10;

Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) => console.log(`GATEWAY_URL=http://${a.hostname}:${a.port}`) }, async (req) => {
  const res = await fetch(`${upstream}${new URL(req.url).pathname}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: await req.arrayBuffer(),
  });
  const reader = res.body.getReader(byob ? { mode: "byob" } : undefined);
  let buffer = new Uint8Array(byob ? READ_BUFFER_BYTES : 0);
  const body = new ReadableStream({
    async pull(controller) {
      const { done, value } = await (byob ? reader.read(buffer) : reader.read());
      if (done) return controller.close();
      if (!byob) return controller.enqueue(value);
      // The client's chunk is a copy: the buffer goes back to the next read.
      controller.enqueue(value.slice());
      buffer = new Uint8Array(value.buffer);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, { status: res.status, headers: { "content-type": res.headers.get("content-type") ?? "application/json" } });
});
