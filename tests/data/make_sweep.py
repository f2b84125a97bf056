"""Writes tests/data/sweep/resnet50-h100-tiny/sweep.json: a real `suite sweep --find-max --ceiling`
on a tiny resnet50 dataset (1,000-byte records, 15 ms compute) on this host; sweep.json and each
point's run-<k>/results.json are kept (what `suite report` and `suite sizing` read: the figures are
re-derived from the runs, never taken from sweep.json's claims). Run it to regenerate: the numbers are this host's, so the
report tests assert the page's shape and what sweep.json says, not fixed figures."""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

OUT = Path(__file__).resolve().parent / "sweep" / "resnet50-h100-tiny"
TINY = ["dataset.num_samples_per_file=20", "dataset.record_length=1000", "dataset.record_length_stdev=0",
        "reader.batch_size=8", "train.epochs=3", "train.computation_time=0.015"]


def main():
    from suite.training.data import datagen
    from suite.training import workloads

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        wl = workloads.resolve("resnet50", "h100", workloads.parse_params(TINY[:3]))
        datagen.generate(wl, tmp / "data", 16, processes=1)
        argv = [sys.executable, "-m", "suite", "sweep", "--workload", "resnet50", "--find-max", "--ceiling",
                "--max-accelerators", "8", "--data-dir", str(tmp / "data"), "--results-dir", str(tmp / "sweep"),
                "--division", "open"]
        for p in TINY + [f"checkpoint.checkpoint_folder={tmp / 'ckpt'}"]:
            argv += ["--param", p]
        subprocess.run(argv, check=False, stdout=subprocess.DEVNULL)
        shutil.rmtree(OUT, ignore_errors=True)
        OUT.mkdir(parents=True)
        shutil.copy(tmp / "sweep" / "sweep.json", OUT / "sweep.json")
        for results in sorted((tmp / "sweep").glob("*/run-*/results.json")):
            (OUT / results.parent.relative_to(tmp / "sweep")).mkdir(parents=True, exist_ok=True)
            shutil.copy(results, OUT / results.relative_to(tmp / "sweep"))
    print(f"wrote {OUT / 'sweep.json'}")


if __name__ == "__main__":
    main()
