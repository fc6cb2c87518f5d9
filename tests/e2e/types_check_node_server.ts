// Compile-only check of pkg/gateway/env.d.ts and pkg/gateway/node-server.d.ts (`deno check`,
// strict), imported by types_check.ts: a Node program embedding the gateway type-checks.
import { createGateway } from "../../pkg/gateway.d.ts";
import { configFromEnv } from "../../pkg/gateway/env.d.ts";
import { serve } from "../../pkg/gateway/node-server.d.ts";
import type { NodeGatewayServer } from "../../pkg/gateway/node-server.d.ts";

export async function embedded(env: Record<string, string | undefined>): Promise<string> {
  const server: NodeGatewayServer = await serve(createGateway(configFromEnv(env)), { host: "127.0.0.1", port: 0 });
  const inFlight: number = server.inFlight;
  // @ts-expect-error: typed unknown (no @types/node needed); a Node program casts it
  server.server.on("close", () => {});
  await server.close();
  await server.closeNow();
  // Any fetch handler, as an object or a function.
  await serve((request: Request) => new Response(request.url));
  // @ts-expect-error: the port is a number
  await serve({ fetch: () => new Response() }, { port: "8787" });
  return `${server.url} ${inFlight}`;
}
