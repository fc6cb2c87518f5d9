// The gateway bench's load generator and process meters. `connections` loops each send one
// request after another over a keep-alive agent (one socket per loop); the requests that end
// between the warm-up's end and the cell's end are counted (`total` counts all of them). The
// gateway's CPU (utime + stime of its process tree, from /proc) is read at the warm-up's end and
// at the cell's end.
import { Agent, request } from "node:http";
import { readFileSync, readdirSync } from "node:fs";
import { execFileSync } from "node:child_process";
import { stats } from "./common.mjs";

const TICKS = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

/** One POST; resolves to { status, ms, firstByteMs, body }. */
function post(agent, url, headers, body) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let firstByteMs = null;
    const req = request(url, { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...headers } }, (res) => {
      const parts = [];
      res.on("data", (c) => {
        if (firstByteMs === null) firstByteMs = performance.now() - t0;
        parts.push(c);
      });
      res.on("end", () => resolve({ status: res.statusCode, ms: performance.now() - t0, firstByteMs, body: Buffer.concat(parts).toString("utf8") }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Runs one cell: `connections` loops for warmupMs + seconds. `check(res)` says whether an answer
 * is right (a wrong one counts as an error, with its first text kept). `pid`: the gateway's
 * process, for CPU; null for none.
 */
export async function runCell({ url, headers = {}, body, connections, warmupMs, measureMs, check, pid }) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const start = performance.now();
  const warmEnd = start + warmupMs;
  const end = warmEnd + measureMs;
  const ms = [];
  const firstByte = [];
  let errors = 0;
  let total = 0;
  let firstError = null;
  let cpuAtWarmEnd = null;
  const warmTimer = setTimeout(() => { cpuAtWarmEnd = cpuSeconds(pid); }, warmupMs);
  let cpuAtEnd = null;
  const endTimer = setTimeout(() => { cpuAtEnd = cpuSeconds(pid); }, warmupMs + measureMs);
  const loop = async () => {
    while (performance.now() < end) {
      let res;
      try {
        res = await post(agent, url, headers, body);
      } catch (e) {
        res = { status: 0, body: String(e?.message ?? e) };
      }
      total += 1;
      const done = performance.now();
      const counted = done >= warmEnd && done <= end;
      if (res.status === 200 && check(res)) {
        if (counted) {
          ms.push(res.ms);
          if (res.firstByteMs !== null) firstByte.push(res.firstByteMs);
        }
      } else {
        if (counted) errors += 1;
        firstError ??= `${res.status}: ${res.body.slice(0, 200)}`;
        if (res.status === 0) await new Promise((r) => setTimeout(r, 10));
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  clearTimeout(warmTimer);
  clearTimeout(endTimer);
  cpuAtEnd ??= cpuSeconds(pid);
  agent.destroy();
  const s = stats(ms);
  const cpu = cpuAtWarmEnd === null || cpuAtEnd === null ? null : cpuAtEnd - cpuAtWarmEnd;
  return {
    connections, n: ms.length, total, errors, firstError,
    perSecond: ms.length / (measureMs / 1000),
    p50: s.p50, p99: s.p99,
    firstByteP50: stats(firstByte).p50, firstByteP99: stats(firstByte).p99,
    cpuSecondsPer1000: cpu === null || ms.length === 0 ? null : (cpu / ms.length) * 1000,
  };
}

/** The pids of `pid` and all its descendants (from /proc/PID/stat's ppid). */
export function processTree(pid) {
  const children = new Map();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(d));
    } catch {}
  }
  const out = [];
  const walk = (p) => { out.push(p); for (const c of children.get(p) ?? []) walk(c); };
  walk(pid);
  return out;
}

/** utime + stime of `pid`'s process tree, in seconds; null without a pid. */
export function cpuSeconds(pid) {
  if (pid == null) return null;
  let ticks = 0;
  for (const p of processTree(pid)) {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(f[11]) + Number(f[12]); // fields 14 and 15 of proc(5): utime, stime
    } catch {}
  }
  return ticks / TICKS;
}

/**
 * Pins `pid`'s process tree, every thread of it, to `cores` (taskset's list: "1", "0-2"), so a
 * gateway's CPU is not shared with the load it is measured under. False when taskset failed.
 */
export function pinTree(pid, cores) {
  try {
    for (const p of processTree(pid)) execFileSync("taskset", ["-a", "-p", "-c", cores, String(p)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Peak resident memory (VmHWM) of `pid`'s process tree, summed, in MiB. */
export const peakRssMiB = (pid) => statusMiB(pid, "VmHWM");

/** Resident memory now (VmRSS) of `pid`'s process tree, summed, in MiB. */
export const rssMiB = (pid) => statusMiB(pid, "VmRSS");

function statusMiB(pid, field) {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      kb += Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${p}/status`, "utf8"))[1]);
    } catch {}
  }
  return kb / 1024;
}

/**
 * The fresh-process measure (issue 40's first row, the protocol of a public gateway overhead
 * benchmark): on a gateway just started, `warmup` requests, then `rounds` rounds of `perRound`
 * small whole answers one at a time, each gateway request followed by the same request sent
 * direct. A round's added latency is the median through the gateway minus the median direct; the
 * result is the median over rounds, and the gateway's CPU over the rounds per gateway request.
 */
export async function runFresh({ url, directUrl, headers = {}, directHeaders = {}, body, directBody, check, pid, warmup = 15, rounds = 7, perRound = 25 }) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const directAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const must = (res, what) => {
    if (res.status !== 200 || !check(res)) throw new Error(`${what}: ${res.status} ${res.body.slice(0, 200)}`);
    return res.ms;
  };
  try {
    for (let i = 0; i < warmup; i++) must(await post(agent, url, headers, body), "a warm-up request");
    const cpuBefore = cpuSeconds(pid);
    const added = [];
    for (let r = 0; r < rounds; r++) {
      const through = [];
      const direct = [];
      for (let i = 0; i < perRound; i++) {
        through.push(must(await post(agent, url, headers, body), "a request through the gateway"));
        direct.push(must(await post(directAgent, directUrl, directHeaders, directBody), "a direct request"));
      }
      added.push(stats(through).p50 - stats(direct).p50);
    }
    const cpu = pid == null ? null : cpuSeconds(pid) - cpuBefore;
    return { addedMs: stats(added).p50, roundsMs: added, cpuMsPerRequest: cpu === null ? null : (cpu * 1000) / (rounds * perRound) };
  } finally {
    agent.destroy();
    directAgent.destroy();
  }
}
