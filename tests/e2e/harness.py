"""Shared plumbing for the end-to-end scenarios: a guardian server, a scenario directory, the
real agents (Claude Code, Codex, OpenCode) pointed at the scripted fakes, and what they left behind.

Every scenario gets its own directory:

    <root>/ws            the agent's workspace (cwd), where marker files appear
    <root>/home          HOME for the agent (Claude Code's ~/.claude.json lives here)
    <root>/codex-home    CODEX_HOME
    <root>/outside       a directory outside the workspace (and outside Codex's sandbox)
    <root>/hooks/        every hook input/output, when the hook command goes through hook-tap.sh
    <root>/*.jsonl       the fakes' request logs, guardian's audit log, guardian's stderr

Nothing here touches the user's own HOME, ~/.claude or ~/.codex.
"""

import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time
import unittest

from fake_anthropic import FakeAnthropic, _text_of
from fake_openai_chat import FakeChat
from fake_openai_responses import FakeResponses
from fake_reviewer import FakeReviewer

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

CONFIG = {"guardian": None, "claude": None, "codex": None, "opencode": None, "keep": False,
          "verbose": False}

MARKER = "E2E-SCENARIO-PROMPT"


# ---- guardian ---------------------------------------------------------------------------------

def toml_str(s):
    return json.dumps(s)  # a JSON string is a valid TOML basic string


def toml_list(items):
    return "[" + ", ".join(toml_str(i) for i in items) + "]"


