"""A fake OpenAI-compatible chat-completions reviewer that answers one fixed verdict.

guardian (`[reviewer] backend = "openai"`) POSTs `{base_url}/chat/completions` and reads
`choices[0].message.content` as the JSON verdict
`{"rationale", "risk_level": low|medium|high|critical, "user_authorization", "outcome": allow|deny}`
(OpenAI Chat Completions response object: `{"id", "object": "chat.completion", "created",
"model", "choices": [{"index", "message": {"role": "assistant", "content"}, "finish_reason"}],
"usage"}`).
"""

import json
import time

from fakeserver import FakeServer, json_response


class FakeReviewer(FakeServer):
    name = "reviewer"

    def __init__(self, outcome, log_path=None, rationale=None):
        super().__init__(log_path)
        self.verdict = {
            "rationale": rationale or f"e2e fake reviewer says {outcome}",
            "risk_level": "low" if outcome == "allow" else "high",
            "user_authorization": "high" if outcome == "allow" else "unknown",
            "outcome": outcome,
        }

    def reviews(self):
        return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def handle(self, method, path, body):
        if not path.endswith("/chat/completions"):
            return json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})
        return json_response({
            "id": "chatcmpl-e2e", "object": "chat.completion", "created": int(time.time()),
            "model": (body or {}).get("model", "m") if isinstance(body, dict) else "m",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(self.verdict)}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        })
