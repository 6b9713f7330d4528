"""Running one scenario on every engine: setup, pgbench runs (alternating engines), SQL steps.

Used by bench/seedbench. Status of a run or step: "ok", "unsupported" (an SQL error: the engine
cannot do this yet; the message is kept verbatim), "failed" (timeout, crash, no transactions).
"""
import glob
import os
import re
import signal
import subprocess
import time

PROGRESS = re.compile(r"^progress: ([\d.]+) s, ([\d.]+) tps, lat ([-\w.]+) ms")


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def machine_info(root, keel_bin):
    mem = "?"
    try:
        with open("/proc/meminfo") as f:
            for ln in f:
                if ln.startswith("MemTotal"):
                    mem = f"{int(ln.split()[1]) / 1048576:.0f} GB"
    except OSError:
        pass
    rev = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return {"cores": os.cpu_count(), "memory": mem, "keel_commit": rev.stdout.strip() or "?",
            "keel_bin": keel_bin, "loadavg_start": loadavg(),
            "pgbench": subprocess.run(["pgbench", "--version"], capture_output=True, text=True).stdout.strip()}


def parse_pgbench(text):
    """Per-second series and totals from `pgbench -P 1 -r` output."""
    secs = []
    for ln in text.splitlines():
        m = PROGRESS.match(ln)
        if m:
            try:
                lat = float(m.group(3))
            except ValueError:  # "-nan" when a second had no transactions
                lat = None
            secs.append({"t": float(m.group(1)), "tps": float(m.group(2)), "lat_ms": lat})
    tot = {}
    for key, pat in [("tps", r"^tps = ([\d.]+)"), ("lat_avg_ms", r"^latency average = ([\d.]+) ms"),
                     ("transactions", r"^number of transactions actually processed: (\d+)"),
                     ("failed", r"^number of failed transactions: (\d+)")]:
        m = re.search(pat, text, re.M)
        if m:
            tot[key] = float(m.group(1))
    m = re.search(r"^statement latencies in milliseconds.*?:\n((?:\s+.*\n?)*)", text, re.M)
    if m:
        tot["statement_latencies"] = m.group(1).rstrip()
    return secs, tot


def p99_from_logs(prefix):
    """99th percentile latency (ms) over the per-transaction logs pgbench -l wrote."""
    lats = []
    for path in glob.glob(prefix + ".*"):
        with open(path) as f:
            for ln in f:
                parts = ln.split()
                if len(parts) >= 3 and parts[2].isdigit():
                    lats.append(int(parts[2]))
    if not lats:
        return None, 0
    lats.sort()
    return round(lats[min(len(lats) - 1, int(0.99 * len(lats)))] / 1000.0, 3), len(lats)


def first_error(err):
    for ln in err.splitlines():
        if "ERROR" in ln or "error:" in ln or "FATAL" in ln:
            return ln.strip()
    return err.strip().splitlines()[-1] if err.strip() else ""


def run_setup(sc, e, params, split_sql, subst, log):
    """Setup statements one by one; keeps going after an error, remembers every failure."""
    res = {"statements": [], "seconds": 0.0}
    if "pgbench_init" in sc:
        cmd = ["pgbench"] + [subst(a, params) for a in sc["pgbench_init"]] + e.conn() + ["postgres"]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=params.get("setup_timeout", 7200))
        dt = time.monotonic() - t0
        st = {"sql": " ".join(cmd[:len(sc["pgbench_init"]) + 1]), "seconds": round(dt, 3),
              "ok": p.returncode == 0}
        if p.returncode != 0:
            st["error"] = first_error(p.stderr) or p.stderr[-500:]
        res["statements"].append(st)
    stmts = []
    if "setup" in sc:
        with open(os.path.join(sc["dir"], sc["setup"])) as f:
            stmts = split_sql(subst(f.read(), params))
    for s in stmts:
        ok, dt, _, err = e.sql([s], timeout=params.get("setup_timeout", 7200))
        st = {"sql": s, "seconds": round(dt, 3), "ok": ok}
        if not ok:
            st["error"] = err
            log(f"   {e.name}: setup statement failed: {s.splitlines()[0][:70]}... -> {err.splitlines()[0][:120]}")
        res["statements"].append(st)
    res["seconds"] = round(sum(s["seconds"] for s in res["statements"]), 2)
    bad = [s for s in res["statements"] if not s["ok"]]
    res["ok"] = not bad
    if bad:
        res["first_failure"] = {"sql": bad[0]["sql"], "error": bad[0]["error"]}
    return res