class Guardian:
    """`guardian serve` with a scenario policy, on a free loopback port."""

    def __init__(self, root, deny=(), allow=(), reviewer=None, unreviewed=None,
                 consecutive_denials=3, extra=""):
        self.root = root
        self.audit_path = os.path.join(root, "audit.jsonl")
        self.config_path = os.path.join(root, "guardian.toml")
        lines = ["[policy]", f"deny = {toml_list(deny)}", f"allow = {toml_list(allow)}", "",
                 "[reviewer]"]
        if reviewer is None:
            lines.append('backend = "none"')
        else:
            lines += ['backend = "openai"', f"base_url = {toml_str(reviewer.url + '/v1')}",
                      'model = "m"', "timeout_ms = 5000", "max_attempts = 1"]
        if unreviewed:
            lines += ["", "[hooks]", f"unreviewed = {toml_str(unreviewed)}"]
        lines += ["", "[audit]", f"path = {toml_str(self.audit_path)}", "",
                  "[breaker]", f"consecutive_denials = {consecutive_denials}", extra]
        with open(self.config_path, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.proc = None
        self.url = None

    def start(self):
        self.stderr_path = os.path.join(self.root, "guardian.stderr")
        err = open(self.stderr_path, "w+")
        self.proc = subprocess.Popen(
            [CONFIG["guardian"], "serve", "--config", self.config_path, "--listen", "127.0.0.1:0"],
            stdout=subprocess.DEVNULL, stderr=err, stdin=subprocess.DEVNULL)
        deadline = time.time() + 20
        while time.time() < deadline:
            with open(self.stderr_path) as f:
                m = re.search(r"guardian listening on (http://127\.0\.0\.1:\d+)", f.read())
            if m:
                self.url = m.group(1)
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise RuntimeError("guardian serve did not start: " + open(self.stderr_path).read())

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def audit(self):
        if not os.path.exists(self.audit_path):
            return []
        with open(self.audit_path) as f:
            return [json.loads(line) for line in f if line.strip()]

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def dead_url():
    """A loopback URL where nothing listens (a port that was just free)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}"


def install(agent, project, server, command, *extra, env=None):
    """`guardian install <agent> --project DIR --server URL --command CMD`: the README snippet."""
    p = subprocess.run([CONFIG["guardian"], "install", agent, "--project", project,
                        "--server", server, "--command", command, *extra],
                       capture_output=True, text=True, env=env, timeout=30)
    if p.returncode != 0:
        raise RuntimeError(f"guardian install {agent} failed: {p.stdout}{p.stderr}")
    return p.stdout


# ---- a scenario's directory -------------------------------------------------------------------

TAP = """#!/bin/sh
# hook-tap: record a hook's (or the MCP server's) input, output and exit code while passing
# them through as they stream, so the agent sees exactly what guardian says.
n=$(date +%s%N)
d={dir}
tee "$d/$n.in.json" | {{ {guardian} "$@" 2>"$d/$n.err"; echo $? >"$d/$n.rc"; }} | tee "$d/$n.out"
echo "$*" >"$d/$n.args"
cat "$d/$n.err" >&2
exit "$(cat "$d/$n.rc")"
"""


class Scenario:
    def __init__(self, name):
        self.name = name
        self.root = tempfile.mkdtemp(prefix=f"guardian-e2e-{name}-")
        self.ws = os.path.join(self.root, "ws")
        self.home = os.path.join(self.root, "home")
        self.codex_home = os.path.join(self.root, "codex-home")
        self.outside = os.path.join(self.root, "outside")
        self.hooks_dir = os.path.join(self.root, "hooks")
        for d in (self.ws, self.home, self.codex_home, self.outside, self.hooks_dir):
            os.makedirs(d)
        self.tap = os.path.join(self.root, "hook-tap.sh")
        with open(self.tap, "w") as f:
            f.write(TAP.format(dir=self.hooks_dir, guardian=CONFIG["guardian"]))
        os.chmod(self.tap, os.stat(self.tap).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        self.cleanups = []

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def hook_calls(self, prompts=False):
        """The hook invocations recorded by hook-tap.sh, in order:
        {"input": dict, "output": str, "stderr": str, "rc": int, "args": str}. Claude Code's
        UserPromptSubmit calls (the prompt's mandate compiled ahead) only with prompts=True."""
        calls = []
        for name in sorted(os.listdir(self.hooks_dir)):
            if not name.endswith(".in.json"):
                continue
            base = os.path.join(self.hooks_dir, name[:-len(".in.json")])

            def read(ext):
                try:
                    with open(base + ext) as f:
                        return f.read()
                except FileNotFoundError:
                    return ""
            raw = read(".in.json")
            try:
                inp = json.loads(raw)
            except ValueError:
                inp = raw
            rc = read(".rc").strip()
            if not prompts and isinstance(inp, dict) \
                    and inp.get("hook_event_name") == "UserPromptSubmit":
                continue
            calls.append({"input": inp, "output": read(".out"), "stderr": read(".err"),
                          "rc": int(rc) if rc else None, "args": read(".args").strip()})
        return calls

    def close(self, passed):
        for c in reversed(self.cleanups):
            try:
                c()
            except Exception:
                pass
        if passed and not CONFIG["keep"]:
            shutil.rmtree(self.root, ignore_errors=True)


def git_init(ws):
    subprocess.run(["git", "init", "-q", ws], check=True)
    subprocess.run(["git", "-C", ws, "-c", "user.email=e2e@example.invalid", "-c", "user.name=e2e",
                    "commit", "-q", "--allow-empty", "-m", "init"], check=True)


def base_env(sc, path=None):
    env = {
        "PATH": path if path is not None else os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": sc.home,
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "TMPDIR": sc.path("tmp"),
        "NO_COLOR": "1",
    }
    os.makedirs(env["TMPDIR"], exist_ok=True)
    return env


class AgentRun:
    def __init__(self, argv, rc, stdout, stderr, seconds):
        self.argv, self.rc, self.stdout, self.stderr, self.seconds = argv, rc, stdout, stderr, seconds

    def json(self):
        try:
            return json.loads(self.stdout)
        except ValueError:
            return None

    def __repr__(self):
        return (f"AgentRun(rc={self.rc}, {self.seconds:.1f}s)\n--- stdout ---\n{self.stdout[-4000:]}"
                f"\n--- stderr ---\n{self.stderr[-4000:]}")


def run_agent(argv, cwd, env, timeout=120, log=None):
    t = time.time()
    try:
        p = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        run = AgentRun(argv, p.returncode, p.stdout, p.stderr, time.time() - t)
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode("utf-8", "replace") if isinstance(b, bytes) else (b or "")
        run = AgentRun(argv, None, text(e.stdout), text(e.stderr), time.time() - t)
    if log:
        with open(log, "w") as f:
            f.write(" ".join(argv) + "\n" + repr(run))
    return run


# ---- Claude Code --------------------------------------------------------------------------------

def claude_home(sc, ws=None):
    """A throwaway HOME where the workspace is already trusted (project settings and hooks apply
    only in a trusted workspace) and onboarding is done."""
    ws = ws or sc.ws
    with open(os.path.join(sc.home, ".claude.json"), "w") as f:
        json.dump({"hasCompletedOnboarding": True, "numStartups": 1,
                   "projects": {ws: {"hasTrustDialogAccepted": True,
                                     "hasCompletedProjectOnboarding": True}}}, f)


def claude_settings_allow(sc, rules):
    """Claude Code's OWN permission rules (project settings), written before `guardian install`
    merges its hook in: with `Bash` allowed by Claude Code itself, only guardian can block."""
    d = os.path.join(sc.ws, ".claude")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "settings.json"), "w") as f:
        json.dump({"permissions": {"allow": list(rules)}}, f, indent=2)


