#!/usr/bin/env python3
"""The fleet of deploy/compose.yaml, end to end through its balancer on 127.0.0.1:8700.

    scripts/fleet-compose.sh up --small && scripts/fleet-compose.sh test

Runs against the fleet `up` started (two guardian replicas sharing Redis, the model server,
nginx): the images are what users expect (non-root, labelled, a HEALTHCHECK, the default policy
inside, `--help` works, the model port unpublished); a deny rule, a rule allow and a reviewed
action; an approval remembered on one replica honoured by the other and the breaker counted
across both (each replica's audit log shows its share); one replica killed while requests keep
being answered; Redis killed (fail closed, /healthz degraded) and back (recovery); a restart of
the whole fleet after which every replica's audit chain verifies. Decisions per second through
the balancer with two replicas and with one are measured in the same run (wrk) and printed.

Exits 0 only if every step passes. Standard library only (Python 3.11).
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

BASE = "http://127.0.0.1:8700"
COMPOSE = None
GUARDIAN_IMAGE = "guardian-fleet/guardian:local"
CONFIG = "/etc/guardian/guardian.toml"
SMALL = os.environ.get("GUARDIAN_FLEET_MODEL") == "small"


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)


def run(*cmd, ok=True, timeout=600):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if ok and p.returncode != 0:
        raise Failed(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p


def compose(*args, ok=True, timeout=600):
    return run("docker", "compose", "-f", COMPOSE, *args, ok=ok, timeout=timeout)


def request(method, path, body=None, timeout=180):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def review(command, session, intent="Fix the failing test"):
    status, text = request("POST", "/v1/review", {
        "action": {"kind": "shell", "command": command, "cwd": "/work/repo"},
        "session": {"id": session, "agent": "fleet-test", "workspace_roots": ["/work/repo"]},
        "intent": intent,
    })
    check(status == 200, f"review of {command!r}: HTTP {status}: {text}")
    return json.loads(text)


def health():
    status, text = request("GET", "/healthz", timeout=10)
    check(status == 200, f"/healthz: HTTP {status}: {text}")
    return json.loads(text)


def wait_until(what, cond, seconds=120, every=1.0):
    deadline = time.time() + seconds
    last = None
    while time.time() < deadline:
        try:
            last = cond()
            if last:
                return last
        except (Failed, OSError, ValueError) as e:
            last = e
        time.sleep(every)
    raise Failed(f"{what}: not within {seconds} s (last: {last})")


def wait_healthy(services, seconds=300):
    def all_healthy():
        for s in services:
            cid = compose("ps", "-q", s).stdout.strip()
            if not cid:
                return False
            state = run("docker", "inspect", "-f", "{{.State.Health.Status}}", cid).stdout.strip()
            if state != "healthy":
                return False
        return True
    wait_until(f"{', '.join(services)} healthy", all_healthy, seconds, every=2)


def audit_records(replica, session):
    """The replica's audit records of `session` (JSON lines from `guardian audit`)."""
    p = compose("exec", "-T", replica, "guardian", "audit", "--config", CONFIG,
                "--session", session)
    return [json.loads(line) for line in p.stdout.splitlines() if line.strip().startswith("{")]


# --- the steps ------------------------------------------------------------------------------------

def step_images():
    info = json.loads(run("docker", "image", "inspect", GUARDIAN_IMAGE).stdout)[0]
    cfg = info["Config"]
    check(cfg.get("User") not in (None, "", "0", "root"), f"guardian runs as non-root: {cfg.get('User')}")
    check(cfg.get("Healthcheck", {}).get("Test"), "guardian's image has a HEALTHCHECK")
    labels = cfg.get("Labels") or {}
    for key in ("org.opencontainers.image.title", "org.opencontainers.image.version",
                "org.opencontainers.image.licenses"):
        check(key in labels, f"label {key}")
    size_mb = info["Size"] / 1e6
    print(f"    guardian image: {size_mb:.1f} MB (target 120 MB)")
    check(size_mb <= 120, f"the guardian image is {size_mb:.1f} MB, over 120 MB")
    helped = run("docker", "run", "--rm", GUARDIAN_IMAGE, "--help")
    check("serve" in helped.stdout and "Usage" in helped.stdout, "docker run IMAGE --help")
    rules = run("docker", "run", "--rm", GUARDIAN_IMAGE, "policy").stdout
    check("Bash(git status *)" in rules, "the default policy is inside the image")
    uid = compose("exec", "-T", "guardian-1", "id", "-u").stdout.strip()
    check(uid == "10001", f"guardian-1 runs as uid 10001, not {uid}")
    model = json.loads(run("docker", "image", "inspect",
                           f"guardian-fleet/model:{'small' if SMALL else 'qwen'}").stdout)[0]
    check(model["Config"].get("User") not in (None, "", "0", "root"), "the model server runs as non-root")
    cid = compose("ps", "-q", "model").stdout.strip()
    ports = json.loads(run("docker", "inspect", "-f", "{{json .NetworkSettings.Ports}}", cid).stdout)
    check(not ports.get("8089/tcp"), f"the model port is not published on the host: {ports}")
    wait_healthy(["guardian-1", "guardian-2", "model", "redis"])


