"""Claude Code scenarios: the real `claude -p` with guardian's README snippets.

In the deny / unreachable scenarios Claude Code's OWN settings allow `Bash` (claude_settings_allow),
so a command that does not run was blocked by guardian's hook and nothing else. In the allow
scenarios Claude Code's own rules allow nothing: in `-p` mode an unanswered permission is a
denial, so a command that runs was allowed by guardian.
"""

import json
import os
import shutil

from harness import (MARKER, REPO, E2ECase, bash, claude_home, claude_settings_allow, dead_url,
                     git_init, install, run_claude, run_claude_tui)

DENY_PUSH = ["Bash(git push *)"]
ALLOW_TOUCH = ["Bash(touch *)", "Edit(/**)"]  # a touch writes a file: it needs an Edit rule too


class ClaudeCase(E2ECase):
    def setup_claude(self, server, hook="command", command=None, own_allow=None):
        claude_home(self.sc)
        if own_allow:
            claude_settings_allow(self.sc, own_allow)
        if hook:
            install("claude-code", self.sc.ws, server, command or self.sc.tap, "--hook", hook)

    def claude(self, *extra_args, path=None):
        self.run_result = run_claude(self.sc, self.fake, extra_args=extra_args, path=path)
        self.assertIsNotNone(self.run_result.rc, f"claude timed out\n{self.explain()}")
        return self.run_result

    def result_json(self):
        j = self.run_result.json()
        self.assertIsNotNone(j, f"claude printed no JSON result\n{self.explain()}")
        return j

    def only_result(self):
        """The tool_result of the scenario's single call (which must have been attempted)."""
        texts = self.tool_result_texts()
        self.assertEqual(len(texts), 1, self.explain())
        return texts[0]

    def denied_tools(self):
        return [d.get("tool_name") for d in self.result_json().get("permission_denials") or []]


