"""A tiny threaded HTTP server base for the scripted fakes (standard library only).

Every fake logs each request it receives (method, path, parsed JSON body) in `requests`,
and, when `log_path` is given, appends it as a JSON line there, for debugging a failed scenario.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # an agent dropping its connection mid-request is not a test failure


class FakeServer:
    """Subclasses implement `handle(method, path, body) -> (status, headers, bytes | iterable)`."""

    name = "fake"

    def __init__(self, log_path=None):
        self.requests = []
        self.log_path = log_path
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # keep the test output quiet
                pass

            def _serve(self, method):
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                fake._record(method, self.path, body)
                try:
                    status, headers, payload = fake.handle(method, self.path, body)
                except Exception as exc:  # a bug in a fake must show, not hang the agent
                    status, headers, payload = 500, {"content-type": "text/plain"}, repr(exc).encode()
                if isinstance(payload, (bytes, str)):
                    data = payload.encode() if isinstance(payload, str) else payload
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                else:  # a stream of chunks (SSE): close the connection at its end
                    self.send_response(status)
                    for k, v in headers.items():
                        self.send_header(k, v)
                    self.send_header("connection", "close")
                    self.end_headers()
                    self.close_connection = True
                    for chunk in payload:
                        self.wfile.write(chunk.encode() if isinstance(chunk, str) else chunk)
                        self.wfile.flush()

            def do_POST(self):
                self._serve("POST")

            def do_GET(self):
                self._serve("GET")

            def do_HEAD(self):
                self._serve("HEAD")

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def _record(self, method, path, body):
        entry = {"method": method, "path": path, "body": body}
        with self.lock:
            self.requests.append(entry)
            if self.log_path:
                with open(self.log_path, "a") as f:
                    f.write(json.dumps(entry) + "\n")

    def handle(self, method, path, body):
        raise NotImplementedError

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def sse(events):
    """Server-sent events: `event: <type>` + `data: <json>` per event, a blank line after each."""
    for ev in events:
        yield f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n"


def json_response(obj, status=200):
    return status, {"content-type": "application/json"}, json.dumps(obj).encode()
