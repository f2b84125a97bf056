"""A published v3.0 training run's figures tied to each other and to the run's own parameters (issue 46,
class 1), as rules/v1.0's integrity-epoch-throughput-bound ties ours:

- the bound (`bound`): no epoch's samples/s, nor the run's mean, above what the accelerators can take at
  100 % AU: num_accelerators x reader.batch_size / train.computation_time (summary.json's accelerators, the
  metadata's dlio_config), within `throughput_bound_tolerance` (a fraction);
- the bytes (`bytes_agree`): DLIO's train_io_mean_MB_per_second is the mean samples/s x
  dataset.record_length_bytes in MiB/s (DLIO's "MB" is MiB), within `throughput_io_rel_tolerance`;
- AU against throughput (`au_agree`): each epoch's AU (and the mean) is its samples/s over the 100 %-AU
  bound, within `throughput_au_tolerance_pct` percentage points (DLIO counts the compute of whole steps
  in an epoch whose timer also holds its start-up: 0.07 points on the published Alluxio runs).

Each returns a list of Items (one per disagreement, one when the tie cannot be made: a missing figure or
parameter), so a rule over it (op: empty) is a finding either way, never a skipped rule.
"""

from __future__ import annotations

from statistics import fmean

from suite.training.reference.derive import _number, _param
from suite.rules.ops import Item

MIB = 1 << 20


def _inputs(summary, params: dict | None) -> tuple[float | None, float | None, str]:
    """(samples/s at 100 % AU, record bytes, why not) from the run's accelerators and dlio_config."""
    if params is None:
        return None, None, "no dlio_config (metadata parameters) in the result"
    batch = _number(_param(params, "reader.batch_size"))
    compute = _number(_param(params, "train.computation_time"))
    record = _number(_param(params, "dataset.record_length_bytes"))
    n = summary.num_accelerators
    missing = [k for k, v in (("num_accelerators", n), ("reader.batch_size", batch),
                              ("train.computation_time", compute)) if not v or v <= 0]
    if missing:
        return None, record, f"no {', '.join(missing)} to bound the throughput with"
    return n * batch / compute, record if record and record > 0 else None, ""


def _epochs(summary) -> tuple[list, float | None]:
    m = summary.metric
    per = m.get("train_throughput_samples_per_second")
    per = per if isinstance(per, list) and per else []
    mean = m.get("train_throughput_mean_samples_per_second")
    return per, mean if isinstance(mean, float) else (fmean(per) if per else None)


def bound(summary, params: dict | None, tolerance: float) -> list:
    """Samples/s above the accelerators' 100 %-AU rate."""
    top, _, why = _inputs(summary, params)
    where = summary.path
    if top is None:
        return [Item(f"cannot be computed: {why}", where, "metric.train_throughput_samples_per_second",
                     "samples/s within what the accelerators take at 100 % AU")]
    per, mean = _epochs(summary)
    if mean is None:
        return [Item("absent", where, "metric.train_throughput_mean_samples_per_second", "the run's samples/s")]
    limit = top * (1 + tolerance)
    want = (f"<= {top:.2f} samples/s ({summary.num_accelerators} accelerators x batch / computation_time: "
            f"100 % AU), {tolerance:.0%} tolerance")
    out = [Item(f"{v:.2f}", where, f"metric.train_throughput_samples_per_second[{i}]", want)
           for i, v in enumerate(per) if v > limit]
    if mean > limit:
        out.append(Item(f"{mean:.2f}", where, "metric.train_throughput_mean_samples_per_second", want))
    return out


def bytes_agree(summary, params: dict | None, tolerance: float) -> list:
    """MiB/s against samples/s x the record length."""
    _, record, _ = _inputs(summary, params)
    where = summary.path
    if record is None:
        return [Item("cannot be computed: no dataset.record_length_bytes (metadata parameters)", where,
                     "metric.train_io_mean_MB_per_second", "samples/s x record length")]
    _, mean = _epochs(summary)
    io = summary.metric.get("train_io_mean_MB_per_second")
    if mean is None or not isinstance(io, float):
        return [Item("absent", where, "metric.train_io_mean_MB_per_second, train_throughput_mean_samples_per_second",
                     "the run's MiB/s and samples/s")]
    want = mean * record / MIB
    if abs(io - want) > tolerance * max(want, 1e-9):
        return [Item(f"{io:.2f}", where, "metric.train_io_mean_MB_per_second",
                     f"{want:.2f} (train_throughput_mean_samples_per_second {mean:.3f} x record_length_bytes "
                     f"{record:.0f} / 2^20), {tolerance:.0%} tolerance")]
    return []


def au_agree(summary, params: dict | None, tolerance_pct: float) -> list:
    """Each epoch's AU (and the mean) against its samples/s over the 100 %-AU rate."""
    top, _, why = _inputs(summary, params)
    where = summary.path
    if top is None:
        return [Item(f"cannot be computed: {why}", where, "metric.train_au_percentage",
                     "AU = samples/s over the 100 %-AU rate")]
    per, mean = _epochs(summary)
    au = summary.metric.get("train_au_percentage")
    au = au if isinstance(au, list) else []
    pairs = [(f"metric.train_au_percentage[{i}]", a, t) for i, (a, t) in enumerate(zip(au, per))]
    recorded = summary.metric.get("train_au_mean_percentage")
    if isinstance(recorded, float) and mean is not None:
        pairs.append(("metric.train_au_mean_percentage", recorded, mean))
    if len(au) != len(per):
        return [Item(f"{len(au)} AU figures, {len(per)} samples/s figures", where, "metric.train_au_percentage",
                     "one AU and one samples/s figure per epoch")]
    return [Item(f"{a:.2f}", where, name, f"{100 * t / top:.2f} (samples/s {t:.2f} over {top:.2f} at 100 % AU), "
                 f"within {tolerance_pct} points") for name, a, t in pairs if abs(a - 100 * t / top) > tolerance_pct]
