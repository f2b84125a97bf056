"""TPCx-AI end to end at a scale factor: phase and per-use-case times, generator and load rates.

    python benchmarks/tpcxai.py --scale-factor 1 --streams 2 [--processes P] [--use-cases 1,3,8]
                                [--dir DIR] [--toy] [--launcher exec|fork] [--keep]

Runs the driver (suite/tpcx_ai/driver.py) as `suite run --workload tpcx-ai` does, then prints:
every phase's time, each use case's training / serving (x2) / scoring / mean throughput-job
time and quality, generation rows/s and MB/s, and the load's MB/s (raw CSV bytes / time)
against a plain pyarrow parquet write (+ fsync) of the same tables from memory.
--toy uses the driver tests' toy table group and use cases (tests/tpcx_ai/tpcx_toy.py), for when
the real groups and use cases are not installed.
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def plain_parquet_rate(data_dir: Path, out: Path) -> tuple[float, float]:
    """(seconds, parquet bytes) to write every loaded table again with pq.write_table + fsync."""
    import pyarrow.parquet as pq

    tables = [(p.parent.name, p.stem, pq.read_table(p)) for split in ("training", "serving")
              for p in sorted((data_dir / split).glob("*.parquet"))]
    out.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    nbytes = 0
    for split, name, table in tables:
        path = out / f"{split}-{name}.parquet"
        pq.write_table(table, path)
        with open(path, "rb+") as f:
            os.fsync(f.fileno())
        nbytes += path.stat().st_size
    return time.perf_counter() - start, nbytes


def report(run, base_s: float, base_bytes: int) -> str:
    lines = [f"TPCx-AI SF {run.options.scale_factor:g}, {run.options.streams} streams, "
             f"{run.options.processes} generator processes, launcher {run.options.launcher}: {run.status}"]
    lines += [f"  {p['name']:<11} {p['duration_s'] if p['complete'] else 'incomplete':>10} s" for p in run.phases]
    g = run.generation
    if g:
        lines.append(f"generation: {g['rows']:,} rows, {g['bytes'] / 1e6:.1f} MB in {g['duration_s']:.3f} s: "
                     f"{g['rows_per_s']:,.0f} rows/s, {g['mb_per_s']:.1f} MB/s")
    timed = [ld for ld in run.loads if ld["timed"]]
    raw = sum(ld["raw_bytes"] for ld in timed)
    load_s = sum(ld["duration_s"] for ld in timed)
    if load_s:
        lines.append(f"load (TLD part): {raw / 1e6:.1f} MB raw -> parquet in {load_s:.3f} s = {raw / 1e6 / load_s:.1f} MB/s; "
                     f"plain parquet write of the same tables {base_bytes / 1e6:.1f} MB in {base_s:.3f} s "
                     f"= {raw / 1e6 / base_s:.1f} MB/s of raw (load/plain time {load_s / base_s:.2f}x)")
    lines.append(f"{'uc':<5}{'train_s':>9}{'serve1_s':>9}{'serve2_s':>9}{'score_s':>9}{'tput_s':>9}  quality")
    for n in sorted(run.use_cases):
        t = {}
        for j in run.jobs:
            if j.use_case == n and j.status == "ok":
                t.setdefault(j.phase, []).append(j.duration_s)
        q = run.quality.get(n, {})
        shown = f"{q.get('metric')} {q.get('value'):.4f} {'pass' if q.get('passed') else 'FAIL'}" \
            if q.get("value") is not None else q.get("metric", "-")
        cells = [sum(t[p]) / len(t[p]) if t.get(p) else float("nan")
                 for p in ("training", "serving_1", "serving_2", "scoring", "throughput")]
        lines.append(f"uc{n:02d} " + "".join(f"{c:9.3f}" for c in cells) + f"  {shown}")
    if run.metric:
        m = run.metric
        lines.append(f"AIUCpm@{m['scale_factor']:g} = {m['aiucpm']:.3f} (TLD {m['tld_s']}, TPTT {m['tptt_s']:.3f}, "
                     f"TPST {m['tpst_s']:.3f}, TTT {m['ttt_s']:.3f})")
    lines += [f"note: {r}" for r in run.reasons] + [f"error: {e}" for e in run.errors]
    return "\n".join(lines)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale-factor", type=float, default=1.0)
    p.add_argument("--streams", type=int, default=2)
    p.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    p.add_argument("--use-cases", default=None)
    p.add_argument("--dir", type=Path, default=None, help="work directory (default: a temporary one)")
    p.add_argument("--toy", action="store_true", help="the driver tests' toy group and use cases")
    p.add_argument("--launcher", choices=["exec", "fork"], default="exec")
    p.add_argument("--keep", action="store_true", help="keep the data and results")
    a = p.parse_args()
    from suite.tpcx_ai import driver
    from suite.tpcx_ai import leaf as result
    from suite.tpcx_ai.registry import Registry

    work = a.dir or Path(tempfile.mkdtemp(prefix="tpcxai-bench-"))
    if a.toy:
        sys.path.insert(0, str(ROOT / "tests" / "tpcx_ai"))
        import tpcx_toy
        reg = tpcx_toy.registry(work)
    else:
        reg = Registry()
    ucs = tuple(int(x) for x in a.use_cases.split(",")) if a.use_cases else None
    opts = driver.Options(scale_factor=a.scale_factor, data_dir=work / "data", results_dir=work / "results",
                          streams=a.streams, use_cases=ucs, processes=a.processes, registry=reg, launcher=a.launcher,
                          out=lambda s: print(s, flush=True))
    run = driver.Driver(opts).execute()
    result.write(opts.results_dir, result.to_doc(run))
    base_s, base_bytes = plain_parquet_rate(work / "data", work / "plain")
    print(report(run, base_s, base_bytes))
    if not a.keep and a.dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if run.status == "complete" else 1


if __name__ == "__main__":
    sys.exit(main())
