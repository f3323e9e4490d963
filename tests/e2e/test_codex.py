"""Codex scenarios: the real `codex exec` with guardian's README snippet.

Codex runs with its workspace-write sandbox (without /tmp, so only the workspace is writable
inside it), approvals on request (`--approve-for-me`: `codex exec` otherwise never asks, so no
PermissionRequest would ever fire) and `--dangerously-bypass-hook-trust` (CI's way to run hooks
nobody trusted in the TUI), except in the trust scenarios. Its project config is trusted in
CODEX_HOME (an untrusted project's .codex/config.toml is ignored, hooks included).
"""

import hashlib
import json
import os
import select
import subprocess
import time

from harness import (CODEX_ARGS, CONFIG, MARKER, E2ECase, apply_patch, codex_home, dead_url,
                     exec_command, install, run_codex, toml_str)

DENY_PUSH = ["Bash(git push *)"]
ALLOW_TOUCH = ["Bash(touch *)", "Edit(/**)"]


class CodexCase(E2ECase):
    def setup_codex(self, server, command=None, scope="project", trust_project=True):
        codex_home(self.sc, self.fake, trust_project=trust_project)
        extra = ["--scope", scope] if scope != "project" else []
        env = dict(os.environ, CODEX_HOME=self.sc.codex_home, HOME=self.sc.home)
        install("codex", self.sc.ws, server, command or self.sc.tap, *extra, env=env)

    def codex(self, args=CODEX_ARGS, extra_args=(), path=None):
        self.run_result = run_codex(self.sc, args=args, extra_args=extra_args, path=path)
        self.assertIsNotNone(self.run_result.rc, f"codex timed out\n{self.explain()}")
        self.assertTrue(self.fake.main_requests(), f"codex never reached the fake model\n{self.explain()}")
        return self.run_result

    def hook_events(self):
        return [(c["input"].get("hook_event_name"), c["rc"]) for c in self.sc.hook_calls()
                if isinstance(c["input"], dict)]