def run_claude(sc, fake, extra_args=(), path=None, timeout=120, prefix=()):
    env = base_env(sc, path)
    env.update({
        "ANTHROPIC_BASE_URL": fake.url,
        "ANTHROPIC_API_KEY": "sk-ant-e2e-dummy",
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
    })
    argv = [*prefix, CONFIG["claude"], "-p", f"{MARKER}: run the scripted tool calls.",
            "--output-format", "json", *extra_args]
    return run_agent(argv, sc.ws, env, timeout=timeout, log=sc.path("claude.log"))


# ---- Codex --------------------------------------------------------------------------------------

def codex_home(sc, fake, trust_project=True, model="gpt-5.5"):
    """CODEX_HOME/config.toml: the scripted fake as the model provider (under a model name Codex
    has metadata for, so it offers its usual tools); the workspace trusted (an
    untrusted project's .codex/config.toml is ignored); Codex's sandbox without /tmp, so that only
    the workspace is writable inside it."""
    lines = [
        'model_provider = "fake"',
        f"model = {toml_str(model)}",  # a model Codex knows: it offers apply_patch
        "",
        "[model_providers.fake]",
        'name = "fake"',
        f"base_url = {toml_str(fake.url + '/v1')}",
        'wire_api = "responses"',
        'env_key = "FAKE_KEY"',
        "",
        "[sandbox_workspace_write]",
        "exclude_slash_tmp = true",
        "exclude_tmpdir_env_var = true",
    ]
    if trust_project:
        lines += ["", f"[projects.{toml_str(sc.ws)}]", 'trust_level = "trusted"']
    with open(os.path.join(sc.codex_home, "config.toml"), "w") as f:
        f.write("\n".join(lines) + "\n")


CODEX_ARGS = ["--skip-git-repo-check", "--dangerously-bypass-hook-trust", "--approve-for-me"]


def run_codex(sc, args=CODEX_ARGS, extra_args=(), path=None, timeout=120, prefix=()):
    env = base_env(sc, path)
    env.update({"CODEX_HOME": sc.codex_home, "FAKE_KEY": "e2e-dummy", "RUST_LOG": "warn"})
    argv = [*prefix, CONFIG["codex"], "exec", *args, *extra_args,
            f"{MARKER}: run the scripted tool calls."]
    return run_agent(argv, sc.ws, env, timeout=timeout, log=sc.path("codex.log"))


# ---- the scenario base class --------------------------------------------------------------------


def bash(command, **extra):
    """A Claude Code Bash tool call."""
    return ("Bash", dict({"command": command, "description": "e2e scripted command"}, **extra))


def exec_command(cmd, **extra):
    """A Codex exec_command tool call."""
    return ("exec_command", dict({"cmd": cmd}, **extra))


def apply_patch(patch):
    """A Codex apply_patch (freeform) tool call."""
    return ("apply_patch", patch)


