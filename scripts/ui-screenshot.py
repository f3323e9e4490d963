#!/usr/bin/env python3
"""The review page's screenshot for docs/evaluation.md, from a real audit log.

    scripts/ui-screenshot.py AUDIT.jsonl OUT.png [KEYS]

Serves AUDIT (copied to a temporary directory, so its labels file is fresh) with
`guardian label`, signs in through Debian's Chromium driven over WebDriver (chromedriver,
plain HTTP: no client library needed), types KEYS on the page (default: a few labels, j/k/y/n),
reloads it with the reviewer's decisions only and saves a screenshot.
"""
import base64, json, os, shutil, socket, subprocess, sys, tempfile, time, urllib.request

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

def call(base, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read() or b"{}").get("value")

def wait_port(port):
    for _ in range(100):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    sys.exit(f"nothing listens on {port}")

def main():
    audit, out = sys.argv[1], sys.argv[2]
    keys = sys.argv[3] if len(sys.argv) > 3 else "yjyjnjyjjnjyjyjjnjy"
    guardian = os.environ.get("GUARDIAN", "target/debug/guardian")
    tmp = tempfile.mkdtemp()
    shutil.copy(audit, os.path.join(tmp, "audit.jsonl"))
    ui, wd = free_port(), free_port()
    env = dict(os.environ, GUARDIAN_UI_TOKEN="screenshot")
    procs = [
        subprocess.Popen([guardian, "label", "--audit", os.path.join(tmp, "audit.jsonl"),
                          "--labeller", "ann", "--listen", f"127.0.0.1:{ui}"], env=env,
                         stderr=subprocess.DEVNULL),
        subprocess.Popen(["chromedriver", f"--port={wd}"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL),
    ]
    try:
        wait_port(ui); wait_port(wd)
        base = f"http://127.0.0.1:{wd}"
        args = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--window-size=1280,1100",
                f"--user-data-dir={tmp}/profile"]
        caps = {"capabilities": {"alwaysMatch": {"goog:chromeOptions": {
            "binary": "/usr/bin/chromium", "args": args}}}}
        session = call(base, "POST", "/session", caps)["sessionId"]
        s = f"/session/{session}"
        page = f"http://127.0.0.1:{ui}"
        call(base, "POST", s + "/url", {"url": page + "/ui/login"})
        el = call(base, "POST", s + "/element", {"using": "css selector", "value": "#token"})
        eid = next(iter(el.values()))
        call(base, "POST", f"{s}/element/{eid}/value", {"text": "screenshot\n"})
        time.sleep(1)
        call(base, "POST", s + "/url", {"url": page + "/ui?decided_by=reviewer"})
        body = call(base, "POST", s + "/element", {"using": "css selector", "value": "body"})
        bid = next(iter(body.values()))
        for k in keys:
            call(base, "POST", f"{s}/element/{bid}/value", {"text": k})
            time.sleep(0.15)
        call(base, "POST", s + "/url", {"url": page + "/ui?decided_by=reviewer"})
        time.sleep(0.5)
        png = base64.b64decode(call(base, "GET", s + "/screenshot"))
        with open(out, "wb") as f:
            f.write(png)
        call(base, "DELETE", s)
        print(f"wrote {out}")
    finally:
        for p in procs:
            p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
