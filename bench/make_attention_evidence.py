#!/usr/bin/env python3
"""Turn attention_bench's Google Benchmark JSON files into a capability evidence file.

    bench/make_attention_evidence.py part1.json [part2.json ...] --commit SHA --row attention.mma_split \
        --note-file notes.json > capabilities/evidence/attention-sm_90.json

The files are the parts of one run (say one per KV dtype); a cell of the row that two of them hold is an
error. Records every measurement and checks the issue's speed requirements for the row given by --row:
>= 85 % of the measured read bandwidth where B x context >= 128K tokens, >= 70 % at B = 1, context 32768,
and page size 544 within 10 % of page size 16 (same heads, dtype, B, context). A requirement whose
measurement is missing is reported as not measured, never as met. Checks compare the unrounded measurements
(the file shows them rounded).
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench_json", nargs="+")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--row", required=True, help="the row whose numbers the checks use")
    ap.add_argument("--note-file", help="JSON object merged into the top level (machine, tests, method)")
    args = ap.parse_args()
    results, read_bw = [], []
    for path in args.bench_json:
        raw = json.load(open(path))
        for b in raw["benchmarks"]:
            if b.get("error_occurred"):
                continue
            parts = b["run_name"].split("/")
            _, heads, kv, ps, batch, ctx, row = parts[:7]
            if len(parts) > 7 and not parts[7].startswith("iterations"):  # a variant (layout, plan): its own label
                row += "/" + parts[7]
            results.append({"heads": heads, "kv": kv, "page_size": int(ps[2:]), "B": int(batch[1:]),
                            "context": int(ctx[3:]), "row": row, "us": b["us"],
                            "GBps": b["GBps"], "pct_read_bw": b["pct_read_bw"]})  # (rounded on output)
            for plan_key in ("chunks", "shallow_ring"):  # the call's plan, where the bench reports it
                if plan_key in b:
                    results[-1][plan_key] = int(b[plan_key])
            read_bw.append(b["read_bw_GBps"])
    mine = {}
    for r in results:
        if r["row"] != args.row:
            continue
        cell = (r["heads"], r["kv"], r["page_size"], r["B"], r["context"])
        if cell in mine:  # the files are parts of one run (e.g. one per KV dtype), never repeats of a cell
            raise SystemExit("%s: %s measured in more than one file; pass one run's files" % (args.row, cell))
        mine[cell] = r
    checks = []
    for heads in ("32x8x128", "24x4x256"):
        for kv in ("bf16", "fp8_e4m3"):
            for ps in (16, 544):
                for batch in (1, 8, 32, 64, 128):
                    for ctx in (512, 4096, 32768):
                        where = "%s %s ps%d B%d ctx%d" % (heads, kv, ps, batch, ctx)
                        r = mine.get((heads, kv, ps, batch, ctx))
                        reqs = []
                        if batch * ctx >= 128 * 1024:
                            reqs.append((">= 85% of measured read bandwidth (B x context >= 128K)", 85.0))
                        if batch == 1 and ctx == 32768:
                            reqs.append((">= 70% of measured read bandwidth at B = 1, context 32768", 70.0))
                        for text, floor in reqs:
                            checks.append({"requirement": text, "where": where,
                                           "value": round(r["pct_read_bw"], 2) if r else None,
                                           "met": bool(r and r["pct_read_bw"] >= floor),
                                           "measured": r is not None})
                        if ps == 544:
                            base = mine.get((heads, kv, 16, batch, ctx))
                            ratio = r["us"] / base["us"] if r and base else None
                            checks.append({"requirement": "page size 544 within 10% of page size 16 (time ratio)",
                                           "where": where, "value": round(ratio, 3) if ratio is not None else None,
                                           "met": ratio is not None and ratio <= 1.10, "measured": ratio is not None})
    out = {"op": "paged-KV decode attention (issue 3)", "commit_measured": args.commit,
           "read_bandwidth_GBps": round(sum(read_bw) / max(len(read_bw), 1), 1), "checked_row": args.row}
    if args.note_file:
        out.update(json.load(open(args.note_file)))
    met = sum(c["met"] for c in checks)
    measured = sum(c["measured"] for c in checks)
    out["summary"] = "%d of %d checks met; %d of them measured" % (met, len(checks), measured)
    out["checks"] = checks
    out["benchmarks"] = [dict(r, us=round(r["us"], 2), GBps=round(r["GBps"], 1), pct_read_bw=round(r["pct_read_bw"], 1))
                         for r in results]
    json.dump(out, __import__("sys").stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
