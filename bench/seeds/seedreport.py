"""Statistics, charts (matplotlib) and the markdown report for a seedbench results.json."""
import json
import os
import statistics
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"keel": "#d95f02", "pg": "#1b64b0"}
LABELS = {"keel": "keel", "pg": "PostgreSQL 15"}


def stats(run):
    """Summary of one pgbench run's per-second series (all seconds pgbench reported)."""
    tps = [s["tps"] for s in run.get("seconds", [])]
    if not tps:
        return None
    med = statistics.median(tps)
    return {
        "mean": round(statistics.fmean(tps), 1), "median": round(med, 1), "min": round(min(tps), 1),
        "stddev": round(statistics.pstdev(tps), 1),
        "cv_pct": round(100 * statistics.pstdev(tps) / statistics.fmean(tps), 1) if statistics.fmean(tps) else None,
        "stalls": sum(1 for t in tps if t < 0.5 * med), "zero_seconds": sum(1 for t in tps if t == 0),
        "lat_avg_ms": run.get("totals", {}).get("lat_avg_ms"), "lat_p99_ms": run.get("p99_ms"),
        "tps_pgbench": run.get("totals", {}).get("tps"),
    }


def add_stats(res):
    for sc in res["scenarios"]:
        for r in sc.get("runs", []):
            r["stats"] = stats(r)
        by = {}
        for r in sc.get("runs", []):
            by.setdefault((r["variant"], r["clients"]), {})[r["engine"]] = r
        for pair in by.values():
            k, p = pair.get("keel"), pair.get("pg")
            if k and p and k.get("stats") and p.get("stats") and p["stats"]["mean"] > 0:
                k["ratio_keel_pg"] = p["ratio_keel_pg"] = round(k["stats"]["mean"] / p["stats"]["mean"], 3)


def short(err, n=110):
    err = (err or "").strip().splitlines()
    return (err[0][:n] + ("…" if len(err[0]) > n else "")) if err else ""


def why(r):
    """The message that explains a run that did not produce numbers."""
    own = short(r.get("error"))
    if r.get("setup_failure") and ("does not exist" in own or not own):
        f = r["setup_failure"]  # the run only failed because setup could not create its objects
        return f"setup `{short(f['sql'], 60)}`: {short(f['error'])}"
    if r.get("failed_sql"):
        return f"`{short(r['failed_sql'], 60)}`: {own}"
    return own


