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


def mean_pstdev(values) -> tuple[float, float]:
    """Population mean and standard deviation, as DLIO and the report tool use."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("mean_pstdev of no values")
    if len(values) == 1:
        return values[0], 0.0
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
        "train_au_percentage": [float(a) for a in au_percentages],
        "train_au_mean_percentage": au_mean,
        "train_au_meet_expectation": "success" if au_mean >= 100.0 * au_threshold else "fail",
        "train_au_stdev_percentage": au_std,
        "train_throughput_samples_per_second": [float(t) for t in throughputs_samples_s],
        "train_throughput_mean_samples_per_second": tp_mean,
        "train_throughput_stdev_samples_per_second": tp_std,
        "train_io_mean_MB_per_second": mib_per_second(tp_mean, record_length_bytes),
        "train_io_stdev_MB_per_second": mib_per_second(tp_std, record_length_bytes),
    }


def overall(run_samples_per_s, run_mb_per_s) -> dict:
    """mlperf_storage_report.json's `overall` numbers from the runs' means."""
    tp_mean, tp_std = mean_pstdev(run_samples_per_s)
    mb_mean, mb_std = mean_pstdev(run_mb_per_s)
    return {
        "num_benchmark_runs": len(list(run_samples_per_s)),
        "train_throughput_mean_samples_per_second": tp_mean,
        "train_throughput_stdev_samples_per_second": tp_std,
        "train_throughput_mean_MB_per_second": mb_mean,
        "train_throughput_stdev_MB_per_second": mb_std,
    }


def metric_block(num_accelerators: int, metric: dict) -> str:
    """The [METRIC] block exactly as DLIO prints it at the end of a run."""
    return "\n".join([
        f"[METRIC] Number of Simulated Accelerators: {num_accelerators}",
        f"[METRIC] Training Accelerator Utilization [AU] (%): "
        f"{metric['train_au_mean_percentage']:.4f} ({metric['train_au_stdev_percentage']:.4f})",
        f"[METRIC] Training Throughput (samples/second): "
        f"{metric['train_throughput_mean_samples_per_second']:.4f} "
        f"({metric['train_throughput_stdev_samples_per_second']:.4f})",
        f"[METRIC] Training I/O Throughput (MB/second): "
        f"{metric['train_io_mean_MB_per_second']:.4f} ({metric['train_io_stdev_MB_per_second']:.4f})",
        f"[METRIC] train_au_meet_expectation: {metric['train_au_meet_expectation']}",
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
