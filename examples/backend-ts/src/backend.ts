// An example job backend for the approvals bot, in TypeScript on Node's
// standard library. It sends one signed approval.requested event to the
// bot, then serves the bot's calls (docs/protocol.md, api/openapi.yaml):
// it verifies the bot's signature on each, answers the argument look-up
// with the call's full arguments, and records the decision only when it
// is bound to the call's digest.
//
// Environment: BOT_URL (the bot, e.g. http://127.0.0.1:8080), LISTEN
// (where this backend serves, the bot's backend.url; default
// 127.0.0.1:9090), BOT_EVENTS_SECRET and BOT_CALLS_SECRET (the bot's
// backend.events_secrets and backend.calls_secrets), EXAMPLE_ARGUMENTS
// (the call's arguments as JSON; a default merge otherwise).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { createServer, IncomingMessage, ServerResponse } from "node:http";

const MAX_SKEW = 300; // seconds a signature's t may be from this clock
const MAX_BODY = 1 << 20;

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// RFC 8785 (JCS): JSON.stringify is its form of strings and numbers;
// object keys are sorted by UTF-16 code units, as sort() does.
export function canonical(v: Json): string {
  if (Array.isArray(v)) return "[" + v.map(canonical).join(",") + "]";
  if (v !== null && typeof v === "object") {
    return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canonical(v[k])).join(",") + "}";
  }
  return JSON.stringify(v);
}

export const digest = (args: Json) => "sha256:" + createHash("sha256").update(canonical(args), "utf8").digest("hex");

const hmac = (secret: string, t: string, body: Buffer) =>
  createHmac("sha256", secret).update(t + ".").update(body).digest("hex");

export function sign(secret: string, body: Buffer): string {
  const t = String(Math.floor(Date.now() / 1000));
  return `t=${t},v1=${hmac(secret, t, body)}`;
}

// The bot's Approvals-Signature: one t, 1 to 8 v1, within MAX_SKEW.
export function verify(secrets: string[], header: string | undefined, body: Buffer): boolean {
  const parts = (header ?? "").split(",");
  const ts = parts.filter((p) => p.startsWith("t=")).map((p) => p.slice(2));
  const sigs = parts.filter((p) => p.startsWith("v1=")).map((p) => p.slice(3));
  if (ts.length !== 1 || sigs.length < 1 || sigs.length > 8 || ts.length + sigs.length !== parts.length) return false;
  if (!/^(0|[1-9][0-9]*)$/.test(ts[0]) || Math.abs(Date.now() / 1000 - Number(ts[0])) > MAX_SKEW) return false;
  return secrets.some((secret) => {
    const want = Buffer.from(hmac(secret, ts[0], body));
    return sigs.some((s) => s.length === want.length && timingSafeEqual(Buffer.from(s), want));
  });
}

const now = new Date();
now.setMilliseconds(0);
const stamp = now.toISOString().replace(".000Z", "Z");
const args = JSON.parse(process.env.EXAMPLE_ARGUMENTS || '{"repo":"acme/api","pr":1234}') as Json;
const approval = {
  id: `a-ts-${stamp.replace(/[-:]/g, "")}-${process.pid}`,
  revision: 1,
  digest: digest(args),
  status: "pending" as "pending" | "approved" | "denied",
  answers: new Map<string, { request: string; answer: object }>(), // Idempotency-Key -> first answer
};
const event = {
  id: "evt-" + approval.id, type: "approval.requested", time: stamp, tenant: "acme",
  data: {
    id: approval.id, revision: 1, tenant: "acme", kind: "call",
    job: { id: "j-ts-1", started_by: "user:ada", agent: "release-bot" },
    call: { function: "acme_github.merge", arguments: args, args_sha256: approval.digest },
    asked_by: { reason: "requires_approval" }, content: { restricted: false }, requested_at: stamp,
  },
};

// POST one signed event; retry 5xx and failures to connect, under the same id.
async function sendEvent(botURL: string, secret: string): Promise<[number, string]> {
  const body = Buffer.from(JSON.stringify(event));
  for (let attempt = 0; attempt < 8; attempt++) {
    try {
      const resp = await fetch(botURL.replace(/\/$/, "") + "/v1/events", {
        method: "POST", body, signal: AbortSignal.timeout(10_000),
        headers: { "Content-Type": "application/json", "Approvals-Signature": sign(secret, body) },
      });
      if (resp.status < 500) return [resp.status, await resp.text()];
    } catch { /* not reachable yet: retry */ }
    await new Promise((r) => setTimeout(r, Math.min(500 * 2 ** attempt, 8000)));
  }
  throw new Error("the bot did not take the event");
}

