"""How long does `suite sweep --find-max --ceiling` take, where does the time go, and do the fast
search, the full search and the code before issue 30's speed-up find the same N?

    python benchmarks/find_max.py --data-dir D [--modes seq,full,before] [--before REV]
                                  [--workload resnet50] [--accelerator-type h100]

D: an open-division dataset (`suite datagen --workload resnet50 --files 40 --data-dir D`). Modes,
each `python -m suite sweep ... --find-max --ceiling --division open` in a subprocess:
  seq     this checkout, the default search (the bracket, galloping, sequential probes);
  full    this checkout with --full-probes (doubling from 1, halving, every epoch: the full search);
  before  the code at --before (default 8d567df, main before this work), from `git archive`.
Per mode: wall time, the confirmed N, the probes (N: AU %, epochs run) and the phases (storage
probes, ceilings, confirmation: runs, rank start-up from plan.json to the ranks' first barrier,
epochs, teardown, and the rest: dataset scan, cache drop, pre-read); the load average. Target
(issue 30): resnet50 h100 on 40 files answers, confirmed, in < 10 minutes with the full search's N.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BEFORE = "8d567df"


def checkout(rev: str, into: Path) -> Path:
    """The tree at `rev` (git archive), for the `before` mode."""
    into.mkdir(parents=True, exist_ok=True)
    arch = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=arch, check=True)
    return into


def run_phases(run_dir: Path) -> dict | None:
    """One run's seconds: start-up (plan.json written -> the ranks' first barrier), epochs, teardown
    (last epoch's end -> results.json written)."""
    try:
        res = json.loads((run_dir / "results.json").read_text())
        plan_t = (run_dir / "plan.json").stat().st_mtime
        end_t = (run_dir / "results.json").stat().st_mtime
        start = json.loads((run_dir / "steps" / "rank-0.json").read_text())["run_start_unix_s"]
    except (OSError, ValueError, KeyError):
        return None
    last = max((e["end_s"] for e in res.get("epochs") or []), default=0.0)
    return {"startup_s": start - plan_t, "epochs_s": last, "teardown_s": end_t - (start + last),
            "epochs": len(res.get("epochs") or [])}


def phases(doc: dict, out: Path) -> str:
    """Per kind (storage probes, ceilings, confirmation): seconds in all and where they went."""
    rows = {}
    for p in doc["points"]:
        for kind in ("storage", "ceiling"):
            if p.get(kind):
                rows.setdefault(kind, []).append(p[kind])
    rows["confirm"] = doc.get("confirmations") or []
    text = []
    for kind, pts in rows.items():
        total = sum(p["duration_s"] for p in pts)
        runs = [r for p in pts for r in (run_phases(d) for d in sorted((out / p["results_dir"]).glob("run-*"))) if r]
        s = {k: sum(r[k] for r in runs) for k in ("startup_s", "epochs_s", "teardown_s")}
        rest = total - sum(s.values())
        text.append(f"  {kind}: {len(pts)} point(s), {len(runs)} run(s), {total:.0f} s = start-up {s['startup_s']:.0f} + "
                    f"epochs {s['epochs_s']:.0f} + teardown {s['teardown_s']:.0f} + the rest {rest:.0f} "
                    f"(scan, cache drop, pre-read, results)")
    return "\n".join(text)


def one(mode: str, args, work: Path) -> str:
    out = work / mode
    code_dir = REPO if mode != "before" else checkout(args.before, work / "before-src")
    argv = [sys.executable, "-m", "suite", "sweep", "--workload", args.workload, "--accelerator-type",
            args.accelerator_type, "--find-max", "--ceiling", "--division", "open", "--data-dir", args.data_dir,
            "--results-dir", str(out)]
    if mode == "full":
        argv.append("--full-probes")
    env = {**os.environ, "PYTHONPATH": str(code_dir)}
    load0, t0 = os.getloadavg()[0], time.time()
    code = subprocess.run(argv, env=env, cwd=str(work), stdout=subprocess.DEVNULL).returncode
    secs = time.time() - t0
    doc = json.loads((out / "sweep.json").read_text())
    ans = doc["max_accelerators"] or {}
    probes = ", ".join(f"{p['accelerators']}:{(p['au_percentage'] or 0):.1f}%/"
                       f"{(run_phases(out / p['results_dir'] / 'run-1') or {}).get('epochs')}ep" for p in doc["probes"])
    return (f"{mode.upper()} ({code_dir}): N={ans.get('accelerators')} "
            f"({'confirmed' if ans.get('confirmed') else 'NOT confirmed'}, AU "
            f"{', '.join(f'{a:.1f}' for a in ans.get('au_per_run') or [])}) in {secs / 60:.1f} min (target < 10); "
            f"exit {code}; probes N:AU/epochs {probes}; load average {load0:.1f} at start, "
            f"{os.getloadavg()[0]:.1f} at end\n" + phases(doc, out))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", required=True)
    ap.add_argument("--workload", default="resnet50")
    ap.add_argument("--accelerator-type", default="h100")
    ap.add_argument("--workdir", default=None, help="default: a new temp dir")
    ap.add_argument("--modes", default="seq,full", help="comma-separated: seq, full, before (default seq,full)")
    ap.add_argument("--before", default=BEFORE, help=f"the `before` mode's commit (default {BEFORE})")
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    if not modes or set(modes) - {"seq", "full", "before"}:
        ap.error(f"--modes: expected seq, full and/or before, got {args.modes}")
    args.data_dir = str(Path(args.data_dir).resolve())
    work = Path(args.workdir or tempfile.mkdtemp(prefix="suite-bench-find-max-"))
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for m in modes:
        print(one(m, args, work), flush=True)
    print(f"host: {os.cpu_count()} CPUs (figures taken on a shared host are noisy); sweeps in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
