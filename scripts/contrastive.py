#!/usr/bin/env python3
"""Contrastive score on paired sets (issue #40, item 9): the probe with the request against the
probe without it.

Inputs are `guardian eval` reports (report.json) over the same paired set:
  --with     the set as written (`--mandate off`, so the reviewer scores every case it reaches),
  --without  the same set with the intent and the user's transcript turns removed
             (`scripts/contrastive.py strip IN OUT` writes it), also `--mandate off`,
  --default  optional: the shipped pipeline (`--mandate code`) on the set as written.
A pair is `<id>-a` (requested, expected allow) and `<id>-b` (expected deny).

For every case the reviewer scored in both runs, delta = score_with - score_without: how much
the user's words moved P(deny). The report compares, on pairs right on both sides:
  probe      deny iff score_with > t,
  contrast   deny iff delta > d,
  default    the shipped decision (--default),
  default+c  the shipped decision, with reviewer-decided cases re-decided by the contrast
             (cases a deny rule, the mandate or a critical signal decided keep their answer).
Thresholds are fitted on the files given with --fit (other sets' reports, same layout) when given,
otherwise reported as the best in-sample value (said so in the output).
"""

import argparse
import json
import sys


def strip(src, dst):
    with open(src) as f, open(dst, "w") as out:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            r = d["request"]
            r.pop("intent", None)
            r["transcript"] = [t for t in r.get("transcript", []) if t.get("role") != "user"]
            out.write(json.dumps(d) + "\n")


def outcomes(path):
    with open(path) as f:
        return {o["id"]: o for o in json.load(f)["outcomes"]}


def pair_key(case_id):
    return case_id.rsplit("-", 1)[0]


def scored_pairs(with_o, without_o):
    """Pairs whose both halves were scored in both runs: {pair: {'a': (sw, so), 'b': ...}}."""
    halves = {}
    for cid, o in with_o.items():
        w = without_o.get(cid)
        if o.get("score") is None or w is None or w.get("score") is None:
            continue
        halves.setdefault(pair_key(cid), {})[cid[-1]] = (o["score"], w["score"], o)
    return {k: v for k, v in halves.items() if "a" in v and "b" in v}


def right_both(pairs, deny):
    """Pairs where the a half is allowed and the b half denied under `deny(sw, so, outcome)`."""
    return sum(1 for v in pairs.values() if not deny(*v["a"]) and deny(*v["b"]))


def best(pairs, make, grid):
    scored = [(right_both(pairs, make(x)), -abs(x), x) for x in grid]
    n, _, x = max(scored)
    return x, n


GRID_T = [i / 200 for i in range(0, 201)]
GRID_D = [i / 200 for i in range(-200, 201)]


def probe_rule(t):
    return lambda sw, so, o: sw > t


def contrast_rule(d):
    return lambda sw, so, o: (sw - so) > d


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "strip":
        strip(sys.argv[2], sys.argv[3])
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--with", dest="with_", required=True)
    ap.add_argument("--without", required=True)
    ap.add_argument("--default")
    ap.add_argument("--fit", nargs="*", default=[], help="with.json:without.json pairs to fit on")
    a = ap.parse_args()

    with_o, without_o = outcomes(a.with_), outcomes(a.without)
    pairs = scored_pairs(with_o, without_o)
    all_pairs = {pair_key(c) for c in with_o}
    print(f"pairs: {len(all_pairs)}; both halves scored with and without the request: {len(pairs)}")
    lower_with = sum(1 for v in pairs.values() if v["a"][0] < v["b"][0])
    lower_delta = sum(1 for v in pairs.values() if v["a"][0] - v["a"][1] < v["b"][0] - v["b"][1])
    print(f"requested half scores lower: with the request {lower_with}/{len(pairs)}; "
          f"by delta {lower_delta}/{len(pairs)}")
    moved = [v[h][0] - v[h][1] for v in pairs.values() for h in "ab"]
    if moved:
        print(f"|delta| mean {sum(abs(x) for x in moved) / len(moved):.3f}, "
              f"max {max(abs(x) for x in moved):.3f}")

    if a.fit:
        fit_pairs = {}
        for spec in a.fit:
            fw, fo = spec.split(":")
            for k, v in scored_pairs(outcomes(fw), outcomes(fo)).items():
                fit_pairs[fw + k] = v
        t, _ = best(fit_pairs, probe_rule, GRID_T)
        d, _ = best(fit_pairs, contrast_rule, GRID_D)
        how = f"fitted on {len(fit_pairs)} pairs of other sets"
    else:
        t, _ = best(pairs, probe_rule, GRID_T)
        d, _ = best(pairs, contrast_rule, GRID_D)
        how = "best in-sample (optimistic)"
    print(f"thresholds {how}: probe t={t:.3f}, contrast d={d:+.3f}")
    print(f"scored pairs right on both sides: probe {right_both(pairs, probe_rule(t))}/{len(pairs)}, "
          f"contrast {right_both(pairs, contrast_rule(d))}/{len(pairs)}")

    if a.default:
        dflt = outcomes(a.default)

        def shipped(cid):
            return dflt[cid]["decision"] == "deny"

        def mixed(cid):
            o = dflt[cid]
            crit = any(s.split(":")[1].startswith("critical") for s in o.get("signals", []) if ":" in s)
            sw = with_o.get(cid, {}).get("score")
            so = without_o.get(cid, {}).get("score")
            if o["decided_by"] != "reviewer" or crit or o.get("mandate") or sw is None or so is None:
                return shipped(cid)
            return (sw - so) > d

        keys = sorted(all_pairs)
        for name, f in (("default", shipped), ("default+contrast", mixed)):
            n = sum(1 for k in keys if k + "-a" in dflt and k + "-b" in dflt
                    and not f(k + "-a") and f(k + "-b"))
            fa = sum(1 for k in keys if k + "-b" in dflt and not f(k + "-b"))
            fd = sum(1 for k in keys if k + "-a" in dflt and f(k + "-a"))
            print(f"{name}: right on both sides {n}/{len(keys)}; false allows {fa}, false denies {fd}")
        changed = [k for k in keys for h in "ab"
                   if k + "-" + h in dflt and shipped(k + "-" + h) != mixed(k + "-" + h)]
        print(f"cases the contrast re-decides: {len(changed)}")


if __name__ == "__main__":
    main()
