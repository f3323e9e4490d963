#!/usr/bin/env python3
"""Minimal guardian client (standard library only).

    from guardian_client import review
    resp = review({"kind": "shell", "command": "git push origin main", "cwd": "/work/repo"},
                  session={"id": "s-1", "agent": "my-bot"}, intent="Release v1.2")
    if resp["decision"] != "allow":
        print(resp["message"])

As a command: python3 guardian_client.py [--server URL] -- <shell command...>
Exit status: 0 allow, 1 deny, 2 error (any error is a deny for the caller: fail closed).
"""
import json
import os
import sys
import urllib.error
import urllib.request

DEFAULT_SERVER = os.environ.get("GUARDIAN_URL", "http://127.0.0.1:8700")


def review(action, session=None, intent=None, transcript=None, server=DEFAULT_SERVER, timeout=120):
    """POST /v1/review; returns the response dict. Raises on transport or HTTP errors."""
    body = {"action": action}
    if session is not None:
        body["session"] = session
    if intent is not None:
        body["intent"] = intent
    if transcript:
        body["transcript"] = transcript
    req = urllib.request.Request(
        server.rstrip("/") + "/v1/review",
        data=json.dumps(body).encode(),
        headers={"content-type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.load(resp)


def main(argv):
    server = DEFAULT_SERVER
    if len(argv) >= 2 and argv[0] == "--server":
        server, argv = argv[1], argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        print("usage: guardian_client.py [--server URL] -- <command...>", file=sys.stderr)
        return 2
    try:
        resp = review({"kind": "shell", "command": " ".join(argv), "cwd": os.getcwd()}, server=server)
    except (urllib.error.URLError, OSError, ValueError) as e:
        print(f"guardian unreachable or failed, treat as deny: {e}", file=sys.stderr)
        return 2
    print(json.dumps(resp, separators=(",", ":")))
    return 0 if resp.get("decision") == "allow" else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
