"""The published storage numbers, as pure functions (no I/O).

The runner computes them, the checker recomputes them from raw data, `suite metrics`
and `suite report` aggregate them: all through these functions, so they cannot drift.

Definitions (DLIO / MLPerf Storage):
- AU of an epoch = simulated compute time / epoch wall time, both with the first step
  excluded, as a percentage.
- a run's AU and throughput = population mean and stdev over its epochs;
- "MB/s" as DLIO labels it = samples/s x record_length / 1024^2 (it is MiB/s);
- a benchmark's overall numbers = population mean and stdev over its runs' means.
"""

import math
from statistics import fmean, pstdev

MIB = 1024**2

# The DLIO metric keys (summary.json's `metric` block, mlperf_storage_report.json): the one place
# they are spelt. DLIO's "MB" is MiB (samples/s x record_length / 1024^2).
AU_PER_EPOCH = "train_au_percentage"
AU_MEAN = "train_au_mean_percentage"
AU_STDEV = "train_au_stdev_percentage"
AU_MEETS = "train_au_meet_expectation"
SAMPLES = "train_throughput_samples_per_second"          # per epoch (summary.json), per run (report)
SAMPLES_MEAN = "train_throughput_mean_samples_per_second"
SAMPLES_STDEV = "train_throughput_stdev_samples_per_second"
IO_MEAN = "train_io_mean_MB_per_second"
IO_STDEV = "train_io_stdev_MB_per_second"
REPORT_MB = "train_throughput_MB_per_second"             # per run (report)
REPORT_MB_MEAN = "train_throughput_mean_MB_per_second"
REPORT_MB_STDEV = "train_throughput_stdev_MB_per_second"
NUM_RUNS = "num_benchmark_runs"
NUM_ACCELERATORS = "train_num_accelerators"              # a string in the report, as report.py writes it
UNITS = {AU_PER_EPOCH: "%", AU_MEAN: "%", AU_STDEV: "%", AU_MEETS: "success|fail",
         SAMPLES: "samples/s", SAMPLES_MEAN: "samples/s", SAMPLES_STDEV: "samples/s",
         IO_MEAN: "MiB/s", IO_STDEV: "MiB/s", REPORT_MB: "MiB/s", REPORT_MB_MEAN: "MiB/s",
         REPORT_MB_STDEV: "MiB/s", NUM_RUNS: "runs", NUM_ACCELERATORS: "accelerators"}
REPORT_RUN_KEYS = ("model", "accelerator", NUM_ACCELERATORS, "num_files_train", "num_samples_per_file")


def mean_pstdev(values) -> tuple[float, float]:
    """Population mean and standard deviation, as DLIO and the report tool use."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean_pstdev of no values")
    if len(values) == 1:
        return values[0], 0.0
    if not all(math.isfinite(v) for v in values):
        return math.nan, math.nan
    big = max(abs(v) for v in values)
    if big > 1e300:         # fsum overflows past the largest float: scale by a power of two (exact)
        scale = math.ldexp(1.0, -math.frexp(big)[1])
        mean, std = mean_pstdev([v * scale for v in values])
        return mean / scale, std / scale
    return fmean(values), pstdev(values)


def au_percentage(compute_s: float, wall_s: float) -> float:
    """Accelerator utilisation in percent; 0 when no time elapsed."""
    if wall_s <= 0:
        return 0.0
    return 100.0 * compute_s / wall_s


def epoch_au_from_steps(step_starts_s, step_ends_s, step_compute_s) -> float:
    """AU of one rank's epoch from its per-step timestamps, first step excluded.

    step_starts_s[i]/step_ends_s[i] bracket step i (data wait + compute + barrier);
    AU = sum(compute of steps 1..n-1) / (end of last step - end of step 0).
    With a single step there is nothing left after the exclusion: AU is that step's own ratio.
    """
    n = len(step_compute_s)
    if n == 0:
        return 0.0
    if n == 1:
        return au_percentage(step_compute_s[0], step_ends_s[0] - step_starts_s[0])
    return au_percentage(math.fsum(step_compute_s[1:]), step_ends_s[-1] - step_ends_s[0])


def mib_per_second(samples_per_second: float, record_length_bytes: float) -> float:
    """DLIO's "MB/s": samples/s x record length / 1024^2."""
    return samples_per_second * record_length_bytes / MIB


