#!/usr/bin/env python3
"""Side-by-side report of two upstream e2e runs (run.py run ... --out DIR writes DIR/summary.json).

    report.py UPSTREAM_DIR GANTRY_DIR [--markdown FILE] [--json FILE]

Prints (and writes with --markdown) a Markdown report: the counts per scheduler, then every test
whose result differs (with the failure message of the failing side), then the per-test table.
Exit code 0 when every test that passed with upstream also passed with Gantry, 1 otherwise,
2 when a summary is missing or a run did not complete.
"""

import argparse
import json
import os
import sys

STATUS_ORDER = ("passed", "failed", "skipped", "listed")


def load(d):
    p = os.path.join(d, "summary.json")
    if not os.path.exists(p):
        sys.exit(f"no {p}")
    with open(p) as f:
        return json.load(f)


def fmt_secs(s):
    if s is None:
        return "-"
    s = int(s)
    return f"{s // 60} min {s % 60:02d} s"


def short(msg, n=400):
    msg = " ".join((msg or "").split())
    return msg if len(msg) <= n else msg[:n] + " …"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("upstream")
    ap.add_argument("gantry")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    a = ap.parse_args()
    up, ga = load(a.upstream), load(a.gantry)
    if "tests" not in up or "tests" not in ga:
        print("a run did not produce a report: "
              f"upstream error={up.get('error')!r} gantry error={ga.get('error')!r}", file=sys.stderr)
        return 2
    names = sorted(set(up["tests"]) | set(ga["tests"]))
    lines = []
    w = lines.append
    w("| | upstream kube-scheduler v1.37.2 | Gantry |")
    w("|---|---|---|")
    for key, label in (("ran", "ran"), ("passed", "passed"), ("failed", "failed"),
                       ("skipped", "skipped at run time by the test itself"),
                       ("listed", "not run: in the skip list")):
        w(f"| {label} | {up['counts'].get(key, 0)} | {ga['counts'].get(key, 0)} |")
    w(f"| e2e.test wall time | {fmt_secs(up.get('e2e_seconds'))} | {fmt_secs(ga.get('e2e_seconds'))} |")
    w(f"| whole run (cluster, kwok, scheduler, tests, teardown) | {fmt_secs(up.get('total_seconds'))} "
      f"| {fmt_secs(ga.get('total_seconds'))} |")
    w("")
    regress, other = [], []
    for n in names:
        su = up["tests"].get(n, {}).get("status", "-")
        sg = ga["tests"].get(n, {}).get("status", "-")
        if su == sg:
            continue
        (regress if su == "passed" else other).append(n)
    w(f"### Passed with upstream, not with Gantry ({len(regress)})")
    w("")
    for n in regress:
        t = ga["tests"].get(n, {})
        w(f"- **{n}** — Gantry: {t.get('status', 'absent')} ({t.get('seconds', '-')} s) at "
          f"`{t.get('location', '')}`: {short(t.get('message'))}")
    if not regress:
        w("None.")
    w("")
    w(f"### Other differences ({len(other)})")
    w("")
    for n in other:
        tu, tg = up["tests"].get(n, {}), ga["tests"].get(n, {})
        w(f"- **{n}** — upstream: {tu.get('status', 'absent')}"
          f"{': ' + short(tu.get('message'), 250) if tu.get('message') else ''}; "
          f"Gantry: {tg.get('status', 'absent')}"
          f"{': ' + short(tg.get('message'), 250) if tg.get('message') else ''}")
    if not other:
        w("None.")
    w("")
    w("### Every selected test")
    w("")
    w("| test | upstream | Gantry |")
    w("|---|---|---|")
    for n in names:
        tu, tg = up["tests"].get(n, {}), ga["tests"].get(n, {})
        cell = lambda t: (f"{t.get('status', '-')}" + (f" ({t['seconds']} s)" if t.get("status") in ("passed", "failed") else ""))  # noqa: E731
        w(f"| {n.replace('|', '/')} | {cell(tu)} | {cell(tg)} |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"upstream": up["counts"], "gantry": ga["counts"], "regressions": regress,
                       "other_differences": other}, f, indent=1)
    return 1 if regress else 0


if __name__ == "__main__":
    sys.exit(main())