def chart_pgbench(sc, path):
    runs = sc["runs"]
    variants = list(dict.fromkeys(r["variant"] for r in runs))
    clients = list(dict.fromkeys(r["clients"] for r in runs))
    if not runs:
        return False
    fig, axes = plt.subplots(len(variants), len(clients), figsize=(6.2 * len(clients), 2.9 * len(variants)),
                             squeeze=False, sharex="col")
    for i, v in enumerate(variants):
        for j, c in enumerate(clients):
            ax = axes[i][j]
            notes = []
            for r in runs:
                if r["variant"] != v or r["clients"] != c:
                    continue
                s = r.get("seconds", [])
                if s:
                    ax.plot([x["t"] for x in s], [x["tps"] for x in s], color=COLORS[r["engine"]],
                            label=LABELS[r["engine"]], linewidth=1.3, marker=".", markersize=3)
                    ax.axhline(r["stats"]["median"], color=COLORS[r["engine"]], linestyle=":", linewidth=0.8)
                if r["status"] != "ok":
                    notes.append(f"{r['engine']}: {r['status']}: {why(r)}")
            ax.set_title(f"{v}, {c} clients", fontsize=9)
            ax.set_ylim(bottom=0)
            ax.grid(alpha=0.3)
            if notes:
                ax.text(0.01, 0.02, "\n".join(textwrap.fill(n, 90) for n in notes), transform=ax.transAxes,
                        fontsize=6.5, va="bottom", color="#a00000",
                        bbox=dict(facecolor="white", alpha=0.8, edgecolor="none"))
            if j == 0:
                ax.set_ylabel("tps (per second)")
            if i == len(variants) - 1:
                ax.set_xlabel("time (s)")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize=7, loc="upper right")
    fig.suptitle(f"{sc['id']}: {sc['title']} — per-second tps (dotted: median)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def chart_scaling(sc, path):
    """s002: mean tps against clients, one line per engine and workload."""
    fig, ax = plt.subplots(figsize=(7, 4))
    styles = {}
    for r in sc["runs"]:
        if r.get("stats"):
            styles.setdefault((r["engine"], r["variant"]), []).append((r["clients"], r["stats"]["mean"]))
    if not styles:
        plt.close(fig)
        return False
    for (e, v), pts in styles.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=COLORS[e], marker="o",
                linestyle="-" if v == "select-only" else "--", label=f"{LABELS[e]} {v}")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted({r["clients"] for r in sc["runs"]}))
    ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
    ax.set_xlabel("clients")
    ax.set_ylabel("mean tps")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(f"{sc['id']}: tps against clients", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def chart_steps(sc, path):
    names = [s["name"] for s in next(iter(sc["steps"].values()), [])]
    if not names:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(names) + 1.5))
    h = 0.38
    for k, (e, steps) in enumerate(sc["steps"].items()):
        for i, s in enumerate(steps):
            y = i + (k - 0.5) * h
            if s["status"] == "ok":
                ax.barh(y, s["seconds"], height=h, color=COLORS[e], label=LABELS[e] if i == 0 else None)
                ax.text(s["seconds"], y, f" {s['seconds']:.2f}s", va="center", fontsize=7)
            else:
                ax.text(0, y, f" {e}: {s['status']}: {short(s['error'], 70)}", va="center", fontsize=6.5,
                        color="#a00000")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("seconds (wall, one psql session per step)")
    ax.grid(axis="x", alpha=0.3)
    handles = ax.get_legend_handles_labels()
    if handles[0]:
        ax.legend(fontsize=8)
    ax.set_title(f"{sc['id']}: {sc['title']}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def fmt(x, nd=0):
    if x is None:
        return "–"
    return f"{x:,.{nd}f}"


def write_all(res, out):
    add_stats(res)
    os.makedirs(os.path.join(out, "charts"), exist_ok=True)
    charts = {}
    for sc in res["scenarios"]:
        cs = []
        if sc["kind"] == "pgbench":
            p = f"charts/{sc['id']}_tps.png"
            if chart_pgbench(sc, os.path.join(out, p)):
                cs.append(p)
            if sc["id"] == "s002" and chart_scaling(sc, os.path.join(out, f"charts/{sc['id']}_scaling.png")):
                cs.append(f"charts/{sc['id']}_scaling.png")
        else:
            p = f"charts/{sc['id']}_steps.png"
            if chart_steps(sc, os.path.join(out, p)):
                cs.append(p)
        charts[sc["id"]] = sc["charts"] = cs
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(out, "report.md"), "w") as f:
        f.write(markdown(res))