def run_metric(au_percentages, throughputs_samples_s, record_length_bytes: float, au_threshold: float) -> dict:
    """DLIO summary.json's `metric` block from per-epoch AU (%) and samples/s."""
    au_mean, au_std = mean_pstdev(au_percentages)
    tp_mean, tp_std = mean_pstdev(throughputs_samples_s)
    return {
        AU_PER_EPOCH: [float(a) for a in au_percentages],
        AU_MEAN: au_mean,
        AU_MEETS: "success" if au_mean >= 100.0 * au_threshold else "fail",
        AU_STDEV: au_std,
        SAMPLES: [float(t) for t in throughputs_samples_s],
        SAMPLES_MEAN: tp_mean,
        SAMPLES_STDEV: tp_std,
        IO_MEAN: mib_per_second(tp_mean, record_length_bytes),
        IO_STDEV: mib_per_second(tp_std, record_length_bytes),
    }


def overall(run_samples_per_s, run_mb_per_s) -> dict:
    """mlperf_storage_report.json's `overall` numbers from the runs' means."""
    tp_mean, tp_std = mean_pstdev(run_samples_per_s)
    mb_mean, mb_std = mean_pstdev(run_mb_per_s)
    return {
        NUM_RUNS: len(list(run_samples_per_s)),
        SAMPLES_MEAN: tp_mean,
        SAMPLES_STDEV: tp_std,
        REPORT_MB_MEAN: mb_mean,
        REPORT_MB_STDEV: mb_std,
    }


def storage_report(info: dict, runs: dict) -> dict:
    """mlperf_storage_report.json in MLPerf Storage v1.0 report.py's shape: `runs` maps a run's
    name to its (samples/s, MiB/s); `info` (model, accelerator, train_num_accelerators as a
    string, num_files_train, num_samples_per_file, ...) goes into `overall`, and its
    REPORT_RUN_KEYS into every run. The one builder: suite run, suite check and the tests use it."""
    per_run = {k: info[k] for k in REPORT_RUN_KEYS if k in info}
    return {
        "overall": {**info, **overall([tp for tp, _ in runs.values()], [mb for _, mb in runs.values()])},
        "runs": {name: {SAMPLES: tp, REPORT_MB: mb, **per_run} for name, (tp, mb) in runs.items()},
    }


def check_headline(aggregate: dict) -> str:
    """A benchmark's numbers in one line of `suite check`'s report (a figure not there: "-")."""
    from suite.numbers import is_number

    o = aggregate["overall"]
    fixed = lambda x: f"{x:.4f}" if is_number(x) else "-"   # noqa: E731
    return (f"{o[NUM_RUNS]} runs x {o[NUM_ACCELERATORS]} accelerators: {fixed(o[SAMPLES_MEAN])} "
            f"({fixed(o[SAMPLES_STDEV])}) samples/s, {fixed(o[REPORT_MB_MEAN])} ({fixed(o[REPORT_MB_STDEV])}) MB/s")


def metric_block(num_accelerators: int, metric: dict) -> str:
    """The [METRIC] block exactly as DLIO prints it at the end of a run."""
    return "\n".join([
        f"[METRIC] Number of Simulated Accelerators: {num_accelerators}",
        f"[METRIC] Training Accelerator Utilization [AU] (%): "
        f"{metric[AU_MEAN]:.4f} ({metric[AU_STDEV]:.4f})",
        f"[METRIC] Training Throughput (samples/second): "
        f"{metric[SAMPLES_MEAN]:.4f} ({metric[SAMPLES_STDEV]:.4f})",
        f"[METRIC] Training I/O Throughput (MB/second): "
        f"{metric[IO_MEAN]:.4f} ({metric[IO_STDEV]:.4f})",
        f"[METRIC] {AU_MEETS}: {metric[AU_MEETS]}",
    ])


def epoch_throughput_from_steps(step_starts_s, step_ends_s, samples: int) -> float:
    """One rank's samples/s in an epoch as DLIO v1.0 counts it (statscounter.compute_metrics_train):
    every sample of the epoch, the first step included, over the epoch's wall time
    (start of step 0 to end of the last step)."""
    if not step_ends_s:
        return 0.0
    wall = step_ends_s[-1] - step_starts_s[0]
    return samples / wall if wall > 0 else 0.0


def epoch_from_ranks(rank_epochs) -> tuple[float, float]:
    """An epoch's (AU %, samples/s) over all ranks, as DLIO reduces them: the ranks' AU is
    averaged, their throughput summed. Each item is a dict (or object) with step_start_s,
    step_end_s, step_compute_s and samples, as steps/rank-<r>.json carries them."""
    aus, tps = [], []
    for e in rank_epochs:
        get = e.get if isinstance(e, dict) else lambda k, _e=e: getattr(_e, k)
        aus.append(epoch_au_from_steps(get("step_start_s"), get("step_end_s"), get("step_compute_s")))
        tps.append(epoch_throughput_from_steps(get("step_start_s"), get("step_end_s"), get("samples")))
    if not aus:
        return 0.0, 0.0
    return fmean(aus), math.fsum(tps)