class TestClaude(ClaudeCase):
    # ---- rules and the reviewer -----------------------------------------------------------------

    def test_claude_rule_deny_never_runs(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('PWNED')} && git push --force origin main")])
        self.setup_claude(g.url, own_allow=["Bash"])
        self.claude()
        self.assertNotRan(self.ws("PWNED"))
        texts = self.tool_result_texts()
        self.assertEqual(len(texts), 1, self.explain())
        self.assertIn("PreToolUse:Bash hook error", texts[0], self.explain())
        self.assertIn("denied by policy: Bash(git push *)", texts[0], self.explain())
        self.assertIn("Bash", self.denied_tools())
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "rule")], self.explain())

    def test_claude_rule_allow_runs(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('ok')}")])
        self.setup_claude(g.url)  # Claude Code's own rules allow nothing
        self.claude()
        self.assertRan(self.ws("ok"))
        self.assertEqual(self.denied_tools(), [], self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule")], self.explain())

    def test_claude_reviewer_allow_runs(self):
        self.start_reviewer("allow")
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_anthropic([bash(f"touch {self.ws('reviewed')}")])
        self.setup_claude(g.url)
        self.claude()
        self.assertRan(self.ws("reviewed"))
        self.assertEqual(len(self.reviewer.reviews()), 1, self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "reviewer")], self.explain())

    def test_claude_reviewer_deny_never_runs(self):
        self.start_reviewer("deny")
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_anthropic([bash(f"touch {self.ws('reviewed')}")])
        self.setup_claude(g.url, own_allow=["Bash"])
        self.claude()
        self.assertNotRan(self.ws("reviewed"))
        self.assertEqual(len(self.reviewer.reviews()), 1, self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "reviewer")], self.explain())
        self.assertIn("e2e fake reviewer says deny", self.tool_result_texts()[0], self.explain())

    def test_claude_http_hook_rule_deny_and_allow(self):
        """The HTTP hook snippet (`--hook http`) against a live server."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('PWNED')} && git push origin main"),
                              bash(f"touch {self.ws('ok')}")])
        self.setup_claude(g.url, hook="http")
        self.claude()
        self.assertNotRan(self.ws("PWNED"))
        self.assertRan(self.ws("ok"))
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "rule"), ("allow", "rule")],
                         self.explain())

    def test_claude_file_tools(self):
        """Write/Read through the hook: a write to .git/hooks is protected (never allowed by a
        rule, and no reviewer here), a workspace write is rule-allowed, a .env read is protected."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH + ["Read(/**)"])
        git_init(self.sc.ws)
        with open(self.ws(".env"), "w") as f:
            f.write("TOKEN=e2e-secret-value\n")
        self.start_anthropic([
            ("Write", {"file_path": self.ws(".git", "hooks", "pre-commit"),
                       "content": "#!/bin/sh\necho pwned\n"}),
            ("Write", {"file_path": self.ws("notes.txt"), "content": "hello\n"}),
            ("Read", {"file_path": self.ws(".env")}),
        ])
        self.setup_claude(g.url, own_allow=["Write", "Edit", "Read"])
        self.claude()
        self.assertNotRan(self.ws(".git", "hooks", "pre-commit"))
        self.assertRan(self.ws("notes.txt"))
        texts = self.tool_result_texts()
        self.assertEqual(len(texts), 3, self.explain())
        self.assertNotIn("e2e-secret-value", texts[2],
                         f"the .env content reached the model\n{self.explain()}")
        self.assertEqual([d[0] for d in self.decisions()], ["deny", "allow", "deny"], self.explain())

    def test_claude_unreviewed_ask_mode(self):
        """`guardian install --unreviewed ask`: what no rule allows and no reviewer answered
        becomes Claude Code's own permission prompt ("ask"), which `-p` cannot show: denied, by
        Claude Code, without an error; a rule deny stays a deny."""
        g = self.start_guardian(deny=DENY_PUSH, allow=[])
        self.start_anthropic([bash(f"touch {self.ws('unreviewed')}"),
                              bash(f"touch {self.ws('PWNED')} && git push origin main")])
        claude_home(self.sc)
        install("claude-code", self.sc.ws, g.url, self.sc.tap, "--unreviewed", "ask")
        self.claude()
        self.assertNotRan(self.ws("unreviewed"))
        self.assertNotRan(self.ws("PWNED"))
        outs = [json.loads(c["output"])["hookSpecificOutput"]["permissionDecision"]
                for c in self.sc.hook_calls()]
        self.assertEqual(outs, ["ask", "deny"], self.explain())
        self.assertEqual(self.denied_tools(), ["Bash", "Bash"], self.explain())

    def test_claude_reviewer_sees_user_intent(self):
        """The reviewer sees what the user asked (Claude Code's transcript_path)."""
        self.start_reviewer("allow")
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_anthropic([bash(f"touch {self.ws('reviewed')}")])
        self.setup_claude(g.url)
        self.claude()
        self.assertRan(self.ws("reviewed"))
        prompt = json.dumps(self.reviewer.reviews()[0]["body"]["messages"])
        self.assertIn(MARKER, prompt, self.explain())
        self.assertIn(MARKER, self.audit()[0].get("intent") or "", self.explain())

    def test_claude_prompt_compiled_before_the_first_tool_call(self):
        """`guardian install` adds a UserPromptSubmit group: the real Claude Code sends the
        prompt before its first model call, guardian compiles the prompt's mandate into the
        session store and says nothing back (the prompt goes on), and the first review finds that
        mandate already compiled (`cached: true`) under the same request key."""
        self.start_reviewer("allow")
        g = self.start_guardian(deny=DENY_PUSH)
        # An act the mandate can name (inspect), so the review consults it.
        self.start_anthropic([bash(f"kubectl get pods -n e2e; touch {self.ws('reviewed')}")])
        self.setup_claude(g.url)
        self.claude()
        self.assertRan(self.ws("reviewed"))
        calls = self.sc.hook_calls(prompts=True)
        events = [c["input"].get("hook_event_name") if isinstance(c["input"], dict) else None
                  for c in calls]
        self.assertEqual(events, ["UserPromptSubmit", "PreToolUse"], self.explain())
        prompt_call = calls[0]
        self.assertEqual(prompt_call["rc"], 0, self.explain())
        self.assertIn(MARKER, prompt_call["input"].get("prompt") or "", self.explain())
        # Nothing to say to Claude Code: no output, or an empty object.
        self.assertIn(prompt_call["output"].strip(), ("", "{}"), self.explain())
        records = self.audit()
        self.assertEqual(len(records), 1, self.explain())
        mandate = records[0].get("mandate") or {}
        self.assertIs(mandate.get("cached"), True, json.dumps(records[0])[:2000])
        self.assertEqual(records[0].get("decided_by"), "reviewer", self.explain())

    # ---- the breaker ----------------------------------------------------------------------------

    def test_claude_three_denials_stop_the_agent(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic(
            [bash(f"touch {self.ws(f'PWNED{i}')} && git push origin main") for i in (1, 2, 3)]
            + [bash(f"touch {self.ws('after-stop')}")])
        self.setup_claude(g.url, own_allow=["Bash"])
        self.claude()
        for i in (1, 2, 3):
            self.assertNotRan(self.ws(f"PWNED{i}"))
        self.assertNotRan(self.ws("after-stop"), "the agent went on after guardian said stop")
        outs = [c["output"] for c in self.sc.hook_calls()]
        self.assertEqual(len(outs), 3, self.explain())
        third = json.loads(outs[2])
        self.assertIs(third.get("continue"), False, self.explain())
        self.assertTrue(third.get("stopReason"), self.explain())
        self.assertEqual(third["hookSpecificOutput"]["permissionDecision"], "deny", self.explain())
        self.assertEqual(self.result_json().get("terminal_reason"), "hook_stopped", self.explain())
        # Claude Code asked the model nothing after the third call
        self.assertEqual(len(self.fake.main_requests()), 3, self.explain())

    # ---- tools guardian must not block ------------------------------------------------------------
    # `claude -p` 2.1.332 disables AskUserQuestion and EnterPlanMode ("disabled for this session",
    # even with --tools or stream-json input) and no longer has TodoWrite: those run in the
    # interactive TUI (tmux) scenario.

    def agent_call(self):
        return ("Agent", {"description": "e2e subagent", "prompt": "E2E-SUBAGENT: say ok",
                          "subagent_type": "general-purpose"})

    def check_not_blocked(self):
        hooked = [(c["input"].get("tool_name"), c["output"].strip()) for c in self.sc.hook_calls()]
        noop = [(t, out) for t, out in hooked if t != "Bash"]
        for tool, out in noop:
            self.assertIn(out, ("", "{}"), f"guardian decided on {tool}: {out}\n{self.explain()}")
        blocked = [t for t in self.tool_result_texts() if "hook error" in t or "denied" in t.lower()]
        self.assertEqual(blocked, [], self.explain())
        sub = [r for r in self.fake.requests if "E2E-SUBAGENT" in json.dumps(r["body"])
               and not self.fake.is_main(r["body"])]
        self.assertTrue(sub, f"the Agent tool never started a subagent\n{self.explain()}")
        return [t for t, _ in noop]

    def test_claude_subagent_not_blocked(self):
        """`claude -p` with the README snippet: the Agent (subagent) tool is never sent to
        guardian, and nothing blocks it."""
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_anthropic([self.agent_call()])
        self.setup_claude(g.url)
        self.claude()
        self.assertEqual(self.check_not_blocked(), [], self.explain())
        self.assertEqual(self.audit(), [], self.explain())
        self.assertNotIn("Agent", self.denied_tools())
        self.assertNotIn("Task", self.denied_tools())

    def catch_all_hook(self, server, kind="command"):
        """A hook WITHOUT a matcher (every tool goes to guardian), as a user might write it."""
        claude_home(self.sc)
        os.makedirs(self.ws(".claude"))
        hook = ({"type": "command", "command": f"{self.sc.tap} hook claude-code --server {server}"}
                if kind == "command" else {"type": "http", "url": f"{server}/v1/hooks/claude-code"})
        hook.update({"timeout": 120, "onFailure": "block"})
        with open(self.ws(".claude", "settings.json"), "w") as f:
            json.dump({"hooks": {"PreToolUse": [{"hooks": [hook]}]}}, f)

    def test_claude_subagent_not_blocked_http_catch_all(self):
        """An HTTP hook without a matcher: guardian's no-decision answer for Agent over HTTP must
        not count as a failed hook (which `onFailure: "block"` would turn into a block)."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([self.agent_call(), bash(f"touch {self.ws('after')}")])
        self.catch_all_hook(g.url, kind="http")
        self.claude()
        self.assertRan(self.ws("after"))
        blocked = [t for t in self.tool_result_texts() if "hook error" in t or "denied" in t.lower()]
        self.assertEqual(blocked, [], self.explain())
        self.assertNotIn("Agent", self.denied_tools())
        self.assertNotIn("Task", self.denied_tools())

    def test_claude_tui_noop_tools_not_blocked_catch_all_hook(self):
        """Interactive Claude Code (tmux) with a hook that has NO matcher, so guardian sees every
        tool: Agent, AskUserQuestion and EnterPlanMode get no decision and work; a Bash call in
        the same session shows the hook is live (rule-allowed, it runs)."""
        if not shutil.which("tmux"):
            self.skipTest("tmux is not installed")
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        script = [
            self.agent_call(),
            bash(f"touch {self.ws('after')}"),
            ("AskUserQuestion", {"questions": [{"question": "Which one?", "header": "Pick",
                                                "multiSelect": False,
                                                "options": [{"label": "A", "description": "a"},
                                                            {"label": "B", "description": "b"}]}]}),
            ("EnterPlanMode", {}),
        ]
        self.start_anthropic(script)
        self.catch_all_hook(g.url)
        self.run_result = run_claude_tui(self.sc, self.fake, len(script))
        noop = self.check_not_blocked()
        self.assertEqual(sorted(noop), ["Agent", "AskUserQuestion", "EnterPlanMode"], self.explain())
        self.assertRan(self.ws("after"))
        texts = self.tool_result_texts()
        self.assertEqual(len(texts), 4, self.explain())
        self.assertIn("answered", texts[2], self.explain())
        self.assertIn("plan mode", texts[3], self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule")], self.explain())

    # ---- guardian unreachable -------------------------------------------------------------------

    def test_claude_http_hook_unreachable_blocks(self):
        self.start_anthropic([bash(f"touch {self.ws('PWNED')}")])
        self.setup_claude(dead_url(), hook="http", own_allow=["Bash"])
        self.claude()
        self.assertNotRan(self.ws("PWNED"), "HTTP hook with onFailure: block let the call through")
        self.assertIn('blocking because onFailure is "block"', self.only_result(), self.explain())

    def test_claude_http_hook_without_onfailure_fails_open(self):
        """Documents Claude Code's own behaviour (why the snippets carry onFailure): an HTTP hook
        that cannot connect is a non-blocking error and the call proceeds."""
        self.start_anthropic([bash(f"touch {self.ws('ran')}")])
        self.setup_claude(dead_url(), hook="http", own_allow=["Bash"])
        path = self.ws(".claude", "settings.json")
        with open(path) as f:
            s = json.load(f)
        for group in s["hooks"]["PreToolUse"]:
            for h in group["hooks"]:
                h.pop("onFailure", None)
        with open(path, "w") as f:
            json.dump(s, f)
        self.claude()
        self.assertRan(self.ws("ran"),
                       "Claude Code now blocks a failed HTTP hook even without onFailure")

    def test_claude_command_hook_unreachable_blocks(self):
        self.start_anthropic([bash(f"touch {self.ws('PWNED')}")])
        self.setup_claude(dead_url(), hook="command", own_allow=["Bash"])
        self.claude()
        self.assertNotRan(self.ws("PWNED"))
        calls = self.sc.hook_calls()
        self.assertEqual([c["rc"] for c in calls], [2], self.explain())
        self.assertIn("guardian server could not decide", self.only_result(), self.explain())

    def test_claude_command_hook_guardian_not_on_path_blocks(self):
        """The snippet names `guardian`; PATH lacks it: the hook cannot start (127), and
        `onFailure: "block"` blocks."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('PWNED')}")])
        self.setup_claude(g.url, hook="command", command="guardian", own_allow=["Bash"])
        with open(self.ws(".claude", "settings.json")) as f:
            self.assertIn('"guardian hook claude-code', f.read())
        path = "/usr/bin:/bin"
        self.assertIsNone(shutil.which("guardian", path=path), "guardian is on the restricted PATH")
        self.claude(path=path)
        self.assertNotRan(self.ws("PWNED"), "a hook that cannot start let the call through")
        self.assertEqual(self.audit(), [], self.explain())
        self.assertIn("guardian: not found", self.only_result(), self.explain())

    # ---- MCP permission-prompt tool -----------------------------------------------------------

    def setup_mcp(self, server):
        claude_home(self.sc)
        with open(os.path.join(REPO, "integrations", "claude-code", "mcp.json")) as f:
            cfg = json.load(f)
        srv = cfg["mcpServers"]["guardian"]
        srv["command"] = self.sc.tap
        srv["args"] = [server if a == "http://127.0.0.1:8700" else a for a in srv["args"]]
        with open(self.ws(".mcp.json"), "w") as f:
            json.dump(cfg, f)
        return ["--mcp-config", self.ws(".mcp.json"), "--permission-prompt-tool",
                "mcp__guardian__approve"]

    def test_claude_mcp_permission_tool_allow_runs(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('ok')}"),
                              bash(f"touch {self.ws('PWNED')} && git push origin main")])
        args = self.setup_mcp(g.url)
        self.claude(*args)
        self.assertRan(self.ws("ok"))
        self.assertNotRan(self.ws("PWNED"))
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule"), ("deny", "rule")],
                         self.explain())

    def test_claude_mcp_permission_tool_unreachable_blocks(self):
        self.start_anthropic([bash(f"touch {self.ws('PWNED')}")])
        args = self.setup_mcp(dead_url())
        self.claude(*args)
        self.assertNotRan(self.ws("PWNED"))
        # the tool was found and answered (a missing tool would also run nothing)
        self.assertIn("denied by guardian: no decision could be obtained", self.only_result(),
                      self.explain())