class TestCodex(CodexCase):
    # ---- rules and the reviewer -----------------------------------------------------------------

    def test_codex_rule_deny_never_runs(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('PWNED')} && git push --force origin main")])
        self.setup_codex(g.url)
        self.codex()
        self.assertNotRan(self.ws("PWNED"))
        out = self.tool_result_texts()
        self.assertEqual(len(out), 1, self.explain())
        self.assertIn("Command blocked by PreToolUse hook: denied by policy: Bash(git push *)", out[0],
                      self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "rule")], self.explain())

    def test_codex_rule_allow_runs(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('ok')}")])
        self.setup_codex(g.url)
        self.codex()
        self.assertRan(self.ws("ok"))
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule")], self.explain())
        # Codex's contract: "no objection" is an empty answer, never permissionDecision "allow"
        self.assertEqual([c["output"].strip() for c in self.sc.hook_calls()], [""], self.explain())

    def test_codex_user_scope_install_rule_deny(self):
        """`guardian install codex --scope user` merges into $CODEX_HOME/config.toml (the model
        provider set up there survives) and its hooks apply."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('PWNED')} && git push origin main"),
                              exec_command(f"touch {self.ws('ok')}")])
        self.setup_codex(g.url, scope="user", trust_project=False)
        with open(os.path.join(self.sc.codex_home, "config.toml")) as f:
            cfg = f.read()
        self.assertIn("[model_providers.fake]", cfg)
        self.assertIn("hook codex --server", cfg)
        self.codex()
        self.assertNotRan(self.ws("PWNED"))
        self.assertRan(self.ws("ok"))

    def test_codex_apply_patch_rules(self):
        """apply_patch: each file of a patch is a write; a denied path blocks the patch."""
        g = self.start_guardian(deny=DENY_PUSH + ["Edit(./secrets/**)"], allow=ALLOW_TOUCH)
        self.start_responses([
            apply_patch("*** Begin Patch\n*** Add File: secrets/key.txt\n+stolen\n*** End Patch\n"),
            apply_patch("*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch\n"),
        ])
        self.setup_codex(g.url)
        self.codex()
        self.assertNotRan(self.ws("secrets", "key.txt"))
        self.assertRan(self.ws("notes.txt"))
        tools = [c["input"].get("tool_name") for c in self.sc.hook_calls()]
        self.assertEqual(tools, ["apply_patch", "apply_patch"], self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "rule"), ("allow", "rule")],
                         self.explain())

    def test_codex_reviewer_allow_runs(self):
        self.start_reviewer("allow")
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_responses([exec_command(f"touch {self.ws('reviewed')}")])
        self.setup_codex(g.url)
        self.codex()
        self.assertRan(self.ws("reviewed"))
        self.assertEqual(len(self.reviewer.reviews()), 1, self.explain())
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "reviewer")], self.explain())

    def test_codex_reviewer_deny_never_runs(self):
        self.start_reviewer("deny")
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_responses([exec_command(f"touch {self.ws('reviewed')}")])
        self.setup_codex(g.url)
        self.codex()
        self.assertNotRan(self.ws("reviewed"))
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "reviewer")], self.explain())
        self.assertIn("e2e fake reviewer says deny", self.tool_result_texts()[0], self.explain())

    def test_codex_reviewer_sees_user_intent(self):
        """The reviewer must see what the user asked. Codex passes `transcript_path` (its rollout
        JSONL, already holding the user's message when the hook runs), as Claude Code does."""
        self.start_reviewer("allow")
        g = self.start_guardian(deny=DENY_PUSH)
        self.start_responses([exec_command(f"touch {self.ws('reviewed')}")])
        self.setup_codex(g.url)
        self.codex()
        self.assertRan(self.ws("reviewed"))
        hook_input = self.sc.hook_calls()[0]["input"]
        with open(hook_input["transcript_path"]) as f:
            self.assertIn(MARKER, f.read(), "Codex's transcript lacks the user's prompt")
        reviews = self.reviewer.reviews()
        self.assertEqual(len(reviews), 1, self.explain())
        prompt = json.dumps(reviews[0]["body"]["messages"])
        self.assertTrue(MARKER in prompt,
                        "the reviewer was not shown the user's request (audit intent: "
                        f"{self.audit()[0].get('intent')!r}); Codex's transcript_path was "
                        f"{hook_input['transcript_path']}")

    # ---- the breaker ----------------------------------------------------------------------------

    def test_codex_three_denials_tell_the_agent_to_stop(self):
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws(f'PWNED{i}')} && git push origin main")
                              for i in (1, 2, 3)])
        self.setup_codex(g.url)
        self.codex()
        for i in (1, 2, 3):
            self.assertNotRan(self.ws(f"PWNED{i}"))
        out = self.tool_result_texts()
        self.assertEqual(len(out), 3, self.explain())
        self.assertNotIn("STOP:", out[0], self.explain())
        self.assertIn("STOP:", out[2], f"the third denial does not tell Codex to stop\n{self.explain()}")
        # Codex would drop a hook answer carrying continue:false: the stop is text in the reason
        third = json.loads(self.sc.hook_calls()[2]["output"])
        self.assertNotIn("continue", third, self.explain())
        self.assertEqual(third["hookSpecificOutput"]["permissionDecision"], "deny", self.explain())

    # ---- escalation requests (PermissionRequest) ----------------------------------------------

    def escalation_script(self):
        target = os.path.join(self.sc.outside, "escalated")
        return target, [
            # inside the sandbox first: it cannot write outside the workspace
            exec_command(f"touch {os.path.join(self.sc.outside, 'sandboxed')}"),
            exec_command(f"touch {target}", sandbox_permissions="require_escalated",
                         justification="e2e: needs to write outside the workspace"),
        ]

    def check_escalation_input(self):
        perm = [c for c in self.sc.hook_calls()
                if isinstance(c["input"], dict) and c["input"].get("hook_event_name") == "PermissionRequest"]
        self.assertEqual(len(perm), 1, f"expected one PermissionRequest hook\n{self.explain()}")
        return perm[0]

    def test_codex_require_escalated_reviewer_allow_runs(self):
        self.start_reviewer("allow")
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH + [f"Edit(/{self.sc.outside}/**)"])
        target, script = self.escalation_script()
        self.start_responses(script)
        self.setup_codex(g.url)
        self.codex()
        self.assertNotRan(os.path.join(self.sc.outside, "sandboxed"), "the sandbox did not confine")
        self.assertIn("Read-only file system", self.tool_result_texts()[0], self.explain())
        self.assertRan(target)
        perm = self.check_escalation_input()
        self.assertIn('"behavior":"allow"', perm["output"].replace(" ", ""), self.explain())
        # the PreToolUse of the escalated command was rule-allowed, the escalation itself was
        # reviewed afresh (never allowed by a rule)
        esc = [a for a in self.audit() if a.get("escalation")]
        self.assertEqual([(a["decision"], a["decided_by"], a["escalation"]["kind"]) for a in esc],
                         [("allow", "reviewer", "unsandboxed")], self.explain())
        self.assertEqual(len(self.reviewer.reviews()), 1, self.explain())

    def test_codex_require_escalated_reviewer_deny_never_runs(self):
        self.start_reviewer("deny")
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH + [f"Edit(/{self.sc.outside}/**)"])
        target, script = self.escalation_script()
        self.start_responses(script)
        self.setup_codex(g.url)
        self.codex()
        self.assertNotRan(target)
        perm = self.check_escalation_input()
        self.assertIn('"behavior":"deny"', perm["output"].replace(" ", ""), self.explain())
        esc = [a for a in self.audit() if a.get("escalation")]
        self.assertEqual([(a["decision"], a["decided_by"]) for a in esc], [("deny", "reviewer")],
                         self.explain())

    def test_codex_additional_permissions_to_protected_paths_denied(self):
        """`with_additional_permissions` (Codex feature exec_permission_approvals): a harmless
        command asking for write access to .git/hooks or ~/.ssh is denied."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        ssh = os.path.join(self.sc.home, ".ssh")
        os.makedirs(ssh)
        subprocess.run(["git", "init", "-q", self.sc.ws], check=True)
        self.start_responses([
            exec_command(f"touch {self.ws('note1')}", sandbox_permissions="with_additional_permissions",
                         additional_permissions={"file_system": {"write": [self.ws(".git", "hooks")]}}),
            exec_command(f"touch {self.ws('note2')}", sandbox_permissions="with_additional_permissions",
                         additional_permissions={"file_system": {"write": [ssh]}}),
        ])
        self.setup_codex(g.url)
        self.codex(extra_args=["--enable", "exec_permission_approvals"])
        self.assertNotRan(self.ws("note1"))
        self.assertNotRan(self.ws("note2"))
        perm = [c for c in self.sc.hook_calls() if c["input"].get("hook_event_name") == "PermissionRequest"]
        self.assertEqual(len(perm), 2, self.explain())
        for c in perm:
            self.assertIn('"behavior":"deny"', c["output"].replace(" ", ""), self.explain())
        inp = perm[0]["input"]
        ctx = json.dumps(inp["approval_context"]) if "approval_context" in inp else "ABSENT"
        self.note(f"Codex PermissionRequest input for with_additional_permissions: "
                  f"tool_input={json.dumps(inp.get('tool_input'))}, approval_context={ctx}")

    # ---- guardian unreachable -------------------------------------------------------------------

    def test_codex_hook_unreachable_blocks(self):
        self.start_responses([exec_command(f"touch {self.ws('PWNED')}")])
        self.setup_codex(dead_url())
        self.codex()
        self.assertNotRan(self.ws("PWNED"))
        self.assertEqual(self.hook_events(), [("PreToolUse", 2)], self.explain())
        self.assertIn("Command blocked by PreToolUse hook", self.tool_result_texts()[0], self.explain())

    def test_codex_guardian_not_on_path_fails_open(self):
        """Documents Codex's own behaviour (README: "Codex lets the call proceed"): a hook command
        that cannot start is a failed hook, and the command runs."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('ran')} && git push origin main")])
        self.setup_codex(g.url, command="guardian")
        self.codex(path="/usr/bin:/bin")
        self.assertRan(self.ws("ran"), "Codex now blocks when a hook cannot start")
        self.assertEqual(self.audit(), [])

    # ---- hook trust -----------------------------------------------------------------------------

    def test_codex_untrusted_hooks_are_skipped(self):
        """Documents Codex: without trust (and without --dangerously-bypass-hook-trust) the
        hooks are silently skipped, and a denied command runs."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('ran')} && git push origin main")])
        self.setup_codex(g.url)
        self.codex(args=[a for a in CODEX_ARGS if a != "--dangerously-bypass-hook-trust"])
        self.assertRan(self.ws("ran"), "Codex now runs untrusted hooks")
        self.assertEqual(self.sc.hook_calls(), [])

    def test_codex_untrusted_project_config_is_ignored(self):
        """Documents Codex: `guardian install codex` (project scope) writes .codex/config.toml,
        which Codex ignores, hooks included, until the project is trusted (even with
        --dangerously-bypass-hook-trust)."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('ran')} && git push origin main")])
        self.setup_codex(g.url, trust_project=False)
        self.codex()
        self.assertRan(self.ws("ran"), "Codex now loads an untrusted project's config")
        self.assertIn("Untrusted project-local configuration is disabled", self.run_result.stderr)
        self.assertEqual(self.sc.hook_calls(), [])

    def test_codex_persisted_hook_trust(self):
        """Trust written ahead of time, as /hooks would persist it:
        [hooks.state."<config path>:<event>:<group>:<handler>"] trusted_hash = "sha256:…" in
        CODEX_HOME/config.toml. The hash is computed here (codex_hook_hash) and cross-checked
        with `codex app-server`'s hooks/list."""
        g = self.start_guardian(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('PWNED')} && git push origin main"),
                              exec_command(f"touch {self.ws('ok')}")])
        self.setup_codex(g.url)
        states = trust_codex_hooks(self.sc.codex_home, os.path.join(self.sc.ws, ".codex", "config.toml"))
        listed = codex_hooks_list(self.sc)
        self.assertEqual({h["key"]: h["currentHash"] for h in listed}, states,
                         "our hash differs from Codex's own")
        self.assertEqual({h["trustStatus"] for h in listed}, {"trusted"}, json.dumps(listed))
        self.codex(args=[a for a in CODEX_ARGS if a != "--dangerously-bypass-hook-trust"])
        self.assertNotRan(self.ws("PWNED"))
        self.assertRan(self.ws("ok"))
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "rule"), ("allow", "rule")],
                         self.explain())


