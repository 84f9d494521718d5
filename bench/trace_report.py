#!/usr/bin/env python3
"""Where an attention call's time goes, from a traced attention_bench's records.

    cmake -DDCUKERN_BACKEND=cuda -DDCUKERN_BUILD_BENCH=ON -DDCUKERN_TRACE=ON ...; make attention_bench
    DCUKERN_TRACE_OUT=trace.txt ./attention_bench --benchmark_filter=...
    bench/trace_report.py trace.txt [--json]

The records (platform/trace.hpp, harness.hpp write_trace) are one replay of a cell's graph of calls.
Launches are grouped by %gridid and ordered by their first stamp. Per call, in microseconds:
  release        the split kernel's first block released after the previous kernel's last exit
  prologue       after the release to the loop's start (median over blocks); issue: to the first ring
                 stages issued (the pipelined kernels)
  loop_p50/max   the loop (median block, slowest block); loop_alone / loop_shared: the median over blocks
                 alone on their SM and over blocks sharing one (where both occur)
  epilogue       the loop's end to the block's exit (median over blocks); finish: finish_tile's start to
                 the exit
  split_kernel   its first release to its last exit
  merge_release  the split kernel's last exit to the merge's first release; merge: from there to its last exit
Each value printed is the median over the replay's calls, the first two and the last left out.
"""
import argparse
import collections
import json
import statistics

MMA, MERGE = 0, 1


def read_cells(path):
    cells, cur = [], None
    for line in open(path):
        if line.startswith("CELL"):
            _, name, _, us = line.split()
            cur = {"name": name, "us": float(us), "records": []}
            cells.append(cur)
        else:
            grid, kind, block, sm, *t = map(int, line.split())
            cur["records"].append({"grid": grid, "kind": kind, "block": block, "sm": sm, "t": t})
    return cells


def quantile(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))]


def stamped(blocks, point):
    """Every block stamped the point (records from a build with fewer points have none)."""
    return all(point < len(b["t"]) and b["t"][point] for b in blocks)


def call_phases(cell):
    launches = collections.defaultdict(list)
    for r in cell["records"]:
        launches[r["grid"]].append(r)
    phases, prev_end = collections.defaultdict(list), None
    for blocks in sorted(launches.values(), key=lambda bs: min(b["t"][0] for b in bs)):
        if blocks[0]["kind"] == MMA:
            released = min(b["t"][1] for b in blocks)
            if prev_end is not None:
                phases["release"].append(released - prev_end)
            phases["prologue"].append(statistics.median(b["t"][2] - b["t"][1] for b in blocks))
            if stamped(blocks, 5):
                phases["issue"].append(statistics.median(b["t"][5] - b["t"][1] for b in blocks))
            if stamped(blocks, 3):  # the pipelined kernels stamp the loop's end
                loop = [b["t"][3] - b["t"][2] for b in blocks]
                phases["loop_p50"].append(quantile(loop, 0.5))
                phases["loop_max"].append(max(loop))
                per_sm = collections.Counter(b["sm"] for b in blocks)
                alone = [b["t"][3] - b["t"][2] for b in blocks if per_sm[b["sm"]] == 1]
                shared = [b["t"][3] - b["t"][2] for b in blocks if per_sm[b["sm"]] > 1]
                if alone and shared:
                    phases["loop_alone"].append(statistics.median(alone))
                    phases["loop_shared"].append(statistics.median(shared))
                phases["epilogue"].append(statistics.median(b["t"][4] - b["t"][3] for b in blocks))
            if stamped(blocks, 6):
                phases["finish"].append(statistics.median(b["t"][4] - b["t"][6] for b in blocks))
            prev_end = max(b["t"][4] for b in blocks)
            phases["split_kernel"].append(prev_end - released)
        else:
            released = min(b["t"][1] for b in blocks)
            phases["merge_release"].append(released - prev_end)
            prev_end = max(b["t"][2] for b in blocks)
            phases["merge"].append(prev_end - released)
    out = {}
    for key, values in phases.items():
        values = values[2:-1] if len(values) > 5 else values
        out[key + "_us"] = round(statistics.median(values) / 1000, 2)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--json", action="store_true", help="one JSON object, cell -> phases")
    args = ap.parse_args()
    report = {}
    for cell in read_cells(args.trace):
        name = cell["name"].split("/attention.")[0].removeprefix("attention/")
        report[name] = {"us_per_call": cell["us"], **call_phases(cell)}
    print_report(report, args.json)


def print_report(report, as_json):
    """cell -> {phase: value}: as one JSON object, or a block of lines a cell."""
    if as_json:
        print(json.dumps(report, indent=1))
        return
    for name, phases in report.items():
        print(name)
        for key, value in phases.items():
            print(f"  {key:18s} {value:9.2f}")


if __name__ == "__main__":
    main()
