#!/usr/bin/env python3
"""Fits the probe's deny threshold for actions with no risk signal, cross-validated (#40 item 4).

The deployed decision compares the probe's P(deny) with one threshold and then runs the outcome
table on the signals. #27's logistic combiner, which replaced both, denied more at the same
false-allow rate (evals/RESULTS.md). This asks a narrower question: keep the table, and let the
absence of signals count, with a second, higher threshold for the reviewed actions guardian's
code found nothing in (no signal: the table allows whatever the model allows there). The
candidate is the largest threshold, on a 0.01 grid from the deployed one, that is at least
MARGIN below every unsafe signal-free training case scoring at or above the deployed threshold
(so it adds no false allow in training); it is chosen on the training folds and counted on the
held-out fold (5 folds stratified by set and label, 5 assignments of folds).

Input: `guardian eval --concurrency 1` outputs (report.json and audit.jsonl in the same order),
each with a name for its set:

    scripts/no-signal-threshold.py /tmp/ev-main main /tmp/ev-fresh fresh

The deployed threshold is the shipped probe's (prompts/probe-v3.json); `--probe FILE` reads
another's.

It prints, per set and pooled, false-allow and false-deny rates of the deployed decision and of
the cross-validated one (over every case of the run, so the rates are the eval's own), and the
threshold fitted on everything given.
"""
import json
import random
import sys
from pathlib import Path

MARGIN = 0.02
FOLDS = 5
REPEATS = 5


def load(run, name):
    """One row per case: set, label, deployed decision, and for a signal-free case the probe
    decided, its score."""
    report = json.loads(Path(run, "report.json").read_text())
    outcomes = report["outcomes"]
    records = [json.loads(line) for line in Path(run, "audit.jsonl").read_text().splitlines()
               if line.strip()]
    if len(records) != len(outcomes):
        sys.exit(f"{run}: {len(records)} audit records for {len(outcomes)} outcomes "
                 "(run guardian eval with --concurrency 1 into an empty directory)")
    rows = []
    for o, r in zip(outcomes, records):
        if (o["decision"], o["decided_by"]) != (r["decision"], r["decided_by"]):
            sys.exit(f"{run}: outcomes and audit records are not in the same order")
        free = (r.get("decided_by") == "reviewer" and r.get("score") is not None
                and not r.get("signals") and not (r.get("mandate") or {}).get("ruling")
                and not r.get("error"))
        rows.append({"set": name, "unsafe": o["expected"] == "deny",
                     "denied": o["decision"] == "deny",
                     "score": r["score"] if free else None})
    return rows


def decide(row, base, t0):
    """The decision with threshold t0 for signal-free probe decisions (base elsewhere)."""
    if row["score"] is None or row["score"] < base:
        return row["denied"]
    return row["score"] >= t0


def fit(rows, base):
    floor = min([r["score"] for r in rows
                 if r["unsafe"] and r["score"] is not None and r["score"] >= base] + [1.0])
    t0 = base
    while t0 + 0.01 <= floor - MARGIN + 1e-9:
        t0 = round(t0 + 0.01, 2)
    return t0


def rates(rows, denied):
    unsafe = [d for r, d in zip(rows, denied) if r["unsafe"]]
    safe = [d for r, d in zip(rows, denied) if not r["unsafe"]]
    fa = sum(1 for d in unsafe if not d) / max(len(unsafe), 1)
    fd = sum(1 for d in safe if d) / max(len(safe), 1)
    return fa, fd


def main(argv):
    probe = Path(__file__).resolve().parent.parent / "prompts" / "probe-v3.json"
    if argv[:1] == ["--probe"] and len(argv) > 1:
        probe, argv = Path(argv[1]), argv[2:]
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__)
    base = json.loads(probe.read_text())["threshold"]
    rows = []
    for run, name in zip(argv[0::2], argv[1::2]):
        rows += load(run, name)
    strata = {}
    for i, r in enumerate(rows):
        strata.setdefault((r["set"], r["unsafe"]), []).append(i)
    cv = [0] * len(rows)  # how often each case is denied across the repeats
    fitted = []
    for rep in range(REPEATS):
        fold = [0] * len(rows)
        rng = random.Random(rep)
        for idx in strata.values():
            idx = idx[:]
            rng.shuffle(idx)
            for k, i in enumerate(idx):
                fold[i] = k % FOLDS
        for f in range(FOLDS):
            train = [r for r, g in zip(rows, fold) if g != f]
            t0 = fit(train, base)
            fitted.append(t0)
            for i, r in enumerate(rows):
                if fold[i] == f and decide(r, base, t0):
                    cv[i] += 1
    print(f"deployed threshold {base:.3f}; signal-free threshold per training fold: "
          f"{min(fitted):.2f}..{max(fitted):.2f}; fitted on everything: {fit(rows, base):.2f}")
    print("| set | cases | deployed FA | deployed FD | cross-validated FA | cross-validated FD |")
    print("|---|---|---|---|---|---|")
    for name in list(dict.fromkeys(r["set"] for r in rows)) + ["pooled"]:
        idx = [i for i, r in enumerate(rows) if name in ("pooled", r["set"])]
        sub = [rows[i] for i in idx]
        dfa, dfd = rates(sub, [r["denied"] for r in sub])
        # Expected rates over the repeats: a case denied in k of REPEATS counts k/REPEATS.
        unsafe = [i for i in idx if rows[i]["unsafe"]]
        safe = [i for i in idx if not rows[i]["unsafe"]]
        cfa = sum(1 - cv[i] / REPEATS for i in unsafe) / max(len(unsafe), 1)
        cfd = sum(cv[i] / REPEATS for i in safe) / max(len(safe), 1)
        print(f"| {name} | {len(sub)} | {dfa:.1%} | {dfd:.1%} | {cfa:.1%} | {cfd:.1%} |")


if __name__ == "__main__":
    main(sys.argv[1:])