def run_pgbench(sc, var, clients, e, params, out, tmp, subst, log):
    dur = params["duration"]
    if isinstance(dur, dict):
        dur = dur[var["name"]]
    jobs = params.get("jobs", 2)
    jobs = clients if jobs == "clients" else min(clients, int(jobs))
    r = {"engine": e.name, "variant": var["name"], "clients": clients, "jobs": jobs, "duration": dur}
    for s in var.get("pre", []):
        ok, dt, _, err = e.sql([subst(s, params)])
        r.setdefault("pre", []).append({"sql": s, "seconds": round(dt, 2), "ok": ok, "error": err})
        if not ok:
            r.update(status="unsupported", error=err, failed_sql=s)
            return r
    tag = f"{sc['id']}-{re.sub(r'[^A-Za-z0-9]+', '_', var['name'])}-c{clients}-{e.name}"
    cmd = ["pgbench", "-n", "-r", "-P", "1", "-c", str(clients), "-j", str(jobs), "-T", str(dur)]
    cmd += sc.get("pgbench_args", [])
    prefix = os.path.join(tmp, "txlog", tag)
    os.makedirs(os.path.dirname(prefix), exist_ok=True)
    rate = sc.get("sampling_rate", 1.0)
    cmd += ["-l", "--log-prefix", prefix] + (["--sampling-rate", str(rate)] if rate < 1 else [])
    if "builtin" in var:
        cmd += ["-b", var["builtin"]]
    else:
        script = os.path.join(tmp, f"{tag}.sql")
        with open(os.path.join(sc["dir"], var["script"])) as f, open(script, "w") as g:
            g.write(subst(f.read(), params))
        cmd += ["-f", script]
    cmd += e.conn() + ["postgres"]
    r["command"] = " ".join(cmd[:cmd.index("-h")]).replace(tmp + "/", "")
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, PGCONNECT_TIMEOUT="30"))
    try:
        so, se = p.communicate(timeout=dur + 180)
        timed_out = False
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGINT)
        try:
            so, se = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            so, se = p.communicate()
        timed_out = True
    with open(os.path.join(out, "logs", tag + ".log"), "w") as f:
        f.write("$ " + " ".join(cmd) + "\n" + so + "\n--- stderr\n" + se)
    # pgbench writes progress to stderr, the summary to stdout
    secs, tot = parse_pgbench(se + "\n" + so)
    r["seconds"], r["totals"] = secs, tot
    r["p99_ms"], r["logged_transactions"] = p99_from_logs(prefix)
    r["sampling_rate"] = rate
    for path in glob.glob(prefix + ".*"):
        os.remove(path)
    err = first_error(se)
    if timed_out:
        r.update(status="failed", error=f"pgbench did not finish within {dur + 180} s")
    elif not tot.get("transactions"):
        r.update(status="unsupported" if "ERROR" in se else "failed", error=err or f"pgbench exit {p.returncode}")
    elif p.returncode != 0 or tot.get("failed"):
        r.update(status="partial", error=err or f"pgbench exit {p.returncode}")
    else:
        r["status"] = "ok"
    if sc.get("observe"):
        r["observe"] = []
        for q in sc["observe"]:
            ok, _, o, qerr = e.sql([q], timeout=600)
            r["observe"].append({"sql": q, "output": o.rstrip() if ok else None, "error": qerr})
    return r


