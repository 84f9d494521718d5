#!/usr/bin/env python3
"""Derive tuned GEMV rows from a benchmark evidence file.

For every (shape, dtype, N) measured, the fastest general row is compared with the row general selection
chose ("auto"). Where another row is faster by more than --margin, a tuned row pins it for that exact
target, dtype, N, M and K (no bias). Writes capabilities/gemv_tuned_rows.inc.

    bench/derive_tuned_rows.py capabilities/evidence/gemv-sm_90.json > capabilities/gemv_tuned_rows.inc
"""
import argparse
import json

# kGemvRows's general rows, top to bottom (capabilities/gemv_rows.hpp), and their C++ names.
BASE = {"gemv.rowwise.dot2c": "kRowwiseDot2c", "gemv.rowwise.fdot2": "kRowwiseFdot2", "gemv.rowwise": "kRowwise",
        "gemv.mma": "kMma", "gemv.splitk.dot2c": "kSplitkDot2c", "gemv.splitk.fdot2": "kSplitkFdot2",
        "gemv.splitk": "kSplitk", "gemv.generic": "kGeneric"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("evidence")
    ap.add_argument("--margin", type=float, default=0.03, help="required speed-up over the default row")
    args = ap.parse_args()
    ev = json.load(open(args.evidence))
    target, path = ev["target"], "capabilities/evidence/" + args.evidence.split("/")[-1]
    configs = {}
    for r in ev["results"]:
        configs.setdefault((r["shape"], r["m"], r["k"], r["dtype"], r["n"]), []).append(r)
    print("// Tuned GEMV rows, derived from %s (commit %s)\n// by bench/derive_tuned_rows.py." % (path, ev["commit"]))
    print("// Regenerate from a new evidence file instead of editing by hand.")
    for (shape, m, k, dtype, n), rs in sorted(configs.items()):
        auto = next((r for r in rs if r["impl"] == "auto"), None)
        rows = [r for r in rs if r["impl"] in BASE]
        if not auto or not rows:
            continue
        # The row general selection takes: auto's, unless auto ran a tuned row (then the first general row, in
        # kGemvRows order, that was measured for this call).
        default = auto["row"]
        if "@" in default:
            default = min((r["impl"] for r in rows), key=list(BASE).index)
        default_us = next((r["us"] for r in rows if r["impl"] == default), auto["us"])
        best = min(rows, key=lambda r: r["us"])
        if best["impl"] == default or best["us"] * (1 + args.margin) > default_us:
            continue
        rid = "%s@%s:%s:n%d:m%d:k%d" % (best["impl"], target, dtype, n, m, k)
        print('    gemv_rows::tuned(gemv_rows::%s, "%s",\n'
              '                     "%s", DType::%s, %d, %d, %d,\n'
              '                     "%s: %s %.1f us vs %s %.1f us"),'
              % (BASE[best["impl"]], rid, target, dtype, n, m, k, path, best["impl"], best["us"], default, default_us))


if __name__ == "__main__":
    main()
