"""A scripted fake of OpenAI's Chat Completions API (streaming), enough to drive the real OpenCode
binary through its `@ai-sdk/openai-compatible` provider.

OpenCode (`"provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "options": {"baseURL":
"http://127.0.0.1:PORT/v1"}, "models": {"m": {}}}}`, `"model": "fake/m"`) sends
`POST /v1/chat/completions` with `"stream": true` and the conversation in `messages`.
The main conversation is recognised by the scenario's MARKER in a user message of a request that
offers tools (OpenCode's title request quotes the user's message too, without tools); its turn number is
the number of `role: "tool"` messages (one per tool call already answered). Turn n answers the
scenario's n-th scripted tool call; once the script is exhausted it answers a text and the session
goes idle. Anything else (OpenCode's title generation, summaries) gets a short text.

Streamed shape (OpenAI chat.completion.chunk, one `data:` line per chunk, then `data: [DONE]`):

    data: {"id", "object": "chat.completion.chunk", "created", "model",
           "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0,
           "id": "call_…", "type": "function", "function": {"name": "bash",
           "arguments": "{\"command\": \"…\"}"}}]}, "finish_reason": null}]}
    data: {… "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}],
           "usage": {"prompt_tokens", "completion_tokens", "total_tokens"}}
    data: [DONE]
"""

import itertools
import json
import time

from fakeserver import FakeServer, json_response

_ids = itertools.count(1)


def _texts(msg):
    content = msg.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


class FakeChat(FakeServer):
    name = "chat"

    def __init__(self, script, marker, log_path=None):
        """script: a list of (tool_name, arguments dict) the main conversation calls, in order."""
        super().__init__(log_path)
        self.script = list(script)
        self.marker = marker

    def is_main(self, body):
        if not body.get("tools"):
            return False
        for m in body.get("messages") or []:
            if isinstance(m, dict) and m.get("role") == "user" and self.marker in _texts(m):
                return True
        return False

    @staticmethod
    def tool_messages(body):
        return [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") == "tool"]

    def main_requests(self):
        return [r["body"] for r in self.requests
                if r["path"].endswith("/chat/completions") and isinstance(r["body"], dict)
                and self.is_main(r["body"])]

    def final_tool_results(self):
        """What OpenCode told the model about each scripted call (the `role: "tool"` messages of
        the last main request), as text."""
        reqs = self.main_requests()
        return [_texts(m) for m in self.tool_messages(reqs[-1])] if reqs else []

    def tool_names(self):
        reqs = self.main_requests()
        return [(t.get("function") or {}).get("name") for t in (reqs[0].get("tools") or [])] if reqs else []

    def handle(self, method, path, body):
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})
        if method != "POST" or not path.endswith("/chat/completions"):
            return json_response({})
        body = body if isinstance(body, dict) else {}
        n = next(_ids)
        model = body.get("model", "m")
        if self.is_main(body):
            turn = len(self.tool_messages(body))
            if turn < len(self.script):
                name, args = self.script[turn]
                delta = {"role": "assistant", "content": None, "tool_calls": [{
                    "index": 0, "id": f"call_e2e_{n:04d}", "type": "function",
                    "function": {"name": name, "arguments": json.dumps(args)}}]}
                finish = "tool_calls"
            else:
                delta, finish = {"role": "assistant", "content": "Done: e2e script finished."}, "stop"
        else:
            delta, finish = {"role": "assistant", "content": "e2e title"}, "stop"
        if not body.get("stream"):
            msg = {"role": "assistant", "content": delta.get("content")}
            if "tool_calls" in delta:
                msg["tool_calls"] = [{k: v for k, v in tc.items() if k != "index"} for tc in delta["tool_calls"]]
            return json_response({"id": f"chatcmpl-e2e-{n}", "object": "chat.completion",
                                  "created": int(time.time()), "model": model,
                                  "choices": [{"index": 0, "message": msg, "finish_reason": finish}],
                                  "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        base = {"id": f"chatcmpl-e2e-{n}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": model}
        chunks = [
            dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}]),
            dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}],
                 usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}),
        ]

        def stream():
            for c in chunks:
                yield f"data: {json.dumps(c)}\n\n"
            yield "data: [DONE]\n\n"
        return 200, {"content-type": "text/event-stream", "cache-control": "no-cache"}, stream()