def step_health():
    h = health()
    check(h["status"] == "ok", f"health: {h}")
    check(h["session_store"] == {"kind": "redis", "ok": True}, f"health: {h}")


def step_rules():
    denied = review("rm -rf /", "ses-rules")
    check((denied["decision"], denied["decided_by"]) == ("deny", "rule"), f"deny rule: {denied}")
    allowed = review("git status", "ses-rules")
    check((allowed["decision"], allowed["decided_by"]) == ("allow", "rule"), f"rule allow: {allowed}")


def step_reviewed_and_remembered():
    first = review("cargo run --bin tool", "ses-memory")
    check(first["decided_by"] == "reviewer", f"reviewed: {first}")
    if first["decision"] != "allow":
        check(not SMALL, f"the small fleet's reviewer allows `cargo run --bin tool`: {first}")
        raise Failed("the reviewer denied `cargo run --bin tool`, so no approval can be "
                     "remembered: run the plumbing test with `up --small`")
    later = [review("cargo run --bin tool", "ses-memory") for _ in range(4)]
    for r in later:
        check((r["decision"], r["decided_by"]) == ("allow", "session"), f"remembered: {r}")
    other = review("cargo run --bin tool", "ses-memory-other")
    check(other["decided_by"] == "reviewer", f"not across sessions: {other}")
    # Which replica reviewed and which only remembered: their own audit logs say.
    by = {}
    for replica in ("guardian-1", "guardian-2"):
        by[replica] = sorted({r.get("decided_by") for r in audit_records(replica, "ses-memory")})
    print(f"    ses-memory decided_by per replica: {by}")
    reviewed_on = [k for k, v in by.items() if "reviewer" in v]
    check(len(reviewed_on) == 1, f"reviewed on one replica: {by}")
    other_replica = "guardian-2" if reviewed_on[0] == "guardian-1" else "guardian-1"
    check(by[other_replica] == ["session"],
          f"{other_replica} honoured the approval {reviewed_on[0]} remembered: {by}")


def step_breaker():
    answers = [review("rm -rf /", "ses-breaker") for _ in range(3)]
    check([a["interrupt"] for a in answers] == [False, False, True],
          f"three denials split across the replicas trip the breaker on the third: {answers}")
    counts = {r: len(audit_records(r, "ses-breaker")) for r in ("guardian-1", "guardian-2")}
    print(f"    ses-breaker records per replica: {counts}")
    check(all(n > 0 for n in counts.values()), f"both replicas counted: {counts}")


WRK_SCRIPT = """
counter = 0
request = function()
  counter = counter + 1
  local body = '{"action":{"kind":"shell","command":"git status","cwd":"/work/repo"},' ..
    '"session":{"id":"load-' .. (counter % 64) .. '"}}'
  return wrk.format("POST", "/v1/review", {["Content-Type"] = "application/json"}, body)
end
"""


