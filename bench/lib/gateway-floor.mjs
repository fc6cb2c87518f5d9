// The floors' proxy (gateway-floor-deno.mjs, gateway-floor-workerd.mjs): forwards the client's
// body to `upstream` and pipes the answer back through a JavaScript ReadableStream, one enqueue
// per chunk read, parsing and deciding nothing, on whichever runtime imports it. `byob` reads the
// upstream into one reused buffer, as llm-baton's gateway does (src/driver/attempt.rs), instead
// of the default reader's fresh zeroed 64 KiB per read.
const READ_BUFFER_BYTES = 64 << 10;

export async function passThrough(request, upstream, { byob = false } = {}) {
  const res = await fetch(`${upstream}${new URL(request.url).pathname}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: await request.arrayBuffer(),
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
}
