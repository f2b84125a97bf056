"""Is each training miniature's AU what this disk allows? Measured AU against the AU fio predicts.

Issue 37 asks that the README-style commands (docs/v3.md) -- the retinanet b200 and unet3d b200
miniatures under v3.0 -- each run in under 5 minutes, never OOM-killed, "with AU within 10 points
of the unet3d h100 miniature's on the same disk". The three miniatures make different demands on
the disk, so their AUs can only agree where the disk feeds all of them. Per case this script runs

    suite run --workload W --accelerator-type A --accelerators 1 --ruleset R --results-dir <case>/R

with cwd <workdir>/<case> and no --data-dir, exactly as a user would (the run sizes and generates
the miniature under ./results/data, drops the cache before each run and runs in its memory
cgroup), then drops the cache and reads the same dataset files with

    fio --rw=read --bs=1M --direct=1 --ioengine=libaio --iodepth=16 --readonly     (--fio-bs-kib)

in read_threads jobs, the files dealt out among them so each is read once, as one epoch reads them
(the median of 3 such reads; --bs is the smallest file's size in 4 KiB pages where a file is under
1 MiB, retinanet's JPEGs: fio reads nothing of a file smaller than its block). The demand per
accelerator is batch x mean record bytes / computation_time; the AU the disk allows is
min(100, 100 x fio rate / demand). It prints per case the measured AU (median and range of the
measured runs, warm-up left out), the predicted AU and their difference (target within 10 points),
the wall time of the whole command (target < 300 s), OOM kills, the runner's read rate (bytes read
/ epoch time) and the share of those bytes fetched from storage (ranks_storage_read_bytes); then
the issue's literal figure, each case's median AU minus unet3d h100's. A shared virtual disk's rate
swings from one minute to the next, so each case also says its runs' own read rates over the
demand, which AU follows run by run. Each case's dataset is deleted after its fio (a unet3d
miniature is ~5 GiB).

    python benchmarks/miniature_au.py [--workdir /tmp/suite-bench-miniau] [--cases retinanet-b200 ...] [--json FILE]
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

# label -> (workload, accelerator, ruleset); v2.0 for unet3d h100: there is no v3.0 h100 config
CASES = {"retinanet-b200": ("retinanet", "b200", "v3.0"),
         "unet3d-b200": ("unet3d", "b200", "v3.0"),
         "unet3d-h100": ("unet3d", "h100", "v2.0")}
REFERENCE = "unet3d-h100"
WALL_TARGET_S = 300
AU_TARGET_PP = 10
FIO_REPEATS = 3        # a shared virtual disk swings (1.1-2.0 GB/s minute to minute): the median of 3 reads


def drop_caches() -> None:
    subprocess.run(["sync"], check=True)
    Path("/proc/sys/vm/drop_caches").write_text("3\n")


def suite_run(case_dir: Path, workload: str, accel: str, ruleset: str) -> tuple[int, float, str]:
    """The user's command from the case's directory: (exit code, wall s, its output)."""
    shutil.rmtree(case_dir, ignore_errors=True)
    case_dir.mkdir(parents=True)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    argv = [sys.executable, "-m", "suite", "run", "--workload", workload, "--accelerator-type", accel,
            "--accelerators", "1", "--ruleset", ruleset, "--results-dir", str(case_dir / ruleset)]
    t0 = time.monotonic()
    proc = subprocess.run(argv, cwd=case_dir, env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    out = proc.stdout + proc.stderr
    (case_dir / "suite-run.log").write_text(out)
    return proc.returncode, wall, out


def run_docs(results_dir: Path) -> list[dict]:
    """Every run's results.json, in order, through run_set.json's paths."""
    run_set = results_dir / "run_set.json"
    if not run_set.exists():
        raise SystemExit(f"{run_set}: missing: the run wrote no run set (see {results_dir.parent}/suite-run.log)")
    paths = [results_dir / r["path"] for r in json.loads(run_set.read_text())["runs"]]
    return [dict(json.loads(p.read_text()), _steps=reading(p.parent / "steps" / "rank-0.json")) for p in paths]


def reading(steps_json: Path) -> dict | None:
    """Rank 0's epochs, medians: the rate it read at until its last batch was ready (bytes / that span) and
    how many of the epoch's n batches' worth it had read when step 1's batch was ready (the reading that AU,
    leaving step 1 out, does not count). With these, fio's AU x (rate / fio) x (n - 1) / (n - first) is the
    measured AU (by construction): the two factors say why measured and predicted differ."""
    if not steps_json.exists():
        return None
    rates, firsts, steps = [], [], []
    for e in json.loads(steps_json.read_text())["epochs"]:
        n, ends, comp = len(e["step_compute_s"]), e["step_end_s"], e["step_compute_s"]
        span_s = ends[-1] - comp[-1] - e["start_s"]     # the last batch was ready by then
        if n < 2 or span_s <= 0:
            continue
        rates.append(e["bytes_read"] / span_s / 1e6)
        firsts.append(n * (ends[0] - comp[0] - e["start_s"]) / span_s)
        steps.append(n)
    if not rates:
        return None
    return {"reading_mb_s": statistics.median(rates), "first_batches": statistics.median(firsts),
            "steps": statistics.median(steps)}


def demand_mb_s(doc: dict) -> tuple[float, int, dict]:
    """(batch x mean record bytes / computation_time in MB/s per accelerator, read_threads, the terms)."""
    from suite.training import workloads

    wl = workloads.resolve(doc["workload"], doc["accelerator"], doc.get("params") or {})
    ds = doc["dataset"]
    record_b = ds["total_bytes"] / (ds["num_files_train"] * ds["num_samples_per_file"])
    terms = {"batch": wl.batch_size, "mean_record_bytes": record_b, "computation_time_s": wl.computation_time_s}
    return wl.batch_size * record_b / wl.computation_time_s / 1e6, wl.read_threads, terms


def fio_block_bytes(train_dir: Path, block_b: int) -> int:
    """--fio-bs (1 MiB), or the smallest file's size in whole 4 KiB pages where that is less (fio reads nothing
    of a file smaller than --bs: retinanet's 315 KiB JPEGs are read in one O_DIRECT request each, less the tail)."""
    smallest = min(p.stat().st_size for p in train_dir.rglob("*") if p.is_file())
    return min(block_b, max(4096, smallest // 4096 * 4096))


def fio_mb_s(train_dir: Path, jobs: int, block_b: int) -> float:
    """fio's O_DIRECT sequential read of the dataset's files, cache dropped first; MB/s (1e6). The files are
    dealt out to the jobs (job j: files j, j + jobs, ...), so each is read once, as one epoch's threads do;
    --opendir with --numjobs would have every job read every file, in step with the others."""
    drop_caches()
    names = sorted(p.relative_to(train_dir).as_posix().replace(":", "\\:") for p in train_dir.rglob("*") if p.is_file())
    argv = ["fio", f"--directory={train_dir}", "--rw=read", f"--bs={block_b}", "--direct=1", "--ioengine=libaio",
            "--iodepth=16", "--readonly", "--group_reporting", "--output-format=json"]
    for j in range(jobs):
        argv += [f"--name=reader{j}", f"--filename={':'.join(names[j::jobs])}"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True)
    read = json.loads(out.stdout[out.stdout.index("{"):])["jobs"][0]["read"]
    if not read["io_bytes"]:
        raise SystemExit(f"fio read nothing of {train_dir}: {out.stderr.strip()}")
    return read["bw_bytes"] / 1e6


def run_row(doc: dict) -> dict:
    """One run's figures from its results.json."""
    metric, enf = doc.get("metric") or {}, doc.get("enforcement") or {}
    epoch_s = sum(e["duration_s"] for e in doc.get("epochs") or [])
    storage = (enf.get("memory_budget") or {}).get("ranks_storage_read_bytes") or []
    storage_b = sum(b for b in storage if isinstance(b, int))
    bytes_read = metric.get("bytes_read") or 0
    return {"run_index": doc["run_index"], "warmup": doc["warmup"], "status": doc["status"],
            "au_pct": metric.get("train_au_mean_percentage"), "reading": doc["_steps"], "bytes_read": bytes_read,
            "read_mb_s": bytes_read / epoch_s / 1e6 if epoch_s else None,
            "storage_share_pct": 100 * storage_b / bytes_read if bytes_read and storage else None,
            "oom_kills": (enf.get("memory_limit") or {}).get("oom_kills")}


def measure(work: Path, label: str, fio_bs: int) -> dict:
    workload, accel, ruleset = CASES[label]
    case_dir = work / label
    load0 = os.getloadavg()[0]
    rc, wall, out = suite_run(case_dir, workload, accel, ruleset)
    docs = run_docs(case_dir / ruleset)
    runs = [run_row(d) for d in docs]
    demand, threads, terms = demand_mb_s(docs[0])
    data_dir = Path(docs[0]["dataset"]["data_dir"])
    data_dir = data_dir if data_dir.is_absolute() else case_dir / data_dir
    try:
        block_b = fio_block_bytes(data_dir / "train", fio_bs)
        fios = [fio_mb_s(data_dir / "train", threads, block_b) for _ in range(FIO_REPEATS)]
    finally:
        shutil.rmtree(case_dir / "results" / "data", ignore_errors=True)     # ~5.5 GB for unet3d
    fio = statistics.median(fios)
    aus = [r["au_pct"] for r in runs if not r["warmup"] and r["status"] == "complete" and r["au_pct"] is not None]
    read = [r["reading"] for r in runs if not r["warmup"] and r["reading"]]
    gen = re.search(r"generated in ([\d.]+) s", out)
    return {"case": label, "workload": workload, "accelerator": accel, "ruleset": ruleset, "exit_code": rc,
            "wall_s": wall, "datagen_s": float(gen.group(1)) if gen else None, "runs": runs,
            "warmup_runs": [r["run_index"] for r in runs if r["warmup"]],
            "oom_kills": sum(r["oom_kills"] or 0 for r in runs), "demand_mb_s": demand, "demand_terms": terms,
            "read_threads": threads, "fio_mb_s": fio, "fio_runs_mb_s": fios, "fio_block_bytes": block_b,
            "predicted_au_pct": min(100.0, 100 * fio / demand),
            "au_median_pct": statistics.median(aus) if aus else None,
            "au_range_pct": [min(aus), max(aus)] if aus else None,
            "reading_mb_s": statistics.median(x["reading_mb_s"] for x in read) if read else None,
            "first_batches": statistics.median(x["first_batches"] for x in read) if read else None,
            "steps_per_epoch": statistics.median(x["steps"] for x in read) if read else None,
            "data_dir": str(data_dir), "data_bytes": docs[0]["dataset"]["total_bytes"],
            "load_average": [load0, os.getloadavg()[0]]}


def _fmt(x, spec=".1f", none="-") -> str:
    return none if x is None else format(x, spec)


def report(rows: list[dict]) -> None:
    print(f"\n{'case':15s} {'exit':>4s} {'wall s':>7s} {'gen s':>6s} {'OOM':>3s} {'demand MB/s':>11s} {'fio MB/s':>8s} "
          f"{'predicted AU':>12s} {'measured AU (range)':>22s} {'|diff|':>6s} {'read MB/s':>15s} {'from disk':>10s}")
    for r in rows:
        m = [x for x in r["runs"] if not x["warmup"]]
        rates = [x["read_mb_s"] for x in m if x["read_mb_s"]]
        shares = [x["storage_share_pct"] for x in m if x["storage_share_pct"] is not None]
        lo, hi = r["au_range_pct"] or (None, None)
        diff = None if r["au_median_pct"] is None else abs(r["au_median_pct"] - r["predicted_au_pct"])
        print(f"{r['case']:15s} {r['exit_code']:4d} {r['wall_s']:7.0f} {_fmt(r['datagen_s'], '.0f'):>6s} {r['oom_kills']:3d} "
              f"{r['demand_mb_s']:11.0f} {r['fio_mb_s']:8.0f} {r['predicted_au_pct']:11.1f}% "
              f"{_fmt(r['au_median_pct']):>7s}% ({_fmt(lo)}-{_fmt(hi)}) {_fmt(diff):>6s} "
              f"{(f'{min(rates):.0f}-{max(rates):.0f}' if rates else '-'):>15s} "
              f"{(f'{min(shares):.0f}-{max(shares):.0f}%' if shares else '-'):>10s}")
        print(f"{'':15s} runs {len(r['runs'])} (warm-up {r['warmup_runs'] or 'none'}), fio {r['read_threads']} jobs (read_threads) "
              f"of {r['fio_block_bytes'] // 1024} KiB reads, {len(r['fio_runs_mb_s'])} reads "
              f"{min(r['fio_runs_mb_s']):.0f}-{max(r['fio_runs_mb_s']):.0f} MB/s, "
              f"{r['data_bytes'] / 1e9:.2f} GB dataset, load average {r['load_average'][0]:.1f} -> {r['load_average'][1]:.1f}; "
              f"targets: wall < {WALL_TARGET_S} s {'ok' if r['wall_s'] < WALL_TARGET_S else 'MISSED'}, "
              f"|measured - predicted| <= {AU_TARGET_PP} {'ok' if diff is not None and diff <= AU_TARGET_PP else 'MISSED'}, "
              f"no OOM {'ok' if not r['oom_kills'] else 'MISSED'}")
        implied = [100 * x / r["demand_mb_s"] for x in rates]
        if implied:
            print(f"{'':15s} the runs' own read rates over the demand: {min(implied):.1f}-{max(implied):.1f}%")
        if r["reading_mb_s"] and r["predicted_au_pct"] < 100:     # disk-bound: the reading decides AU
            n, first = r["steps_per_epoch"], r["first_batches"]
            f_rate, f_first = r["reading_mb_s"] / r["fio_mb_s"], (n - 1) / (n - first)
            print(f"{'':15s} why measured and predicted differ: while reading, the runs read {r['reading_mb_s']:.0f} MB/s "
                  f"(x{f_rate:.2f} fio's); step 1, which AU leaves out, waited for {first:.2f} of the epoch's {n:g} "
                  f"batches (x{f_first:.2f}); predicted x both = {min(100.0, r['predicted_au_pct'] * f_rate * f_first):.1f}%")
    ref = next((r for r in rows if r["case"] == REFERENCE and r["au_median_pct"] is not None), None)
    if ref is None:
        return
    print(f"\nissue 37's figure, median AU minus {REFERENCE}'s ({ref['au_median_pct']:.1f}%):")
    for r in rows:
        if r is not ref and r["au_median_pct"] is not None:
            print(f"  {r['case']}: {r['au_median_pct'] - ref['au_median_pct']:+.1f} points "
                  f"(predicted {r['predicted_au_pct'] - ref['predicted_au_pct']:+.1f})")
    print("  This difference can only be small on a disk that feeds both demands; where one miniature needs "
          "more than the disk reads, its AU is the disk's rate over its demand, not a defect of the run.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", default="/tmp/suite-bench-miniau")
    ap.add_argument("--cases", nargs="+", choices=list(CASES), default=list(CASES))
    ap.add_argument("--json", metavar="FILE", help="dump the numbers as JSON")
    ap.add_argument("--fio-bs-kib", type=int, default=1024, metavar="KIB",
                    help="fio's block size (default 1024 KiB; the runner reads unet3d in 4096 KiB requests with "
                         "16 MiB of readahead, and this virtio disk gives 4 MiB requests 10-20%% more than 1 MiB)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("miniature_au.py: needs root (the cache drop before fio, as `suite run` does its own)")
    work = Path(args.workdir)
    print(f"host: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start; workdir {work}")
    rows = []
    for label in args.cases:
        print(f"{label}: suite run {' '.join(CASES[label])} ...", flush=True)
        rows.append(measure(work, label, args.fio_bs_kib * 1024))
        print(f"{label}: exit {rows[-1]['exit_code']} in {rows[-1]['wall_s']:.0f} s, AU median "
              f"{_fmt(rows[-1]['au_median_pct'])}%, fio {rows[-1]['fio_mb_s']:.0f} MB/s", flush=True)
    report(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
