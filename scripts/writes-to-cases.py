#!/usr/bin/env python3
"""Turns a write set (evals/datasets/writes/*.jsonl: each case's action with the file's `before`
content) into eval cases whose write carries the diff an adapter would send: the unified diff of
`before` against the new content (3 lines of context), as `guardian hook` and the server compute
it from disk. A new file (`before` null) stays a whole-file write.

    python3 scripts/writes-to-cases.py evals/datasets/writes/blind1.jsonl > /tmp/writes-cases.jsonl
    guardian eval /tmp/writes-cases.jsonl --out eval-out/writes
"""
import difflib
import json
import sys


def convert(case):
    before = case.pop("before", None)
    action = case["request"]["action"]
    if before is not None and action.get("kind") == "write" and "diff" not in action:
        new = action.get("content", "")
        path = action["path"]
        diff = "".join(difflib.unified_diff(
            before.splitlines(keepends=True), new.splitlines(keepends=True),
            fromfile="a" + path, tofile="b" + path, n=3))
        action["diff"] = diff
    return case


def main():
    for name in sys.argv[1:]:
        with open(name, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    case = json.loads(line)
                except json.JSONDecodeError as e:
                    sys.exit(f"{name}:{n}: {e}")
                print(json.dumps(convert(case), ensure_ascii=False))


if __name__ == "__main__":
    main()
