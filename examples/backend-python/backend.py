#!/usr/bin/env python3
"""An example job backend for the approvals bot, standard library only.

It sends one signed approval.requested event to the bot, then serves the
bot's calls (docs/protocol.md, api/openapi.yaml): it verifies the bot's
signature on each, answers the argument look-up with the call's full
arguments, and records the decision only when it is bound to the call's
digest.

Environment: BOT_URL (the bot, e.g. http://127.0.0.1:8080), LISTEN (where
this backend serves, the bot's backend.url; default 127.0.0.1:9090),
BOT_EVENTS_SECRET and BOT_CALLS_SECRET (the bot's backend.events_secrets
and backend.calls_secrets), EXAMPLE_ARGUMENTS (the call's arguments as
JSON; a default merge otherwise).
"""
import hashlib, hmac, json, os, re, sys, time, urllib.error, urllib.request
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_SKEW = 300  # seconds a signature's t may be from this clock
MAX_BODY = 1 << 20


def canonical(value):
    """RFC 8785 (JCS) for JSON of strings, integers, booleans, null, lists
    and objects; keys sorted by UTF-16 code units. A backend whose
    arguments hold fractions should use a full JCS library."""
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(canonical(k) + ":" + canonical(value[k]) for k in keys) + "}"
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, float):
        raise ValueError("fractions need a full JCS library")
    return json.dumps(value, ensure_ascii=False)


def digest(arguments):
    return "sha256:" + hashlib.sha256(canonical(arguments).encode()).hexdigest()