class E2ECase(unittest.TestCase):
    """One scenario = one test method. `self.sc` is its directory; servers started through the
    helpers below are stopped when it ends; the directory is kept when it fails."""

    maxDiff = None

    def setUp(self):
        self.sc = Scenario(self._testMethodName.removeprefix("test_"))
        self.guardian_server = None
        self.fake = None
        self.reviewer = None
        self.run_result = None
        self.notes = []

    def note(self, text):
        """An observation worth reporting (printed under the scenario's result line)."""
        self.notes.append(text)

    def tearDown(self):
        for c in reversed(self.sc.cleanups):
            try:
                c()
            except Exception:
                pass
        self.sc.cleanups = []

    # -- servers --
    def start_reviewer(self, outcome):
        self.reviewer = FakeReviewer(outcome, log_path=self.sc.path("reviewer.jsonl")).start()
        self.sc.cleanups.append(self.reviewer.stop)
        return self.reviewer

    def start_guardian(self, **kw):
        kw.setdefault("reviewer", self.reviewer)
        g = Guardian(self.sc.root, **kw).start()
        self.sc.cleanups.append(g.stop)
        self.guardian_server = g
        return g

    def start_anthropic(self, script):
        self.fake = FakeAnthropic(script, MARKER, log_path=self.sc.path("anthropic.jsonl")).start()
        self.sc.cleanups.append(self.fake.stop)
        return self.fake

    def start_chat(self, script):
        self.fake = FakeChat(script, MARKER, log_path=self.sc.path("chat.jsonl")).start()
        self.sc.cleanups.append(self.fake.stop)
        return self.fake

    def start_responses(self, script):
        self.fake = FakeResponses(script, MARKER, log_path=self.sc.path("responses.jsonl")).start()
        self.sc.cleanups.append(self.fake.stop)
        return self.fake

    # -- files --
    def ws(self, *parts):
        return os.path.join(self.sc.ws, *parts)

    def assertRan(self, path, why=""):
        self.assertTrue(os.path.exists(path),
                        f"{path} should exist (the command ran). {why}\n{self.explain()}")

    def assertNotRan(self, path, why=""):
        self.assertFalse(os.path.exists(path), f"{path} exists: the command RAN. {why}\n{self.explain()}")

    # -- evidence --
    def audit(self):
        return self.guardian_server.audit() if self.guardian_server else []

    def decisions(self):
        """[(decision, decided_by, command-or-kind)] from guardian's audit log."""
        out = []
        for a in self.audit():
            act = a.get("action") or {}
            out.append((a.get("decision"), a.get("decided_by"), act.get("command") or act.get("kind")))
        return out

    def tool_result_texts(self):
        """What the agent told the model about each scripted call (Claude tool_result text or
        Codex function_call_output), in order."""
        if isinstance(self.fake, FakeAnthropic):
            return [_text_of(b.get("content")) for b in self.fake.final_tool_results()]
        if isinstance(self.fake, FakeChat):
            return self.fake.final_tool_results()
        if isinstance(self.fake, FakeResponses):
            return [o.get("output") if isinstance(o.get("output"), str) else json.dumps(o.get("output"))
                    for o in self.fake.final_outputs()]
        return []

    def explain(self):
        lines = [f"scenario dir: {self.sc.root}"]
        if self.run_result is not None:
            lines.append(repr(self.run_result)[-3000:])
        lines.append("guardian decisions: " + json.dumps(self.decisions())[:2000])
        try:
            lines.append("tool results: " + json.dumps(self.tool_result_texts())[:3000])
        except Exception as e:
            lines.append(f"tool results: <{e!r}>")
        calls = []
        for c in self.sc.hook_calls(prompts=True):
            inp = c["input"] if isinstance(c["input"], dict) else {}
            calls.append({"event": inp.get("hook_event_name"), "tool": inp.get("tool_name"),
                          "rc": c["rc"], "out": c["output"][:300], "err": c["stderr"][:300]})
        if calls:
            lines.append("hook calls: " + json.dumps(calls)[:3000])
        return "\n".join(lines)


# ---- Claude Code's interactive TUI, in tmux -----------------------------------------------------

def run_claude_tui(sc, fake, script_len, extra_args=(), timeout=60):
    """Run interactive `claude` in a private tmux server until the fake model's script is
    answered; press Enter on every question dialog (AskUserQuestion's first option).
    Some tools (AskUserQuestion, EnterPlanMode) exist only in the interactive TUI."""
    key = "sk-ant-e2e-dummy-key-0123456789abcdef"
    path = os.path.join(sc.home, ".claude.json")
    with open(path) as f:
        state = json.load(f)
    state["customApiKeyResponses"] = {"approved": [key[-20:]], "rejected": []}
    with open(path, "w") as f:
        json.dump(state, f)
    env = base_env(sc)
    env.update({"ANTHROPIC_BASE_URL": fake.url, "ANTHROPIC_API_KEY": key, "TERM": "xterm-256color",
                "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    launcher = sc.path("claude-tui.sh")
    with open(launcher, "w") as f:
        f.write("#!/bin/sh\ncd " + json.dumps(sc.ws) + "\n")
        f.write("exec env -i " + " ".join(f"{k}={json.dumps(v)}" for k, v in env.items()) + " "
                + " ".join(json.dumps(a) for a in [CONFIG["claude"], "--permission-mode", "default",
                                                    *extra_args, f"{MARKER}: run the scripted tool calls."])
                + "\n")
    os.chmod(launcher, 0o755)
    sock = f"guardian-e2e-{os.getpid()}-{os.path.basename(sc.root)}"
    tmux = ["tmux", "-L", sock]
    subprocess.run(tmux + ["new-session", "-d", "-s", "e2e", "-x", "160", "-y", "50", launcher], check=True)
    screens = []
    t = time.time()
    try:
        answered = 0
        while time.time() - t < timeout:
            time.sleep(0.5)
            pane = subprocess.run(tmux + ["capture-pane", "-p", "-t", "e2e"], capture_output=True,
                                  text=True).stdout
            screens.append(pane)
            if "Enter to select" in pane and answered < 5:
                subprocess.run(tmux + ["send-keys", "-t", "e2e", "Enter"])
                answered += 1
                time.sleep(0.5)
            done = [r for r in fake.main_requests() if len(fake.tool_results(r)) >= script_len]
            if done:
                time.sleep(0.5)
                break
    finally:
        subprocess.run(tmux + ["kill-server"], capture_output=True)
    with open(sc.path("claude-tui.screens.txt"), "w") as f:
        f.write("\n=====\n".join(screens[-5:]))
    return AgentRun(["claude (tmux)"], 0, screens[-1] if screens else "", "", time.time() - t)
