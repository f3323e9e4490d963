"""A scripted fake of Anthropic's Messages API, enough to drive the real Claude Code binary.

Claude Code (`ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`, any `ANTHROPIC_API_KEY`) sends
`POST /v1/messages?beta=true` with `"stream": true`. The main conversation is recognised by the
scenario's MARKER in its first user message; its turn number is the number of `tool_result`
blocks in `messages` (one per tool call already answered). Turn n answers the scenario's n-th
scripted tool call; once the script is exhausted it answers a text block with
`stop_reason: "end_turn"` and Claude Code's `-p` run ends. Every other request (a subagent's
conversation, a haiku "title" or quota probe, `count_tokens`, ...) gets a short text answer.

Streamed shapes (Anthropic's Messages streaming documentation, "Streaming Messages", and the
RawMessageStreamEvent types in the TypeScript SDK, `@anthropic-ai/sdk` `resources/messages`):

    event: message_start
    data: {"type": "message_start", "message": {"id", "type": "message", "role": "assistant",
           "model", "content": [], "stop_reason": null, "stop_sequence": null, "usage": {...}}}
    event: content_block_start
    data: {"type": "content_block_start", "index": 0,
           "content_block": {"type": "tool_use", "id": "toolu_…", "name": "Bash", "input": {}}}
    event: content_block_delta
    data: {"type": "content_block_delta", "index": 0,
           "delta": {"type": "input_json_delta", "partial_json": "<the input as JSON text>"}}
    event: content_block_stop
    data: {"type": "content_block_stop", "index": 0}
    event: message_delta
    data: {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": null},
           "usage": {"output_tokens": 1}}
    event: message_stop
    data: {"type": "message_stop"}

A text answer is the same with `content_block: {"type": "text", "text": ""}`, a
`{"type": "text_delta", "text": …}` delta and `stop_reason: "end_turn"`.
"""

import json
import itertools

from fakeserver import FakeServer, json_response, sse

_ids = itertools.count(1)


def _text_of(content):
    if isinstance(content, str):
        return content
    out = []
    for block in content or []:
        if isinstance(block, dict):
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                out.append(_text_of(block.get("content")))
    return "\n".join(out)


class FakeAnthropic(FakeServer):
    name = "anthropic"

    def __init__(self, script, marker, log_path=None):
        """script: a list of (tool_name, tool_input) the main conversation calls, in order."""
        super().__init__(log_path)
        self.script = list(script)
        self.marker = marker

    # ---- request classification -------------------------------------------------------------

    def is_main(self, body):
        msgs = body.get("messages") or []
        if not msgs or not body.get("tools"):
            return False
        first = msgs[0]
        return first.get("role") == "user" and self.marker in _text_of(first.get("content"))

    @staticmethod
    def tool_results(body):
        """The tool_result blocks of a request, in order: what Claude Code made of each call."""
        out = []
        for m in body.get("messages") or []:
            if m.get("role") == "user" and isinstance(m.get("content"), list):
                for b in m["content"]:
                    if isinstance(b, dict) and b.get("type") == "tool_result":
                        out.append(b)
        return out

    def main_requests(self):
        return [r["body"] for r in self.requests
                if r["path"].startswith("/v1/messages") and "count_tokens" not in r["path"]
                and isinstance(r["body"], dict) and self.is_main(r["body"])]

    def final_tool_results(self):
        """tool_result blocks of the last main-conversation request (all the answered calls)."""
        reqs = self.main_requests()
        return self.tool_results(reqs[-1]) if reqs else []

    def tool_names(self):
        """The tool names Claude Code offered the main conversation."""
        reqs = self.main_requests()
        return [t.get("name") for t in (reqs[0].get("tools") or [])] if reqs else []

    # ---- answers ------------------------------------------------------------------------------

    def handle(self, method, path, body):
        if method != "POST" or not path.startswith("/v1/messages"):
            return json_response({})
        if "count_tokens" in path:
            return json_response({"input_tokens": 10})
        body = body if isinstance(body, dict) else {}
        model = body.get("model", "claude-fake")
        if self.is_main(body):
            turn = len(self.tool_results(body))
            if turn < len(self.script):
                name, tool_input = self.script[turn]
                return self._answer(body, model, tool_use=(name, tool_input))
            return self._answer(body, model, text="Done: e2e script finished.")
        return self._answer(body, model, text="ok")

    def _answer(self, body, model, text=None, tool_use=None):
        n = next(_ids)
        if tool_use:
            name, tool_input = tool_use
            block = {"type": "tool_use", "id": f"toolu_e2e_{n:04d}", "name": name, "input": tool_input}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": text}
            stop = "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0}
        if not body.get("stream"):
            return json_response({
                "id": f"msg_e2e_{n:04d}", "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": None, "usage": usage})
        start_block = dict(block, input={}) if tool_use else {"type": "text", "text": ""}
        delta = ({"type": "input_json_delta", "partial_json": json.dumps(block["input"])} if tool_use
                 else {"type": "text_delta", "text": text})
        events = [
            {"type": "message_start", "message": {
                "id": f"msg_e2e_{n:04d}", "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}},
            {"type": "content_block_start", "index": 0, "content_block": start_block},
            {"type": "content_block_delta", "index": 0, "delta": delta},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": 1}},
            {"type": "message_stop"},
        ]
        return 200, {"content-type": "text/event-stream", "cache-control": "no-cache"}, sse(events)
