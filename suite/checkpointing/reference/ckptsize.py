"""A published v3.0 checkpointing leaf's checkpoint size against the model's layout (issue 36, round three).

What the leaf claims (summary.json `metric.checkpoint_size_GB`) and what DLIO's rank 0 recorded per
checkpoint (`0_per_epoch_stats.json`: each save_/load_ckpt<k>'s throughput x duration; DLIO's rank 0
reports the whole checkpoint over its own duration) are held to the bytes the model writes: the
round's `checkpoint_size_bytes` (rules/v3.0/tree/checkpointing.yaml; the reference's Megatron-DeepSpeed
layout at the closed process count, as suite.checkpointing.model lays it out; tests pin the two equal).
Subset mode (8B only, guidelines 4.3.5): each of the N ranks writes its 1/8 of the ZeRO-3 layout, so
N/8 of it. GiB throughout: DLIO's "GB" are 2^30 bytes, so the same size in decimal GB (7.4 % more)
is a mismatch.

Tolerance: REL_TOLERANCE of the expected size. An open run lays the model over more (or fewer) data-
parallel ranks than the closed count, and each rank's optimizer shard carries its own 15 x hidden fp32
tail: at up to 8x the closed process count the checkpoint grows by at most 0.07 % (1T at 8,192
ranks); DLIO prints per-checkpoint durations to the microsecond (a relative 1e-6 of its shortest).
0.5 % holds both, and is far below GB-vs-GiB (7.4 %) or any forged multiple.

Our own leaves (they keep run-1/ beside: each rank's record is its own shards, not the whole) are held
to their per-rank layout by the checkpointing kind; here only their claimed size is.
"""

from __future__ import annotations

import math
from pathlib import Path

from suite import files
from suite.errors import ResultError
from suite.rules.ops import Item

GIB = 1 << 30
REL_TOLERANCE = 5e-3
CKPT_PREFIXES = ("save_ckpt", "load_ckpt")


def expected_gib(model: str, procs, subset: bool, params: dict) -> float | None:
    """The checkpoint the model's layout writes, in GiB (None: a model the round does not size)."""
    size = (params.get("checkpoint_size_bytes") or {}).get(model)
    closed = (params.get("checkpoint_closed_processes") or {}).get(model)
    if not isinstance(size, int) or size <= 0:
        return None
    if subset and isinstance(procs, int) and isinstance(closed, int) and 0 < procs < closed:
        size = size * procs // closed
    return size / GIB


def _off(got, want: float) -> bool:
    number = isinstance(got, (int, float)) and not isinstance(got, bool) and math.isfinite(got)
    return not number or not math.isclose(got, want, rel_tol=REL_TOLERANCE, abs_tol=0.0)


def items(leaves: list, model: str, procs, subset: bool, params: dict) -> list[Item]:
    """Each leaf's claimed size and rank 0's recorded bytes per checkpoint against the layout."""
    want = expected_gib(model, procs, subset, params)
    if want is None:
        return []
    note = f"the {model} layout's bytes (suite.checkpointing.model), in GiB (DLIO's 'GB' are 2^30 bytes)"
    out = []
    for x in leaves:
        if x.summary is None:
            continue
        claimed = x.summary.metric.get("checkpoint_size_GB")
        if _off(claimed, want):
            out.append(Item(claimed, x.path / "summary.json", "metric.checkpoint_size_GB", expected=want,
                            expected_given=True, note=note))
        if not (x.path / "run-1").is_dir():
            out += _recorded(x.path, want, note)
    return out


def _recorded(leaf: Path, want: float, note: str) -> list[Item]:
    p = leaf / "0_per_epoch_stats.json"
    if not p.is_file():
        return []
    try:
        doc = files.load_json(p, error=ResultError, root=leaf)
    except ResultError as exc:
        return [Item(str(exc)[:200], p, "1", expected="rank 0's per-checkpoint records", expected_given=True)]
    from suite.checkpointing.dlio_ckpt import checkpoint_bytes

    return [Item(got, p, f"1.{key}.throughput x duration", expected=want, expected_given=True, note=note)
            for key, got in checkpoint_bytes(doc, lambda k: k.startswith(CKPT_PREFIXES)) if _off(got, want)]
