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

The model's bytes are those its leaf records: the metadata's `parameters.model` (DLIO's transformer
block, datatypes and parallelism) laid out at the model's closed process count (suite.checkpointing.model),
which for the four published configurations is the round's table to the byte; a miniature (our scaled-down
models: the workload file's `miniature` block) is held to its own configuration the same way. A recorded
configuration that is neither is a mismatch itself (a smaller model recorded to vouch for a smaller claim),
and the leaf is held to the table; a leaf that records no whole configuration is held to the round's
`checkpoint_size_bytes` by its model's name.

Our own leaves (they keep run-1/ beside: each rank's record is its own shards, not the whole) add each
rank's records against its shards (suite.checkpointing.size, the judge's `more`); here only their claimed
size is.
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


# bounds on a recorded configuration laid out here (it comes from other parties: a layout costs ranks x layers)
MAX_LAYERS = 4096
MAX_WORLD = 8192
MAX_WIDTH = 1 << 24
MAX_WORK = 1 << 20           # ranks x layers per pipeline stage walked (the four models: at most 5,120, 70B)


def _whole(v, top: int) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 < v <= top else None


def config_bytes(config, world) -> int | None:
    """The bytes one checkpoint of a recorded model configuration (a leaf's `parameters.model`) lays out over
    `world` ranks (suite.checkpointing.model); None where the record is not a whole, bounded configuration."""
    from suite.checkpointing import model as layout

    if not isinstance(config, dict) or _whole(world, MAX_WORLD) is None:
        return None
    t, par = config.get("transformer"), config.get("parallelism")
    if not isinstance(t, dict) or not isinstance(par, dict):
        return None
    dims = {k: _whole(t.get(k), MAX_WIDTH) for k in ("hidden_size", "ffn_hidden_size", "num_attention_heads",
                                                     "num_kv_heads", "vocab_size")}
    layers, tp, pp = _whole(config.get("num_layers"), MAX_LAYERS), _whole(par.get("tensor"), MAX_WORLD), \
        _whole(par.get("pipeline"), MAX_WORLD)
    types = (config.get("model_datatype"), config.get("optimizer_datatype"))
    if None in (*dims.values(), layers, tp, pp) or any(x not in layout.DTYPE_BYTES for x in types) \
            or world % (tp * pp) or par.get("zero_stage") not in (1, 3) or world * -(-layers // pp) > MAX_WORK:
        return None
    model = layout.Transformer(layers, **dims, model_datatype=types[0], optimizer_datatype=types[1])
    shape = layout.Parallelism(tp, pp, world // (tp * pp), par["zero_stage"])
    return layout.Checkpoint("", model, shape, world, "default", False).total_bytes


def _miniature_bytes(model: str, world: int) -> int | None:
    """The bytes one checkpoint of the model's miniature (its workload file's `miniature` block) lays out."""
    from suite.checkpointing import model as layout
    from suite.errors import SuiteError
    from suite.checkpointing import workloads

    try:
        if model not in workloads.names():
            return None
        return layout.from_workload(workloads.load(model), world, "default", True).total_bytes
    except (SuiteError, KeyError, TypeError, ValueError, ZeroDivisionError):
        return None


def sized(model: str, procs, params: dict, config=None) -> tuple[int | None, int | None]:
    """(the bytes the leaf is held to, the bytes of a recorded configuration that is not the model's).

    The recorded configuration laid out at the model's closed process count (the leaf's own where the round
    has none) when it is the model's (the round's table to the byte) or the model's miniature; a
    configuration that is neither is the second figure, and the table the first; no whole configuration
    recorded: the table."""
    closed = (params.get("checkpoint_closed_processes") or {}).get(model)
    world = closed if isinstance(closed, int) else procs
    table = (params.get("checkpoint_size_bytes") or {}).get(model)
    table = table if isinstance(table, int) and table > 0 else None
    got = config_bytes(config, world)
    if got is None or table is None or got in (table, _miniature_bytes(model, world)):
        return (got or table), None
    return table, got


def expected_gib(model: str, procs, subset: bool, params: dict, config=None) -> float | None:
    """The checkpoint the model's layout writes, in GiB (None: unsized)."""
    closed = (params.get("checkpoint_closed_processes") or {}).get(model)
    size = sized(model, procs, params, config)[0]
    if size is None:
        return None
    if subset and isinstance(procs, int) and isinstance(closed, int) and 0 < procs < closed:
        size = size * procs // closed
    return size / GIB


def _off(got, want: float) -> bool:
    number = isinstance(got, (int, float)) and not isinstance(got, bool) and math.isfinite(got)
    return not number or not math.isclose(got, want, rel_tol=REL_TOLERANCE, abs_tol=0.0)


def items(leaves: list, model: str, procs, subset: bool, params: dict, config=None) -> list[Item]:
    """Each leaf's claimed size and rank 0's recorded bytes per checkpoint against the layout."""
    want = expected_gib(model, procs, subset, params, config)
    if want is None:
        return []
    note = f"the {model} layout's bytes (suite.checkpointing.model), in GiB (DLIO's 'GB' are 2^30 bytes)"
    out = []
    other = sized(model, procs, params, config)[1]
    meta = next((x.meta for x in leaves if x.meta is not None), None)
    if other is not None and meta is not None:
        out.append(Item(f"{other / GIB:.4f} GiB", Path(meta.path), "parameters.model (laid out at the closed count)",
                        f"the {model} configuration ({want:.4f} GiB) or its miniature's", note=note))
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