def run_steps(sc, e, params, subst, log):
    """A non-pgbench scenario (s004): time each step; capture EXPLAIN ANALYZE where given."""
    steps = []
    for st in sc["steps"]:
        stmts = [subst(s, params) for s in st["sql"]]
        ok, dt, _, err = e.sql(stmts, timeout=params.get("step_timeout", 3600))
        r = {"engine": e.name, "name": st["name"], "sql": stmts, "seconds": round(dt, 3),
             "status": "ok" if ok else ("failed" if err and err.startswith("timeout") else "unsupported"),
             "error": err}
        log(f"   {e.name}: {st['name']}: " + (f"{dt:.2f} s" if ok else f"{r['status']}: {err.splitlines()[0][:100]}"))
        if ok and st.get("explain"):
            eok, _, eo, eerr = e.sql([subst(st["explain"], params)], timeout=params.get("step_timeout", 3600))
            r["explain"] = {"sql": subst(st["explain"], params), "ok": eok,
                            "output": eo.rstrip() if eok else None, "error": eerr}
            m = re.search(r"Execution Time: ([\d.]+) ms", eo or "")
            if m:
                r["explain_ms"] = float(m.group(1))
        steps.append(r)
        if not e.alive():
            e.ensure_alive(f"{sc['id']} step {st['name']}")
    return steps


def run_scenario(sc, profile, eng, out, tmp, log, split_sql, subst):
    params = dict(sc["profiles"][profile])
    t0 = time.monotonic()
    res = {k: sc.get(k) for k in ("id", "title", "seed", "seed_shows", "kind", "note")}
    res.update(params=params, setup={}, runs=[], steps={}, loadavg_start=loadavg())
    live = {}
    for n, e in eng.items():
        if not e.ensure_alive(f"before {sc['id']}"):
            res["setup"][n] = {"ok": False, "first_failure": {"sql": "(server start)", "error": "server not running"}}
            continue
        live[n] = e
        if sc["kind"] == "pgbench":
            log(f"   setup on {n}")
            res["setup"][n] = run_setup(sc, e, params, split_sql, subst, log)
            log(f"   setup on {n}: {res['setup'][n]['seconds']} s, " +
                ("ok" if res["setup"][n]["ok"] else "with errors"))
    if sc["kind"] == "pgbench":
        order = list(live)
        i = 0
        for var in sc["variants"]:
            for c in params["clients"]:
                for n in (order if i % 2 == 0 else order[::-1]):
                    e = live[n]
                    if not e.ensure_alive(f"{sc['id']} {var['name']} c={c}"):
                        continue
                    r = run_pgbench(sc, var, c, e, params, out, tmp, subst, log)
                    if r["status"] != "ok" and not res["setup"][n].get("ok", True):
                        r["setup_failure"] = res["setup"][n]["first_failure"]
                    s = r.setdefault("seconds", [])
                    mean = sum(x["tps"] for x in s) / len(s) if s else 0
                    log(f"   {n:4} {var['name']:22} c={c:<3} {r['status']:11} " +
                        (f"mean {mean:.0f} tps" if s else (r.get("error") or "")[:100]))
                    res["runs"].append(r)
                    if not e.alive():
                        e.ensure_alive(f"after {sc['id']} {var['name']} c={c}")
                i += 1
    else:
        for n, e in live.items():
            res["steps"][n] = run_steps(sc, e, params, subst, log)
    td = []
    if sc.get("teardown"):
        with open(os.path.join(sc["dir"], sc["teardown"])) as f:
            td = split_sql(f.read())
    td += sc.get("teardown_sql", [])
    for e in live.values():
        if e.alive():
            for s in td:
                e.sql([s], timeout=600)
    res["wall_seconds"] = round(time.monotonic() - t0, 1)
    res["loadavg_end"] = loadavg()
    return res
