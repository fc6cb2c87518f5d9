// The floors' proxy (gateway-floor-deno.mjs, gateway-floor-workerd.mjs): forwards the client's
// body to `upstream` and pipes the answer back through a JavaScript ReadableStream, one enqueue
// per chunk read, parsing and deciding nothing, on whichever runtime imports it.
export async function passThrough(request, upstream) {
  const res = await fetch(`${upstream}${new URL(request.url).pathname}`, {
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
}
