#!/usr/bin/env python3
"""guardian's end-to-end suite: the REAL Claude Code, Codex and OpenCode binaries, offline, against scripted
fake model servers, with guardian deciding their tool calls.

    scripts/agents.sh install                      # once: the pinned agents, outside git
    python3 tests/e2e/run.py --guardian target/release/guardian
    python3 tests/e2e/run.py --guardian … -k breaker --keep    # a subset; keep scenario dirs

Exits 0 only if every scenario passes; the last line is "N passed, M failed".
Standard library only (Python 3.11).
"""

import argparse
import os
import subprocess
import sys
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import harness  # noqa: E402


def agent_path(name):
    script = os.path.join(harness.REPO, "scripts", "agents.sh")
    p = subprocess.run([script, "path", name], capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


class Result(unittest.TestResult):
    def __init__(self, stream):
        super().__init__()
        self.stream = stream
        self.passed = 0
        self.t0 = {}

    def startTest(self, test):
        super().startTest(test)
        self.t0[test.id()] = time.time()
        self.stream.write(f"{test.id().split('.', 1)[1]:<72} ")
        self.stream.flush()

    def _done(self, test, status, detail=None):
        dt = time.time() - self.t0.get(test.id(), time.time())
        self.stream.write(f"{status} ({dt:.1f}s)\n")
        for note in getattr(test, "notes", []):
            self.stream.write(f"    note: {note}\n")
        if detail:
            self.stream.write("    " + detail.replace("\n", "\n    ") + "\n")
        self.stream.flush()
        sc = getattr(test, "sc", None)
        if sc is not None:
            sc.close(passed=status == "PASS")

    def addSuccess(self, test):
        super().addSuccess(test)
        self.passed += 1
        self._done(test, "PASS")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._done(test, "FAIL", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._done(test, "ERROR", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._done(test, f"SKIP: {reason}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--guardian", required=True, help="the guardian binary under test")
    ap.add_argument("--claude", help="Claude Code binary (default: scripts/agents.sh path claude)")
    ap.add_argument("--codex", help="Codex binary (default: scripts/agents.sh path codex)")
    ap.add_argument("--opencode", help="OpenCode binary (default: scripts/agents.sh path opencode)")
    ap.add_argument("-k", action="append", default=[], help="run scenarios whose name contains this")
    ap.add_argument("--keep", action="store_true", help="keep every scenario directory")
    args = ap.parse_args()

    guardian = os.path.abspath(args.guardian)
    if not os.access(guardian, os.X_OK):
        sys.exit(f"not an executable guardian binary: {guardian}")
    claude = args.claude or agent_path("claude")
    codex = args.codex or agent_path("codex")
    missing = [n for n, p in (("claude", claude), ("codex", codex)) if not p or not os.access(p, os.X_OK)]
    if missing:
        sys.exit(f"agents not installed ({', '.join(missing)}): run scripts/agents.sh install")
    opencode = args.opencode or agent_path("opencode")
    if not opencode or not os.access(opencode, os.X_OK):
        opencode = None
        print("!" * 78)
        print("!! OpenCode is not installed: its scenarios are SKIPPED (scripts/agents.sh install)")
        print("!" * 78)
    harness.CONFIG.update(guardian=guardian, claude=claude, codex=codex, opencode=opencode,
                          keep=args.keep)

    versions = [("guardian", [guardian, "--version"]), ("claude", [claude, "--version"]),
                ("codex", [codex, "--version"])]
    if opencode:
        versions.append(("opencode", [opencode, "--version"]))
    for name, cmd in versions:
        v = subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
        print(f"{name}: {v}  ({cmd[0]})")

    loader = unittest.TestLoader()
    if args.k:
        loader.testNamePatterns = [f"*{k}*" for k in args.k]
    suite = unittest.TestSuite()
    for mod in ("test_claude", "test_codex", "test_opencode", "test_run"):
        suite.addTests(loader.loadTestsFromName(mod))

    t = time.time()
    result = Result(sys.stdout)
    suite.run(result)
    failed = len(result.failures) + len(result.errors)
    print(f"\n{time.time() - t:.0f}s")
    skipped = f", {len(result.skipped)} skipped" if result.skipped else ""
    print(f"{result.passed} passed, {failed} failed{skipped}")
    sys.exit(0 if failed == 0 and result.passed > 0 else 1)


if __name__ == "__main__":
    main()