function send(res: ServerResponse, status: number, obj: object) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}
const fail = (res: ServerResponse, status: number, error: string, message: string) => send(res, status, { error, message });

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => { size += c.length; if (size <= MAX_BODY) chunks.push(c); });
    req.on("end", () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

async function serve(req: IncomingMessage, res: ServerResponse, secrets: string[]) {
  const m = /^\/v1\/approvals\/([A-Za-z0-9._:-]{1,64})\/(decision|arguments)$/.exec(req.url ?? "");
  if (req.method !== "POST" || !m) return fail(res, 404, "not_found", "no such endpoint");
  const body = await readBody(req);
  if (body === null) return fail(res, 413, "too_large", "the body is over 1 MiB");
  if (!verify(secrets, req.headers["approvals-signature"] as string | undefined, body)) {
    return fail(res, 401, "bad_signature", "the Approvals-Signature header does not verify");
  }
  const key = req.headers["idempotency-key"] as string | undefined;
  if (!key) return fail(res, 400, "missing_idempotency_key", "send an Idempotency-Key");
  let call: { [k: string]: any };
  try { call = JSON.parse(body.toString("utf8")); } catch { return fail(res, 400, "bad_json", "the body is not JSON"); }
  const [, id, kind] = m;
  console.log(`${kind} call for ${id}: signature verified`);
  if (id !== approval.id || call.approval_id !== id) return fail(res, 404, "not_found", `approval ${id} is not known here`);
  if (call.revision !== approval.revision) {
    return fail(res, 409, "stale_revision", `approval ${id} is at revision ${approval.revision}`);
  }
  if (kind === "arguments") {
    console.log(`arguments of ${id} revision ${approval.revision} shown to ${call.actor}`);
    return send(res, 200, { arguments: args, args_sha256: approval.digest });
  }
  const prev = approval.answers.get(key); // a retry of the same intent gets the same answer
  if (prev) {
    return prev.request === body.toString("utf8") ? send(res, 200, prev.answer)
      : fail(res, 422, "idempotency_key_reused", "this Idempotency-Key was used for another decision");
  }
  if (approval.status !== "pending") {
    return send(res, 409, { error: "already_decided", message: `already ${approval.status}`, status: approval.status });
  }
  if ("args_sha256" in call && call.args_sha256 !== approval.digest) {
    return fail(res, 422, "digest_mismatch",
      `approval ${id} is not for the arguments ${call.args_sha256} you decided on: look at the call again`);
  }
  approval.status = call.decision === "approve" ? "approved" : "denied";
  const bound = "args_sha256" in call ? ` bound to ${call.args_sha256}` : "";
  console.log(`${approval.status} ${id} revision ${call.revision} by ${call.actor} via ${call.via?.surface}${bound}`);
  const answer = { status: approval.status, message: `Recorded: ${approval.status} by ${call.actor}.` };
  approval.answers.set(key, { request: body.toString("utf8"), answer });
  return send(res, 200, answer);
}

async function main() {
  const listen = process.env.LISTEN || "127.0.0.1:9090";
  const i = listen.lastIndexOf(":");
  const secrets = [process.env.BOT_CALLS_SECRET ?? ""].filter((s) => s !== "");
  const server = createServer((req, res) => {
    serve(req, res, secrets).catch(() => fail(res, 500, "internal", "the example backend failed"));
  });
  await new Promise<void>((r) => server.listen(Number(listen.slice(i + 1)), listen.slice(0, i), r));
  console.log(`example backend at http://${listen}`);
  const [status, answer] = await sendEvent(process.env.BOT_URL ?? "", process.env.BOT_EVENTS_SECRET ?? "");
  console.log(`sent approval ${approval.id} with args_sha256 ${approval.digest}: ${status} ${answer.trim()}`);
  if (Math.floor(status / 100) !== 2) process.exit(1);
}

main().catch((e) => { console.error(e); process.exit(1); });