# ---- Codex hook trust, computed --------------------------------------------------------------------

EVENT_KEYS = {"PreToolUse": "pre_tool_use", "PermissionRequest": "permission_request",
              "PostToolUse": "post_tool_use", "SessionStart": "session_start",
              "UserPromptSubmit": "user_prompt_submit", "Stop": "stop"}


def codex_hook_hash(event_key, matcher, command, timeout=600, is_async=False, status_message=None):
    """Codex 0.171's trust hash of one command hook (openai/codex codex-rs/hooks/src/engine/
    discovery.rs `command_hook_hash` + codex-rs/config/src/fingerprint.rs `version_for_toml`):
    SHA-256 of the compact, key-sorted JSON of the normalized identity
    {event_name, matcher, hooks: [{type: "command", command, timeout, async[, statusMessage]}]}.
    The command text is part of it, so a changed --server URL needs trusting again."""
    handler = {"type": "command", "command": command, "timeout": timeout, "async": is_async}
    if status_message is not None:
        handler["statusMessage"] = status_message
    identity = {"event_name": event_key, "hooks": [handler]}
    if matcher is not None:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def trust_codex_hooks(codex_home_dir, config_path):
    """Append [hooks.state."<key>"] trusted_hash entries for every hook in config_path to
    CODEX_HOME/config.toml. Returns {key: hash}."""
    import tomllib
    with open(config_path, "rb") as f:
        hooks = tomllib.load(f).get("hooks", {})
    states = {}
    for event, groups in hooks.items():
        if event not in EVENT_KEYS or not isinstance(groups, list):
            continue
        for gi, group in enumerate(groups):
            for hi, h in enumerate(group.get("hooks", [])):
                key = f"{config_path}:{EVENT_KEYS[event]}:{gi}:{hi}"
                states[key] = codex_hook_hash(EVENT_KEYS[event], group.get("matcher"), h["command"],
                                              h.get("timeout", 600), h.get("async", False),
                                              h.get("statusMessage"))
    with open(os.path.join(codex_home_dir, "config.toml"), "a") as f:
        for key, digest in states.items():
            f.write(f"\n[hooks.state.{toml_str(key)}]\ntrusted_hash = {toml_str(digest)}\n")
    return states


def codex_hooks_list(sc, timeout=20):
    """Codex's own view of the hooks: `codex app-server` JSON-RPC initialize + hooks/list."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": sc.home, "CODEX_HOME": sc.codex_home}
    p = subprocess.Popen([CONFIG["codex"], "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, cwd=sc.ws, env=env, text=True)
    try:
        def send(msg):
            p.stdin.write(json.dumps(msg) + "\n")
            p.stdin.flush()

        def wait_for(msg_id):
            deadline = time.time() + timeout
            while time.time() < deadline:
                ready, _, _ = select.select([p.stdout], [], [], 0.5)
                if ready:
                    line = p.stdout.readline()
                    if not line:
                        break
                    try:
                        msg = json.loads(line)
                    except ValueError:
                        continue
                    if msg.get("id") == msg_id:
                        return msg
            raise RuntimeError(f"codex app-server gave no answer to request {msg_id}")

        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"clientInfo": {"name": "guardian-e2e", "version": "1"}}})
        wait_for(1)
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {"cwds": [sc.ws]}})
        res = wait_for(2)["result"]
        return [h for d in res.get("data", []) for h in d.get("hooks", [])]
    finally:
        p.kill()
        p.wait()
