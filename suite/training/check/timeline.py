"""The step records as evidence that can lie (suite.training.check.rederive uses them): steps.timeline (a step
ending before it starts, steps out of order or overlapping, epochs overlapping or renumbered, an
epoch's start/end not holding its steps), steps.compute_time (each step's compute is the run's
computation_time), steps.samples (at most one batch a step) and, for DLIO trees without steps,
per_epoch.throughput_bound (per_epoch_stats.json's durations bound each epoch's samples/s).
"""

from __future__ import annotations

import math

from suite.layouts.benchdirs import identify, tree as layout
from suite.numbers import finite_list, is_number
from suite.rules.engine import Item
from suite.training import workloads
from suite.training import figures as metrics

TIME_EPS_S = 1e-6        # timestamps are floats written as JSON: equal times may differ by rounding
MEASURED_OVER, MEASURED_OVER_S = 0.35, 0.001   # older records measured the sleep: a loaded host overshoots (27% seen)


def _close(a, b, rel) -> bool:
    return is_number(a) and is_number(b) and abs(a - b) <= rel * max(abs(a), abs(b))


def timeline(host: layout.Host) -> list[Item]:
    """Steps/epochs that cannot have happened as recorded: one item per defect (per rank)."""
    out: list[Item] = []
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        path = base / f"rank-{rank}.json"
        prev_end, prev_no = None, None
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            if not isinstance(ep, dict):
                continue
            st, en, co = (finite_list(ep.get(k)) for k in ("step_start_s", "step_end_s", "step_compute_s"))
            if not (st and en and co) or not (len(st) == len(en) == len(co)):
                continue
            where = f"epochs[{i}]"
            out += _steps_defects(st, en, co, path, where)
            no = ep.get("epoch")
            if prev_no is not None and is_number(no) and no <= prev_no:
                out.append(Item(no, path, f"{where}.epoch", f"an epoch number after {prev_no}", expected_given=True))
            if prev_end is not None and st[0] < prev_end - TIME_EPS_S:
                out.append(Item(st[0], path, f"{where}.step_start_s[0]",
                                f">= {prev_end!r} (the previous epoch's last step end: epochs do not overlap)",
                                expected_given=True))
            for key, ok, want in (("start_s", lambda v: v <= st[0] + TIME_EPS_S, f"<= {st[0]!r} (its first step start)"),
                                  ("end_s", lambda v: v >= en[-1] - TIME_EPS_S, f">= {en[-1]!r} (its last step end)")):
                v = ep.get(key)
                if is_number(v) and not ok(v):
                    out.append(Item(v, path, f"{where}.{key}", want, expected_given=True))
            prev_end, prev_no = en[-1], no if is_number(no) else prev_no
    return out


def _steps_defects(st, en, co, path, where) -> list[Item]:
    out = []
    del co      # compute overlaps the next step's read (prefetch): no bound from one step's bracket
    for j in range(len(st)):
        if en[j] < st[j]:
            out.append(Item(en[j], path, f"{where}.step_end_s[{j}]", f">= {st[j]!r} (the step's start)",
                            expected_given=True))
        if j and st[j] < en[j - 1] - TIME_EPS_S:
            out.append(Item(st[j], path, f"{where}.step_start_s[{j}]",
                            f">= {en[j - 1]!r} (step {j - 1}'s end: steps in order, not overlapping)",
                            expected_given=True))
        if len(out) >= 5:
            break
    return out


EPOCH_BOUND = 1.4     # samples/s x epoch duration / the epoch's samples: 0.999 .. 1.25 in 850 published epochs


def epoch_bound(host: layout.Host) -> list[Item]:
    """Per-epoch samples/s that per_epoch_stats.json's durations cannot hold: an epoch reads the
    dataset once (num_files_train x num_samples_per_file samples), so samples/s x its duration is
    about that many (DLIO's window is a little shorter than the epoch: up to 1.25x seen). The lowest
    level a published DLIO tree has below its per-epoch lists."""
    s = host.summary if isinstance(host.summary, dict) else None
    pe = host.per_epoch if isinstance(host.per_epoch, dict) else None
    m = s.get("metric") if s and isinstance(s.get("metric"), dict) else None
    if not (m and pe and is_number(s.get("num_files_train")) and is_number(s.get("num_samples_per_file", 1))):
        return []
    n = s["num_files_train"] * s.get("num_samples_per_file", 1)
    tps = m.get(metrics.SAMPLES)
    out = []
    for i, tp in enumerate(tps if isinstance(tps, list) else []):
        e = pe.get(str(i + 1))
        try:
            dur = float(str(e.get("duration"))) if isinstance(e, dict) else None
        except ValueError:
            dur = None
        dur = dur + 0.005 if dur is not None else None      # written with 2 decimals: the longest it was
        if n > 0 and dur and dur > 0 and is_number(tp) and math.isfinite(dur) and tp * dur > EPOCH_BOUND * n:
            out.append(Item(tp, host.files.get("summary"), f"metric.{metrics.SAMPLES}[{i}]",
                            f"<= {EPOCH_BOUND * n / dur!r} ({n} samples in epoch {i + 1} of {dur} s "
                            f"(per_epoch_stats.json), x{EPOCH_BOUND} for DLIO's timing window)", expected_given=True))
    return out[:10]


