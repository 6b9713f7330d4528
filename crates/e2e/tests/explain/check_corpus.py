#!/usr/bin/env python3
"""Checks the EXPLAIN corpus on a running PostgreSQL 15 before queries are added or changed.

    scripts/pg15 start /tmp/pgx 46301
    crates/e2e/tests/explain/check_corpus.py --port 46301 [--loads 3] > table.md

1. Loads schema.sql into --loads fresh databases and requires EXPLAIN (COSTS OFF) and
   EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) of every query to print the same in
   each (stability).
2. For each query, turns off in turn each enable_* setting whose node the plan uses and takes
   the cheapest plan left; the ratio of its cost to the chosen plan's is the margin. A margin
   near 1.0 means the choice rests on small cost differences: keep such a query only where the
   tie is systematic (see README.md), otherwise change it.
3. Prints the markdown table of README.md: name, plan shape, margin and the setting behind it.
Sessions use max_parallel_workers_per_gather = 0 and jit = off, as the test does.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SETTINGS = "set max_parallel_workers_per_gather = 0; set jit = off; set work_mem = '4MB';"
KNOBS = {
    "Seq Scan": "enable_seqscan",
    "Index Scan": "enable_indexscan",
    "Index Only Scan": "enable_indexonlyscan",
    "Bitmap Heap Scan": "enable_bitmapscan",
    "Hash Join": "enable_hashjoin",
    "Merge Join": "enable_mergejoin",
    "Nested Loop": "enable_nestloop",
    "Sort": "enable_sort",
    "Incremental Sort": "enable_incremental_sort",
    "Material": "enable_material",
    "Memoize": "enable_memoize",
}
# PostgreSQL adds disable_cost (1e10) to a plan that cannot avoid a disabled node.
DISABLED = 1e9


def queries():
    out = []
    with open(os.path.join(HERE, "queries.sql")) as f:
        for line in f:
            if line.startswith("-- query:"):
                out.append([line[len("-- query:"):].strip(), ""])
            elif line.lstrip().startswith("--") or not out:
                continue
            else:
                out[-1][1] += line
    return [(n, q.strip().rstrip(";").strip()) for n, q in out]


def psql(port, db, sql):
    r = subprocess.run(
        ["psql", "-X", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", db,
         "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-c", sql],
        capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{db}: {sql}\n{r.stderr}")
    return r.stdout


def load(port, db):
    psql(port, "postgres", f"drop database if exists {db}")
    psql(port, "postgres", f"create database {db}")
    r = subprocess.run(
        ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", db,
         "-v", "ON_ERROR_STOP=1", "-f", os.path.join(HERE, "schema.sql")],
        capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"loading schema.sql into {db}:\n{r.stderr}")


def outputs(port, db, qs):
    res = {}
    for name, q in qs:
        plain = psql(port, db, f"{SETTINGS} explain (costs off) {q}")
        analyze = psql(port, db, f"{SETTINGS} begin; explain (analyze, costs off, timing off,"
                                 f" summary off) {q}; rollback;")
        res[name] = (plain, analyze)
    return res


def plan(port, db, q, off=None):
    pre = SETTINGS + (f"set {off} = off;" if off else "")
    return json.loads(psql(port, db, f"{pre} explain (format json) {q}"))[0]["Plan"]


def shape(p):
    t = p["Node Type"]
    if t == "Aggregate":
        t = {"Hashed": "HashAggregate", "Sorted": "GroupAggregate"}.get(p.get("Strategy"), t)
    elif t == "ModifyTable":
        t = p["Operation"]
    elif p.get("Join Type", "Inner") != "Inner":
        t = t.replace(" Join", "") + f" {p['Join Type']} Join"
    elif p.get("Scan Direction") == "Backward":
        t += " Backward"
    if "Index Name" in p:
        t += f" {p['Index Name']}"
    elif "Relation Name" in p:
        t += f" {p['Relation Name']}"
    kids = [shape(c) for c in p.get("Plans", [])]
    return t + (f"({', '.join(kids)})" if kids else "")


def knobs(p, acc):
    t = p["Node Type"]
    if t in KNOBS:
        acc.add(KNOBS[t])
    if t == "Aggregate" and p.get("Strategy") == "Hashed":
        acc.add("enable_hashagg")
    for c in p.get("Plans", []):
        knobs(c, acc)
    return acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--loads", type=int, default=3)
    args = ap.parse_args()
    qs = queries()
    dbs = [f"explain_corpus_{i}" for i in range(args.loads)]
    runs = []
    for db in dbs:
        load(args.port, db)
        runs.append(outputs(args.port, db, qs))
    unstable = [n for n, _ in qs if any(r[n] != runs[0][n] for r in runs[1:])]
    print(f"{len(qs)} queries; {args.loads} loads; unstable: {', '.join(unstable) or 'none'}\n")
    print("| query | PostgreSQL 15 plan | margin |")
    print("|---|---|---|")
    for name, q in qs:
        best = plan(args.port, dbs[0], q)
        cost = best["Total Cost"]
        alts = []
        for k in sorted(knobs(best, set())):
            c = plan(args.port, dbs[0], q, k)["Total Cost"]
            if c < DISABLED and cost > 0:
                alts.append((c / cost, k))
        m = f"{min(alts)[0]:.3f} ({min(alts)[1][len('enable_'):]} off)" if alts else "only plan"
        print(f"| {name} | {shape(best)} | {m} |")
    for db in dbs:
        psql(args.port, "postgres", f"drop database {db}")
    sys.exit(1 if unstable else 0)


if __name__ == "__main__":
    main()
