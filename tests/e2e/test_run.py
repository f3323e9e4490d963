"""`guardian run` around the real agents: no server started by hand, no settings file written.

Each scenario writes only guardian.toml (policy, no reviewer, the audit log) and the agent's own
model set-up (Claude Code's trusted HOME, Codex's CODEX_HOME with the fake provider, OpenCode's
opencode.json with the fake provider), then runs `guardian run --config guardian.toml -- <agent
…>`. guardian starts itself on a loopback port and wires the agent for this run only (Claude
Code: `--settings`; Codex: `-c` hooks plus their trust; OpenCode: OPENCODE_CONFIG_CONTENT, the
port and the bridge). The agent's settings files are checked byte for byte afterwards.
"""

import json
import os
import signal
import time

from harness import (CONFIG, E2ECase, Guardian, bash, claude_home, claude_settings_allow,
                     codex_home, exec_command, run_claude, run_codex)
from test_opencode import PROMPT, OpenCode, OpenCodeCase, oc_bash

DENY_PUSH = ["Bash(git push *)"]
ALLOW_TOUCH = ["Bash(touch *)", "Edit(/**)"]


def snapshot(*paths):
    out = {}
    for p in paths:
        out[p] = open(p, "rb").read() if os.path.exists(p) else None
    return out


class RunCase(E2ECase):
    def config(self, **kw):
        """guardian.toml for `guardian run` (the scenario's audit log); no server is started."""
        self.guardian_server = Guardian(self.sc.root, **kw)
        return self.guardian_server

    def prefix(self, *flags):
        return [CONFIG["guardian"], "run", "--config", self.guardian_server.config_path, *flags, "--"]


class TestRun(RunCase):
    def test_run_claude_deny_and_summary(self):
        """Claude Code's own settings allow Bash: only guardian's --settings hook can block."""
        self.config(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('PWNED')} && git push --force origin main")])
        claude_home(self.sc)
        claude_settings_allow(self.sc, ["Bash"])
        files = [self.ws(".claude", "settings.json"), os.path.join(self.sc.home, ".claude", "settings.json"),
                 os.path.join(self.sc.home, ".claude.json")]
        before = snapshot(*files[:2])
        summary = self.sc.path("summary.md")
        self.run_result = run_claude(self.sc, self.fake, extra_args=["--output-format", "text"],
                                     prefix=self.prefix("--fail-on-deny", "--summary", summary))
        self.assertNotRan(self.ws("PWNED"))
        self.assertEqual([d[:2] for d in self.decisions()], [("deny", "rule")], self.explain())
        self.assertEqual(self.run_result.rc, 3, f"--fail-on-deny with a denial\n{self.explain()}")
        self.assertIn("guardian: 1 decisions in 1 sessions: 0 allowed, 1 denied", self.run_result.stderr)
        with open(summary) as f:
            self.assertIn("**1 denied**", f.read())
        self.assertEqual(snapshot(*files[:2]), before, "guardian run changed a settings file")

    def test_run_claude_allow_runs(self):
        """Claude Code's own rules allow nothing (in -p an unanswered prompt is a denial): a command
        that runs was allowed by guardian's hook."""
        self.config(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_anthropic([bash(f"touch {self.ws('ok')}")])
        claude_home(self.sc)
        self.run_result = run_claude(self.sc, self.fake, prefix=self.prefix("--fail-on-deny"))
        self.assertRan(self.ws("ok"))
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule")], self.explain())
        self.assertEqual(self.run_result.rc, 0, self.explain())
        self.assertFalse(os.path.exists(self.ws(".claude", "settings.json")))
        self.assertFalse(os.path.exists(os.path.join(self.sc.home, ".claude", "settings.json")))

    def test_run_codex_hooks_trusted_for_the_run(self):
        """`codex exec` WITHOUT --dangerously-bypass-hook-trust: guardian's -c hooks run because
        guardian run trusts exactly them for this run (Codex skips untrusted hooks silently)."""
        self.config(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_responses([exec_command(f"touch {self.ws('ok')}"),
                              exec_command(f"touch {self.ws('PWNED')} && git push --force origin main")])
        codex_home(self.sc, self.fake)
        cfg = os.path.join(self.sc.codex_home, "config.toml")
        before = snapshot(cfg)
        self.run_result = run_codex(self.sc, args=["--skip-git-repo-check"], prefix=self.prefix())
        self.assertIsNotNone(self.run_result.rc, self.explain())
        self.assertRan(self.ws("ok"))
        self.assertNotRan(self.ws("PWNED"))
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule"), ("deny", "rule")],
                         self.explain())
        self.assertEqual(self.run_result.rc, 0, self.explain())
        self.assertEqual(snapshot(cfg), before, "guardian run changed CODEX_HOME/config.toml")
        self.assertNotIn("may run without review", self.run_result.stderr)


class TestRunOpenCode(OpenCodeCase):
    def test_run_opencode_serve_bridged(self):
        """`guardian run -- opencode serve --port P`: OPENCODE_CONFIG_CONTENT makes OpenCode ask,
        the in-process bridge answers; SIGTERM to guardian run reaches opencode."""
        g = self.guardian_config(deny=DENY_PUSH, allow=ALLOW_TOUCH)
        self.start_chat([oc_bash(f"touch {self.ws('ok')}"),
                         oc_bash(f"touch {self.ws('PWNED')} && git push origin main")])
        from harness import git_init
        git_init(self.sc.ws)
        # with "$schema": OpenCode adds it to a config that lacks it (not guardian's doing)
        cfg = {"$schema": "https://opencode.ai/config.json",
               "provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake",
                                     "options": {"baseURL": self.fake.url + "/v1", "apiKey": "e2e-dummy"},
                                     "models": {"m": {"name": "m"}}}},
               "model": "fake/m", "small_model": "fake/m", "autoupdate": False, "share": "disabled",
               # the user's own rules: guardian run's asks replace them for the run
               "permission": {"bash": "allow", "edit": "allow"}}
        with open(self.ws("opencode.json"), "w") as f:
            json.dump(cfg, f)
        before = snapshot(self.ws("opencode.json"))
        self.opencode = OpenCode(self.sc, prefix=[CONFIG["guardian"], "run", "--config", g.config_path,
                                                  "--summary", self.sc.path("summary.md"), "--"])
        self.opencode.start()
        self.sc.cleanups.append(self.opencode.stop)
        self.opencode.wait_ready()
        self.prompt()
        self.assertRan(self.ws("ok"))
        self.assertNotRan(self.ws("PWNED"))
        self.assertEqual([d[:2] for d in self.decisions()], [("allow", "rule"), ("deny", "rule")],
                         self.explain())
        # SIGTERM to guardian run only (not its group): it forwards it and exits with opencode's code
        os.kill(self.opencode.proc.pid, signal.SIGTERM)
        rc = self.opencode.proc.wait(20)
        self.assertNotEqual(rc, 3)
        with open(self.sc.path("summary.md")) as f:
            self.assertIn("**1 allowed**, **1 denied**", f.read())
        self.assertEqual(snapshot(self.ws("opencode.json")), before)