def markdown(res):
    m, L = res["machine"], []
    L.append(f"# Seed benchmark suite: keel vs PostgreSQL 15 ({res['stamp']}, profile `{res['profile']}`)\n")
    L.append(f"Machine: {m['cores']} cores, {m['memory']}; load average {m['loadavg_start']} at start, "
             f"{m.get('loadavg_end', '?')} at end (the machine is shared: other processes compete for the cores, "
             f"so absolute numbers are noisy). keel {m['keel_commit']} (`{m['keel_bin']}`); {m['pgbench']}.")
    for n, v in res.get("versions", {}).items():
        L.append(f"{LABELS[n]}: `{v}`.")
    s = res["settings"]["pg"]
    L.append(f"Both engines: shared_buffers={s['shared_buffers']}, work_mem={s['work_mem']}, "
             f"max_connections={s['max_connections']}, synchronous_commit=on, fsync on; everything else default "
             f"(PostgreSQL may use parallel workers and autovacuum; keel has neither). "
             f"Runs alternate engines; each pgbench run: `-n -r -P 1 -M prepared -l`. "
             f"Suite wall time: {res.get('seconds', '?')} s.\n")
    L.append("Columns: per-second tps over the run (mean, median, min, population stddev); stalls = seconds "
             "below 50% of the run's median; avg latency from pgbench, p99 from its per-transaction log; "
             "keel/pg = ratio of mean tps (above 1: keel faster); for s004 steps, keel's time as a multiple of "
             "PostgreSQL's (above 1: keel slower).\n")
    L.append("## Summary\n")
    L.append("| scenario | run | clients | engine | status | mean tps | median | min | stddev | stalls | "
             "avg lat ms | p99 ms | keel/pg |")
    L.append("|---|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for sc in res["scenarios"]:
        order = {e: i for i, e in enumerate(LABELS)}
        for r in sorted(sc.get("runs", []), key=lambda r: order.get(r["engine"], 9)):
            r["_k"] = (r["variant"], r["clients"])
        keys = list(dict.fromkeys(r["_k"] for r in sc.get("runs", [])))
        runs = sorted(sc.get("runs", []), key=lambda r: (keys.index(r.pop("_k")), order.get(r["engine"], 9)))
        for r in runs:
            st = r.get("stats")
            if st:
                L.append(f"| {sc['id']} | {r['variant']} | {r['clients']} | {r['engine']} | {r['status']} | "
                         f"{fmt(st['mean'])} | {fmt(st['median'])} | {fmt(st['min'])} | {fmt(st['stddev'])} | "
                         f"{st['stalls']} | {fmt(st['lat_avg_ms'], 2)} | {fmt(st['lat_p99_ms'], 2)} | "
                         f"{fmt(r.get('ratio_keel_pg'), 2)} |")
            else:
                L.append(f"| {sc['id']} | {r['variant']} | {r['clients']} | {r['engine']} | **{r['status']}** | "
                         f"{why(r).replace('|', '/')} | | | | | | | |")
        names = [x["name"] for x in next(iter(sc.get("steps", {}).values()), [])]
        for stp, e in sorted(((x, e) for e, ss in sc.get("steps", {}).items() for x in ss),
                             key=lambda p: (names.index(p[0]["name"]), p[1] != "keel")):
            if True:
                other = [x for e2, ss in sc["steps"].items() if e2 != e for x in ss if x["name"] == stp["name"]]
                ratio = "–"
                if e == "keel" and other and other[0]["status"] == "ok" and stp["status"] == "ok" \
                        and other[0]["seconds"] > 0:
                    ratio = f"time ×{stp['seconds'] / other[0]['seconds']:.2f}"
                val = f"{stp['seconds']:.2f} s" if stp["status"] == "ok" else why(stp).replace("|", "/")
                if stp.get("explain") and not stp["explain"]["ok"]:
                    val += f" (EXPLAIN: {short(stp['explain']['error'], 60)})".replace("|", "/")
                L.append(f"| {sc['id']} | {stp['name']} | 1 | {e} | {stp['status']} | {val} | | | | | | | {ratio} |")
    L.append("")
    for sc in res["scenarios"]:
        L += scenario_section(sc)
    ev = {n: x for n, x in res.get("server_events", {}).items() if x}
    if ev:
        L.append("## Server events\n")
        for n, x in ev.items():
            for e in x:
                L.append(f"- {n}: {e['where']}: {e['event']} (restarted: {e.get('restarted')})")
                if e.get("log_tail"):
                    L.append("\n```\n" + e["log_tail"].rstrip()[-1500:] + "\n```")
    return "\n".join(L) + "\n"


def scenario_section(sc):
    L = [f"## {sc['id']}: {sc['title']}\n",
         f"Seed `{sc['seed']}`. What the seed shows: {sc['seed_shows']}\n",
         "Parameters: " + ", ".join(f"{k}={v}" for k, v in sc["params"].items()) +
         f"; scenario wall time {sc['wall_seconds']} s, load average {sc['loadavg_start']} -> {sc['loadavg_end']}.\n"]
    if sc.get("aborted"):
        L.append("**The runner aborted this scenario** (a bug in the suite, not an engine result):\n\n```\n" +
                 sc["aborted"].rstrip() + "\n```\n")
    if sc.get("note"):
        L.append(sc["note"] + "\n")
    for c in sc.get("charts", []):
        L.append(f"![{sc['id']}]({c})\n")
    for e, su in sc.get("setup", {}).items():
        if su.get("ok"):
            L.append(f"- setup on {e}: ok, {su.get('seconds')} s")
        else:
            f = su.get("first_failure", {})
            n_bad = sum(1 for s in su.get("statements", []) if not s["ok"])
            L.append(f"- setup on {e}: **unsupported** — first failing statement "
                     f"(of {n_bad} failing): `{short(f.get('sql'), 200)}`\n\n  ```\n  {f.get('error')}\n  ```")
    L.append("")
    obs = [r for r in sc.get("runs", []) if r.get("observe") and r["engine"] == "pg"]
    if obs:
        L.append("<details><summary>PostgreSQL observations after each run</summary>\n")
        for r in obs:
            L.append(f"**{r['variant']}, {r['clients']} clients**\n\n```")
            for o in r["observe"]:
                L.append(f"=> {o['sql']}")
                L.append(o["output"] if o["output"] is not None else f"ERROR: {o['error']}")
            L.append("```\n")
        L.append("</details>\n")
    ex = [(e, s) for e, ss in sc.get("steps", {}).items() for s in ss if s.get("explain")]
    if ex:
        L.append("<details><summary>EXPLAIN ANALYZE</summary>\n")
        for e, s in ex:
            x = s["explain"]
            L.append(f"**{e}: {s['name']}**\n\n```\n{x['output'] if x['ok'] else 'ERROR: ' + str(x['error'])}\n```\n")
        L.append("</details>\n")
    return L
