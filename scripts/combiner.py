#!/usr/bin/env python3
"""A logistic combiner over what guardian already knows of a reviewed action, against the
deployed decision (the probe's threshold and the outcome table), cross-validated.

Issue #27 asked whether one logistic model over the probe's score, the risk signals (severity,
named or not, category) and the action kind decides better than the threshold and the table.
This script answers it from `guardian eval` outputs (report.json and audit.jsonl of runs with
`--concurrency 1`, so outcomes and audit records are in the same order): for the cases the
reviewer decided, it fits the combiner with 5-fold cross-validation (5 assignments of folds,
stratified by set and label), puts its threshold where the pooled false-allow rate equals the
deployed decision's, and prints both decisions' false-allow and false-deny rates per set.

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install numpy scikit-learn
    /tmp/skl/bin/python scripts/combiner.py /tmp/ev-main main /tmp/ev-oe over-eager
"""
import json
import math
import sys

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import StratifiedKFold

SEVERITY = {"low": 0, "medium": 1, "high": 2, "critical": 3}
CATEGORIES = [
    "destructive", "publish", "production", "safeguard_bypass", "credential_access",
    "secret_in_payload", "network_egress", "privilege", "persistence", "outside_workspace",
    "remote_history", "supply_chain", "scope",
]
KINDS = ["shell", "write", "read", "fetch", "mcp"]


def features(outcome, record):
    score = min(max(outcome["score"], 1e-4), 1 - 1e-4)
    signals = record.get("signals") or []
    unnamed = max([SEVERITY[s["severity"]] for s in signals if not s["named_in_intent"]] + [-1])
    named = max([SEVERITY[s["severity"]] for s in signals if s["named_in_intent"]] + [-1])
    row = [math.log(score / (1 - score))]
    row += [unnamed == 1, unnamed == 2, unnamed == 3, named == 1, named == 2, named == 3]
    row += [len(signals)]
    row += [any(s["category"] == c for s in signals) for c in CATEGORIES]
    row += [record["action"]["kind"] == k for k in KINDS]
    return [float(x) for x in row]


def load(directory, name):
    outcomes = json.load(open(f"{directory}/report.json"))["outcomes"]
    records = [json.loads(line) for line in open(f"{directory}/audit.jsonl")]
    rows = []
    for outcome, record in zip(outcomes, records):
        if outcome["decided_by"] != "reviewer" or outcome.get("score") is None:
            continue
        rows.append((name, outcome["expected"] == "deny", outcome["decision"] == "deny",
                     features(outcome, record)))
    return rows


def rates(y, pred, mask):
    unsafe, safe = y[mask], ~y[mask]
    p = pred[mask]
    fa, fd = int((p[unsafe] == 0).sum()), int((p[safe] == 1).sum())
    return (f"false-allow {100 * fa / max(unsafe.sum(), 1):.1f}% ({fa}/{unsafe.sum()}), "
            f"false-deny {100 * fd / max(safe.sum(), 1):.1f}% ({fd}/{safe.sum()})")


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    rows = []
    for directory, name in zip(argv[0::2], argv[1::2]):
        rows += load(directory, name)
    sets = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows])
    deployed = np.array([r[2] for r in rows]).astype(int)
    x = np.array([r[3] for r in rows])
    print(f"reviewed cases: {len(y)} ({y.sum()} unsafe)")
    strata = np.array([f"{s}{label}" for s, label in zip(sets, y)])
    for c in (0.1, 1.0):
        oof = np.zeros(len(y))
        for seed in range(5):
            folds = StratifiedKFold(5, shuffle=True, random_state=seed)
            for train, test in folds.split(x, strata):
                mean, scale = x[train].mean(0), x[train].std(0) + 1e-9
                model = LogisticRegression(C=c, max_iter=2000)
                model.fit((x[train] - mean) / scale, y[train])
                oof[test] += model.predict_proba((x[test] - mean) / scale)[:, 1] / 5
        allowed = int(math.floor((deployed[y] == 0).mean() * y.sum()))
        threshold = np.sort(oof[y])[allowed] if allowed < y.sum() else 1.0
        combined = (oof >= threshold).astype(int)
        print(f"C = {c}: pooled AUC {roc_auc_score(y, oof):.3f}, threshold {threshold:.3f}")
        for name in dict.fromkeys(sets):
            mask = sets == name
            print(f"  {name}: deployed {rates(y, deployed, mask)}")
            print(f"  {name}: combiner {rates(y, combined, mask)}, "
                  f"AUC {roc_auc_score(y[mask], oof[mask]):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