def sign(secret, body):
    t = str(int(time.time()))
    mac = hmac.new(secret, t.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"t={t},v1={mac}"


def verify(secrets, header, body):
    """The bot's Approvals-Signature: one t, 1 to 8 v1, within MAX_SKEW."""
    parts = (header or "").split(",")
    ts = [p[2:] for p in parts if p.startswith("t=")]
    sigs = [p[3:] for p in parts if p.startswith("v1=")]
    if len(ts) != 1 or not 1 <= len(sigs) <= 8 or len(ts) + len(sigs) != len(parts):
        return False
    if not re.fullmatch(r"0|[1-9][0-9]*", ts[0]) or abs(time.time() - int(ts[0])) > MAX_SKEW:
        return False
    for secret in secrets:
        want = hmac.new(secret, ts[0].encode() + b"." + body, hashlib.sha256).hexdigest()
        if any(hmac.compare_digest(want, s) for s in sigs):
            return True
    return False


class Backend:
    def __init__(self, arguments):
        now = datetime.now(timezone.utc).replace(microsecond=0)
        self.id = "a-py-" + now.strftime("%Y%m%dT%H%M%S") + "-" + str(os.getpid())
        self.revision, self.arguments, self.digest = 1, arguments, digest(arguments)
        self.status, self.answers = "pending", {}  # answers: Idempotency-Key -> (request, answer)
        stamp = now.isoformat().replace("+00:00", "Z")
        self.event = {
            "id": "evt-" + self.id, "type": "approval.requested", "time": stamp, "tenant": "acme",
            "data": {
                "id": self.id, "revision": 1, "tenant": "acme", "kind": "call",
                "job": {"id": "j-py-1", "started_by": "user:ada", "agent": "release-bot"},
                "call": {"function": "acme_github.merge", "arguments": arguments, "args_sha256": self.digest},
                "asked_by": {"reason": "requires_approval"}, "content": {"restricted": False},
                "requested_at": stamp,
            },
        }


def send_event(bot_url, secret, event):
    """POST one signed event; retry 5xx and failures to connect, under the same id."""
    body = json.dumps(event).encode()
    for attempt in range(8):
        req = urllib.request.Request(bot_url.rstrip("/") + "/v1/events", data=body, method="POST", headers={
            "Content-Type": "application/json", "Approvals-Signature": sign(secret, body)})
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.status, resp.read().decode()
        except urllib.error.HTTPError as e:
            if e.code < 500:
                return e.code, e.read().decode()
        except OSError:
            pass
        time.sleep(min(0.5 * 2 ** attempt, 8))
    raise SystemExit("the bot did not take the event")


class Handler(BaseHTTPRequestHandler):
    backend, secrets = None, []

    def log_message(self, *args):
        pass

    def answer(self, status, obj):
        body = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, status, code, message):
        self.answer(status, {"error": code, "message": message})

    def do_POST(self):
        m = re.fullmatch(r"/v1/approvals/([A-Za-z0-9._:-]{1,64})/(decision|arguments)", self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if not m:
            return self.error(404, "not_found", "no such endpoint")
        if length > MAX_BODY:
            return self.error(413, "too_large", "the body is over 1 MiB")
        body = self.rfile.read(length)
        if not verify(self.secrets, self.headers.get("Approvals-Signature"), body):
            return self.error(401, "bad_signature", "the Approvals-Signature header does not verify")
        key = self.headers.get("Idempotency-Key")
        if not key:
            return self.error(400, "missing_idempotency_key", "send an Idempotency-Key")
        try:
            req = json.loads(body)
        except ValueError:
            return self.error(400, "bad_json", "the body is not JSON")
        b, (approval_id, kind) = self.backend, m.groups()
        print(f"{kind} call for {approval_id}: signature verified", flush=True)
        if approval_id != b.id or req.get("approval_id") != approval_id:
            return self.error(404, "not_found", f"approval {approval_id} is not known here")
        if req.get("revision") != b.revision:
            return self.error(409, "stale_revision", f"approval {approval_id} is at revision {b.revision}")
        if kind == "arguments":
            print(f"arguments of {approval_id} revision {b.revision} shown to {req.get('actor')}", flush=True)
            return self.answer(200, {"arguments": b.arguments, "args_sha256": b.digest})
        if key in b.answers:  # a retry of the same intent gets the same answer
            prev_req, prev = b.answers[key]
            return self.answer(200, prev) if prev_req == body else self.error(
                422, "idempotency_key_reused", "this Idempotency-Key was used for another decision")
        if b.status != "pending":
            return self.answer(409, {"error": "already_decided", "message": f"already {b.status}", "status": b.status})
        if "args_sha256" in req and req["args_sha256"] != b.digest:
            return self.error(422, "digest_mismatch", f"approval {approval_id} is not for the arguments "
                              f"{req['args_sha256']} you decided on: look at the call again")
        b.status = "approved" if req.get("decision") == "approve" else "denied"
        bound = f" bound to {req['args_sha256']}" if "args_sha256" in req else ""
        print(f"{b.status} {approval_id} revision {req['revision']} by {req.get('actor')} "
              f"via {req.get('via', {}).get('surface')}{bound}", flush=True)
        result = {"status": b.status, "message": f"Recorded: {b.status} by {req.get('actor')}."}
        b.answers[key] = (body, result)
        return self.answer(200, result)


def main():
    arguments = json.loads(os.environ.get("EXAMPLE_ARGUMENTS") or '{"repo": "acme/api", "pr": 1234}')
    host, _, port = os.environ.get("LISTEN", "127.0.0.1:9090").rpartition(":")
    Handler.backend = Backend(arguments)
    Handler.secrets = [os.environ["BOT_CALLS_SECRET"].encode()]
    server = ThreadingHTTPServer((host, int(port)), Handler)
    print(f"example backend at http://{host}:{port}", flush=True)
    status, answer = send_event(os.environ["BOT_URL"], os.environ["BOT_EVENTS_SECRET"].encode(), Handler.backend.event)
    print(f"sent approval {Handler.backend.id} with args_sha256 {Handler.backend.digest}: {status} {answer.strip()}", flush=True)
    if status // 100 != 2:
        sys.exit(1)
    server.serve_forever()


if __name__ == "__main__":
    main()
