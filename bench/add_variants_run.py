#!/usr/bin/env python3
"""Append runs of gemv_variants_bench (Google Benchmark JSON) to the GEMV variants evidence file.

    bench/add_variants_run.py capabilities/evidence/gemv-variants-sm_90.json --commit SHA run1.json [run2.json ...]

Each JSON becomes one entry of "runs": commit, date, read bandwidth and every cell's us and % of it.
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("evidence")
    ap.add_argument("--commit", required=True)
    ap.add_argument("runs", nargs="+")
    args = ap.parse_args()
    ev = json.load(open(args.evidence))
    for path in args.runs:
        raw = json.load(open(path))
        results = []
        for b in raw["benchmarks"]:
            if b.get("error_occurred"):
                continue
            parts = b["run_name"].split("/")
            kernel, config, shape = parts[0], parts[1], parts[2]
            n = int(parts[3][1:]) if kernel == "mma" else 1
            results.append({"kernel": kernel, "config": config, "shape": shape, "n": n, "us": round(b["us"], 2),
                            "pct_read_bw": round(b["pct_read_bw"], 1)})
        ctx = raw["context"]
        ev["runs"].append({"commit": args.commit, "date": ctx.get("date"),
                           "read_bandwidth_GBps": round(float(ctx.get("read_bw_GBps", 0)), 1), "results": results})
    with open(args.evidence, "w") as f:
        json.dump(ev, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
