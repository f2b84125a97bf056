#!/usr/bin/env python3
"""How many simulated b200s flux keeps at AU >= 90 % from the page cache on this host.

    python benchmarks/parquet_scale.py [--ns 1 2 3 4] [--files 24] [--dir DIR] [--samples-per-file 48]

flux on b200 (batch 48, 1.35 s a step, read_threads 8, the five float32 list columns all read and
decoded by suite.training.data.parquet_read as DLIO's ParquetReader decodes them) with its files cut to
--samples-per-file samples (default 48: one b200 batch, 104 MB a file and a row group; flux's own 288
would hold 8 threads x 2 x 623 MB per rank in memory, which a 24 GB host cannot give several ranks).
The dataset is written once by `suite datagen`, read once into the page cache, then for each N one
`suite run --division open --no-cache-drop --runs 1` (a warm-up and one measured run, the page-cache
ceiling before them) whose measured AU, decode share and ceiling AU are printed. History goes to a
scratch store, never the user's. Prints `largest N with AU >= 90%: K`.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from suite.training.data import datagen  # noqa: E402
from suite.training import workloads


def measure(data: Path, out: Path, n: int, spf: int, files: int) -> dict:
    argv = [sys.executable, "-m", "suite", "run", "--workload", "flux", "--accelerator-type", "b200",
            "--accelerators", str(n), "--data-dir", str(data), "--results-dir", str(out), "--division", "open",
            "--no-cache-drop", "--runs", "1", "--param", f"dataset.num_samples_per_file={spf}",
            "--param", f"dataset.num_files_train={files}"]
    env = {**os.environ, "SUITE_HISTORY": str(out.parent / "history.sqlite")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1800, cwd=out.parent)
    runs = sorted(out.rglob("results.json"))
    docs = [json.loads(p.read_text()) for p in runs]
    measured = [d for d in docs if not d.get("warmup") and d.get("metric")]
    if not measured:
        return {"n": n, "au": None, "why": (done.stdout + done.stderr).strip().splitlines()[-3:]}
    d = measured[-1]
    leaf = runs[docs.index(d)].parent
    rss = [json.loads(p.read_text()).get("peak_rss_bytes") or 0 for p in leaf.glob("steps/rank-*.json")]
    return {"rss": max(rss, default=0),"n": n, "au": d["metric"]["train_au_mean_percentage"], "decode": d["reads"]["decode_share_percent"],
            "ceiling": (d.get("ceiling") or {}).get("au_percentage"),
            "steps": d["epochs"][0]["steps"] if d["epochs"] else 0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ns", type=int, nargs="+", default=[1, 2, 3, 4])
    ap.add_argument("--files", type=int, default=24)
    ap.add_argument("--samples-per-file", type=int, default=48)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args(argv)
    spf = args.samples_per_file
    w = workloads.resolve("flux", "b200", {"dataset.num_samples_per_file": spf})
    best = 0
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        data = Path(tmp) / "flux"
        datagen.generate(w, data, args.files, processes=2)
        for p in sorted((data / "train").glob("*.parquet")):
            p.read_bytes()
        print(f"flux b200, {args.files} files x {spf} samples ({args.files * spf * w.record_length_bytes / 1e9:.1f} GB), "
              f"{os.cpu_count()} cores")
        for n in args.ns:
            r = measure(data, Path(tmp) / f"N{n}", n, spf, args.files)
            if r["au"] is None:
                print(f"  N={n}: no measured run: {' / '.join(r['why'])}")
                continue
            print(f"  N={n}: AU {r['au']:.2f}% ({r['steps']} steps), decode {r['decode']:.0f}% of the readers' time, "
                  f"ceiling AU {r['ceiling']:.2f}%, peak rank memory {r['rss'] / 2**30:.2f} GiB")
            if r["au"] >= 90:
                best = max(best, n)
    print(f"largest N with AU >= 90%: {best}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