def throughput(seconds):
    """Rule-decided reviews per second through the balancer (wrk, 2 threads, 16 connections)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        f.write(WRK_SCRIPT)
        script = f.name
    try:
        out = run("wrk", "-t2", "-c16", f"-d{seconds}s", "--latency", "-s", script,
                  BASE + "/v1/review", timeout=seconds + 60).stdout
    finally:
        os.unlink(script)
    m = re.search(r"Requests/sec:\s+([\d.]+)", out)
    check(m, f"wrk's output: {out}")
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    check(not errors, f"every request answered 2xx: {out}")
    p50 = re.search(r"^\s+50%\s+(\S+)", out, re.M)
    p99 = re.search(r"^\s+99%\s+(\S+)", out, re.M)
    return {"rps": float(m.group(1)), "p50": p50.group(1) if p50 else None,
            "p99": p99.group(1) if p99 else None}


def step_failover(results, seconds):
    results["two_replicas"] = throughput(seconds)
    compose("kill", "guardian-1")
    answered = [review("git status", f"ses-failover-{i}") for i in range(20)]
    check(all(a["decision"] == "allow" for a in answered), "answered through the other replica")
    check(review("rm -rf /", "ses-failover")["decision"] == "deny", "a deny rule still denies")
    check(health()["status"] == "ok", "healthy through the remaining replica")
    results["one_replica"] = throughput(seconds)
    compose("start", "guardian-1")
    wait_healthy(["guardian-1"])
    # nginx resolved the replicas' addresses when it started; restart it in case guardian-1
    # came back on another address.
    compose("restart", "balancer")
    wait_until("the balancer answers", lambda: health()["status"] == "ok", 60)


def step_redis_down_and_back():
    compose("kill", "redis")
    h = wait_until("/healthz degraded", lambda: (lambda h: h if h["status"] == "degraded" else None)(health()), 60)
    check(h["session_store"]["ok"] is False, f"degraded: {h}")
    # Fail closed: a denial that cannot be counted interrupts at once; an approval that cannot
    # be looked up is not honoured, the action is judged again.
    for _ in range(2):  # both replicas, round robin
        denied = review("rm -rf /", "ses-redis-down")
        check(denied["decision"] == "deny" and denied["interrupt"] is True, f"fail closed: {denied}")
        again = review("cargo run --bin tool", "ses-memory")
        check(again["decided_by"] != "session", f"no remembered approval without the store: {again}")
    compose("start", "redis")
    wait_until("/healthz ok on both replicas",
               lambda: all(health()["status"] == "ok" for _ in range(4)), 120, every=2)
    first = review("cargo run --bin tool", "ses-after-redis")
    check(first["decided_by"] == "reviewer", f"after recovery: {first}")
    wait_until("remembered again after recovery",
               lambda: all(review("cargo run --bin tool", "ses-after-redis")["decided_by"] == "session"
                           for _ in range(2)), 30)


def step_restart_and_verify():
    compose("restart", timeout=600)
    wait_healthy(["redis", "model", "guardian-1", "guardian-2"])
    wait_until("the balancer answers after the restart", lambda: health()["status"] == "ok", 120)
    check(review("git status", "ses-after-restart")["decision"] == "allow", "answers after restart")
    for replica in ("guardian-1", "guardian-2"):
        p = compose("exec", "-T", replica, "guardian", "audit", "--config", CONFIG, "verify", ok=False)
        check(p.returncode == 0, f"{replica}'s audit chain verifies: {p.stdout} {p.stderr}")
        print(f"    {replica}: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else 'verified'}")


def main():
    global COMPOSE
    ap = argparse.ArgumentParser()
    ap.add_argument("--compose-file", required=True)
    ap.add_argument("--seconds", type=int, default=10, help="each throughput measurement")
    ap.add_argument("--results", help="write the measurements here (JSON)")
    a = ap.parse_args()
    COMPOSE = a.compose_file
    results = {}
    steps = [
        ("the images", step_images),
        ("health through the balancer", step_health),
        ("a deny rule and a rule allow", step_rules),
        ("a reviewed action, its approval remembered across replicas", step_reviewed_and_remembered),
        ("the breaker counted across replicas", step_breaker),
        ("a replica killed: answered by the other; throughput 2 vs 1", lambda: step_failover(results, a.seconds)),
        ("Redis killed: fail closed, degraded; back: recovery", step_redis_down_and_back),
        ("docker compose restart: every audit chain verifies", step_restart_and_verify),
    ]
    failed = 0
    for name, step in steps:
        t0 = time.time()
        try:
            step()
            print(f"ok    {name} ({time.time() - t0:.1f} s)", flush=True)
        except (Failed, subprocess.TimeoutExpired, OSError, ValueError, KeyError) as e:
            failed += 1
            print(f"FAIL  {name}: {e}", flush=True)
            break
    if "one_replica" in results:
        two, one = results["two_replicas"], results["one_replica"]
        results["ratio_two_to_one"] = two["rps"] / one["rps"] if one["rps"] else None
        print(f"throughput through the balancer (rule-decided reviews, wrk -t2 -c16): "
              f"two replicas {two['rps']:.0f}/s (p50 {two['p50']}, p99 {two['p99']}), "
              f"one replica {one['rps']:.0f}/s (p50 {one['p50']}, p99 {one['p99']}); "
              f"two/one = {results['ratio_two_to_one']:.2f}")
    if a.results:
        with open(a.results, "w") as f:
            json.dump(results, f, indent=2)
    print("all steps passed" if not failed else "FAILED: the steps after the failed one did not run")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
