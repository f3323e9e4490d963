#!/usr/bin/env bash
# Public training data for the reviewer's probe (guardian train), made from ../shared/datasets at
# run time and written under .models/train/ (git-ignored: the data is never committed).
#
# - nl2bash.jsonl: NL2Bash benign commands (risky ones filtered out as in `traces import`), every
#   8th case AFTER the first 1,000: the first 1,000 are where the NL2Bash evaluation subset (every
#   5th of them) comes from, so no evaluated case is trained on.
# - rjudge.jsonl: R-Judge app-tool actions, except every record that has a case in the R-Judge
#   evaluation subset of evals/RESULTS.md (every 8th case, NR % 8 == 1): a safe record gives a
#   case per action, with the same request, so the split is by record, not by case.
# RedCode-Exec is not used: all 165 cases under ../shared are the RedCode evaluation set.
# Never reads ../shared/datasets/holdout/.
#
# Usage: scripts/probe-data.sh [path/to/guardian]   (default: target/release/guardian)
set -euo pipefail
cd "$(dirname "$0")/.."
G="${1:-target/release/guardian}"
S="${GUARDIAN_SHARED_DATASETS:-../shared/datasets}"
[ -x "$G" ] || { echo "no guardian binary at $G (cargo build --release)"; exit 1; }
[ -d "$S/nl2bash" ] || { echo "no public datasets at $S (set GUARDIAN_SHARED_DATASETS)"; exit 1; }
mkdir -p .models/train
"$G" traces import nl2bash "$S/nl2bash/all.nl" "$S/nl2bash/all.cm" | awk 'NR > 1000 && (NR - 1001) % 8 == 0' > .models/train/nl2bash.jsonl
"$G" traces import rjudge "$S/r-judge/rjudge.json" | python3 -c '
import json, sys
lines = [l for l in sys.stdin if l.strip()]
record = lambda l: json.loads(l)["id"].rsplit("-", 1)[0]
evaluated = {record(l) for l in lines[::8]}
sys.stdout.write("".join(l for l in lines if record(l) not in evaluated))' > .models/train/rjudge.jsonl
wc -l .models/train/*.jsonl