def samples(host: layout.Host, batch: int | None) -> list[Item]:
    """Epochs whose claimed samples could not have been read in their steps (each step reads at most
    one batch, every step but the last a full one): samples/s is samples over wall time."""
    if not batch:
        return []
    out = []
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            if not isinstance(ep, dict) or not isinstance(ep.get("step_start_s"), list) or not is_number(ep.get("samples")):
                continue
            n = len(ep["step_start_s"])
            lo, hi = (n - 1) * batch + 1 if n else 0, n * batch
            if not lo <= ep["samples"] <= hi:
                out.append(Item(ep["samples"], base / f"rank-{rank}.json", f"epochs[{i}].samples",
                                f"{lo}..{hi} ({n} steps of batch {batch})", expected_given=True))
    return out[:10]


def batch_size(b: layout.Benchmark, host: layout.Host) -> int | None:
    """reader.batch_size: the run's override, else its config.yaml, else the workload's."""
    v = identify.overrides_dict(host.overrides).get("reader.batch_size")
    if v is None and isinstance(host.config, dict) and isinstance(host.config.get("reader"), dict):
        v = host.config["reader"].get("batch_size")
    try:
        v = int(str(v)) if v is not None else None
    except ValueError:
        v = None
    if v is None:
        w = workloads.find(b.workload, b.accelerator)
        v = w.batch_size if w else None
    return v if v and v > 0 else None


def computation_time_s(b: layout.Benchmark, host: layout.Host) -> float | None:
    """The run's computation_time per step: its override, else its config.yaml, else the workload's."""
    ov = identify.overrides_dict(host.overrides)
    v = ov.get("train.computation_time")
    if v is None and isinstance(host.config, dict) and isinstance(host.config.get("train"), dict):
        v = host.config["train"].get("computation_time")
    if v is None and isinstance(host.results, dict) and isinstance(host.results.get("params"), dict):
        v = host.results["params"].get("train.computation_time")
    try:
        v = float(v) if v is not None else None
    except (TypeError, ValueError):
        v = None
    if v is None:
        w = workloads.find(b.workload, b.accelerator)
        v = w.computation_time_s if w else None
    return v if v is not None and math.isfinite(v) else None


def compute_time(host: layout.Host, expected: float | None) -> list[Item]:
    """Steps whose recorded compute is not the run's computation_time (one item per rank and epoch)."""
    if expected is None:
        return []
    out = []
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        for i, ep in enumerate(doc.get("epochs") if isinstance(doc.get("epochs"), list) else []):
            co = finite_list(ep.get("step_compute_s")) if isinstance(ep, dict) else None
            if not co:
                continue
            if "step_sleep_s" in ep:      # the configured compute, the measured sleep beside it: exact
                bad = [c for c in co if not _close(c, expected, 1e-6)]
                shown, want = (bad[0] if bad else None), f"{expected!r} s (the run's computation_time; " \
                                                         f"{len(bad)} of {len(co)} steps differ)"
            else:                         # older records: the measured sleep, a little over the configured
                mean = math.fsum(co) / len(co)
                low, high = expected * (1 - 1e-6), expected * (1 + MEASURED_OVER) + MEASURED_OVER_S
                bad = [] if low <= mean <= high and min(co) >= low else [mean]
                shown, want = mean, f"a mean in [{low!r}, {high!r}] s, each step >= {low!r} (the run's " \
                                    f"computation_time {expected!r} s, as measured)"
            if bad:
                out.append(Item(shown, base / f"rank-{rank}.json", f"epochs[{i}].step_compute_s", want,
                                expected_given=True))
    return out


def decode_share(host: layout.Host) -> tuple[float, str] | None:
    """Parquet runs: the reader threads' decode seconds as a percentage of their I/O + decode seconds,
    re-derived from every rank's steps (step_io_s, step_decode_s), and the file that says most of it;
    None where the steps record no reads (other formats, DLIO trees)."""
    io_s = decode_s = 0.0
    worst, worst_share = None, -1.0
    base = host.files.get("rank_steps", host.path / "steps")
    for rank, doc in sorted((host.rank_steps or {}).items()):
        mine_io = mine_dec = 0.0
        for ep in doc.get("epochs") if isinstance(doc.get("epochs"), list) else []:
            if not isinstance(ep, dict):
                continue
            io, dec = finite_list(ep.get("step_io_s")), finite_list(ep.get("step_decode_s"))
            if io and dec and len(io) == len(dec):
                mine_io, mine_dec = mine_io + math.fsum(io), mine_dec + math.fsum(dec)
        if mine_io + mine_dec > 0 and mine_dec / (mine_io + mine_dec) > worst_share:
            worst, worst_share = str(base / f"rank-{rank}.json"), mine_dec / (mine_io + mine_dec)
        io_s, decode_s = io_s + mine_io, decode_s + mine_dec
    if io_s + decode_s <= 0:
        return None
    return 100.0 * decode_s / (io_s + decode_s), worst

