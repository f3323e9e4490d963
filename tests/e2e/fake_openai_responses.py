"""A scripted fake of OpenAI's Responses API, enough to drive the real Codex binary.

Codex (`model_provider = "fake"` with `base_url = "http://127.0.0.1:PORT/v1"`,
`wire_api = "responses"`) sends `POST /v1/responses` (streaming) with the conversation in `input`.
The main conversation is recognised by the scenario's MARKER in a user message; its turn number
is the number of `function_call_output` (or `custom_tool_call_output`) items in `input` (one
per tool call already answered).
Turn n answers the scenario's n-th scripted tool call; once the script is exhausted it answers an
assistant message and `codex exec` ends. Anything else gets a short assistant message.

Streamed shapes, as openai/codex's own test support builds them
(`codex-rs/core/tests/it/common/responses.rs`: `sse`, `ev_response_created`, `ev_function_call`,
`ev_assistant_message`, `ev_completed`):

    event: response.created
    data: {"type": "response.created", "response": {"id": "resp_…"}}
    event: response.output_item.done
    data: {"type": "response.output_item.done", "item": {"type": "function_call",
           "call_id": "call_…", "name": "exec_command", "arguments": "{\"cmd\": \"…\"}"}}
    event: response.completed
    data: {"type": "response.completed", "response": {"id": "resp_…", "usage": {
           "input_tokens": 0, "input_tokens_details": null, "output_tokens": 0,
           "output_tokens_details": null, "total_tokens": 0}}}

A freeform tool call (`apply_patch` offered as `{"type": "custom", "format": {"type":
"grammar", …}}`) is `{"type": "custom_tool_call", "call_id", "name": "apply_patch",
"input": "*** Begin Patch\n…"}` (`ev_apply_patch_custom_tool_call`); Codex answers it with a
`custom_tool_call_output` item.

An assistant message is `{"type": "message", "role": "assistant", "id": "msg_…",
"content": [{"type": "output_text", "text": "…"}]}` in a `response.output_item.done`.
`arguments` is a JSON *string*. Codex's shell tool is `exec_command` with `{"cmd": "…"}` and,
for escalation, `"sandbox_permissions": "require_escalated" | "with_additional_permissions"`,
`"justification"` and `"additional_permissions"`.
"""

import itertools
import json

from fakeserver import FakeServer, json_response, sse

_ids = itertools.count(1)


def _texts(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(c.get("text", "") for c in content or [] if isinstance(c, dict))


class FakeResponses(FakeServer):
    name = "responses"

    def __init__(self, script, marker, log_path=None):
        """script: a list of (tool_name, arguments dict) the main conversation calls, in order."""
        super().__init__(log_path)
        self.script = list(script)
        self.marker = marker

    def is_main(self, body):
        for item in body.get("input") or []:
            if isinstance(item, dict) and item.get("role") == "user" and self.marker in _texts(item):
                return True
        return False

    @staticmethod
    def outputs(body):
        """The function_call_output / custom_tool_call_output items of a request: what Codex
        made of each call."""
        return [i for i in body.get("input") or []
                if isinstance(i, dict) and i.get("type") in ("function_call_output",
                                                             "custom_tool_call_output")]

    def main_requests(self):
        return [r["body"] for r in self.requests
                if r["path"].endswith("/responses") and isinstance(r["body"], dict)
                and self.is_main(r["body"])]

    def final_outputs(self):
        reqs = self.main_requests()
        return self.outputs(reqs[-1]) if reqs else []

    def tool_names(self):
        reqs = self.main_requests()
        return [t.get("name") for t in (reqs[0].get("tools") or [])] if reqs else []

    def handle(self, method, path, body):
        if method == "GET" and path.rstrip("/").endswith("/models"):
            return json_response({"object": "list", "data": [], "models": []})
        if method != "POST" or not path.endswith("/responses"):
            return json_response({})
        body = body if isinstance(body, dict) else {}
        n = next(_ids)
        if self.is_main(body):
            turn = len(self.outputs(body))
            if turn < len(self.script):
                name, args = self.script[turn]
                if isinstance(args, str):  # a freeform tool (apply_patch): the raw text
                    item = {"type": "custom_tool_call", "call_id": f"call_e2e_{n:04d}",
                            "name": name, "input": args}
                else:
                    item = {"type": "function_call", "call_id": f"call_e2e_{n:04d}", "name": name,
                            "arguments": json.dumps(args)}
            else:
                item = self._message(n, "Done: e2e script finished.")
        else:
            item = self._message(n, "ok")
        events = [
            {"type": "response.created", "response": {"id": f"resp_e2e_{n:04d}"}},
            {"type": "response.output_item.done", "item": item},
            {"type": "response.completed", "response": {"id": f"resp_e2e_{n:04d}", "usage": {
                "input_tokens": 0, "input_tokens_details": None, "output_tokens": 0,
                "output_tokens_details": None, "total_tokens": 0}}},
        ]
        return 200, {"content-type": "text/event-stream", "cache-control": "no-cache"}, sse(events)

    @staticmethod
    def _message(n, text):
        return {"type": "message", "role": "assistant", "id": f"msg_e2e_{n:04d}",
                "content": [{"type": "output_text", "text": text}]}
