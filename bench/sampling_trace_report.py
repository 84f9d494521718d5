#!/usr/bin/env python3
"""Where a sampling call's time goes (the split rows), from a traced sampling_bench's records.

    cmake -DDCUKERN_BACKEND=cuda -DDCUKERN_BUILD_BENCH=ON -DDCUKERN_TRACE=ON ...; make sampling_bench
    DCUKERN_TRACE_OUT=trace.txt ./sampling_bench --benchmark_filter='.../split.vec(/|$)'
    bench/sampling_trace_report.py trace.txt [--json]

The records (platform/trace.hpp, harness.hpp write_trace) are one replay of a cell's graph of calls; the
split kernel stamps 0 entry, 1 its tile scanned (a row's finishing block: every tile arrived), 2 the
row's plan, 3 its token written, 4 the block's end; the threshold kernel 0 entry, 1 released, 2 end.
A kernel's start is its first block's entry or the end of the kernel before it, whichever is later (the
kernels are programmatic dependent launches: their blocks enter early and wait). Per call, in
microseconds from the split kernel's start (medians over the replay's calls, the first two and the last
left out):
  threshold       the threshold kernel, its start to its last block's end (calls that run it)
  tile_scan       a tile's entry (or the kernel's start, if later) to its scan done, over the tiles that
                  do not finish their row (median; _alone / _shared: tiles alone on their SM or not)
  tiles_scanned   the row's last such tile done (median over rows; _max: the slowest row)
  arrived         the finishing block sees every tile (cluster wait or ticket)
  plan, draw      the finishing block's merge into the row's plan, then its gather and draw
  row_end         the finishing block's end (median over rows; _max: the kernel's last)
"""
import argparse
import collections
import re
import statistics

from trace_report import print_report, read_cells  # the records' format: harness.hpp write_trace

SPLIT, THRESHOLD = 2, 3


def median(xs):
    return statistics.median(xs) if xs else None


def split_phases(blocks, start, rows):
    """One launch of the split kernel: its phases in us (`start` and the stamps are in ns)."""
    tiles = len(blocks) // rows
    by_block = {b["block"]: b for b in blocks}
    shared_sm = collections.Counter(b["sm"] for b in blocks)
    out = collections.defaultdict(list)
    rel = lambda t: (t - start) / 1000.0
    for r in range(rows):
        row = [by_block[i] for i in range(r * tiles, (r + 1) * tiles) if i in by_block]
        fin = [b for b in row if b["t"][2]]
        if len(fin) != 1:
            continue
        fin = fin[0]
        others = [b for b in row if b is not fin]
        for b in others:
            scan = (b["t"][1] - max(b["t"][0], start)) / 1000.0
            out["tile_scan"].append(scan)
            out["tile_scan_shared" if shared_sm[b["sm"]] > 1 else "tile_scan_alone"].append(scan)
        if others:
            out["tiles_scanned"].append(rel(max(b["t"][1] for b in others)))
        out["arrived"].append(rel(fin["t"][1]))
        out["plan"].append((fin["t"][2] - fin["t"][1]) / 1000.0)
        out["draw"].append((fin["t"][3] - fin["t"][2]) / 1000.0)
        out["row_end"].append(rel(fin["t"][4]))
    res = {k: median(v) for k, v in out.items()}
    if out["tiles_scanned"]:
        res["tiles_scanned_max"] = max(out["tiles_scanned"])
    res["row_end_max"] = max(out["row_end"]) if out["row_end"] else None
    res["blocks_sharing_an_sm"] = sum(1 for b in blocks if shared_sm[b["sm"]] > 1)
    return res


def cell_phases(cell):
    rows = int(re.search(r"/B(\d+)/", cell["name"]).group(1))
    launches = collections.defaultdict(list)
    for r in cell["records"]:
        launches[r["grid"]].append(r)
    ordered = sorted(launches.values(), key=lambda bs: min(b["t"][0] for b in bs))
    calls, prev_end, threshold = [], None, None
    for blocks in ordered:
        first = min(b["t"][0] for b in blocks)
        start = max(first, prev_end) if prev_end is not None else None
        if blocks[0]["kind"] == THRESHOLD:
            end = max(b["t"][2] for b in blocks)
            threshold = (end - start) / 1000.0 if start is not None else None
        elif blocks[0]["kind"] == SPLIT:
            end = max(b["t"][4] for b in blocks if b["t"][4]) if any(b["t"][4] for b in blocks) else first
            if start is not None:
                ph = split_phases(blocks, start, rows)
                if threshold is not None:
                    ph["threshold"] = threshold
                calls.append(ph)
            threshold = None
        else:
            continue
        prev_end = end
    calls = calls[2:-1] if len(calls) > 4 else calls
    keys = sorted({k for c in calls for k in c})
    return {k: round(median([c[k] for c in calls if c.get(k) is not None]) or 0.0, 2) for k in keys}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    report = {cell["name"]: dict(us_per_call=cell["us"], **cell_phases(cell)) for cell in read_cells(args.trace)}
    print_report(report, args.json)


if __name__ == "__main__":
    main()
