#!/usr/bin/env python3
"""Print the medians of `cargo bench --bench policy` and their ratio to the parse-only baseline."""
import json
import pathlib
import sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "target/criterion")
print(f"{'command':<10} {'benchmark':<26} {'median':>10} {'vs parse only':>14}")
for group in ["simple", "compound", "wrapped", "deny"]:
    base = None
    for bench in ["parse only (baseline)", "parse + 1-rule policy", "parse + 50-rule policy"]:
        est = json.loads((root / group / bench / "new" / "estimates.json").read_text())
        median = est["median"]["point_estimate"] / 1000.0
        base = base or median
        print(f"{group:<10} {bench:<26} {median:>8.2f} µs {median / base:>13.2f}x")
