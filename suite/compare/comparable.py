"""Apples and oranges: what two results must share to be compared, and their systems side by side.

The identity fields (suite.benchmark.Measured.identity) are the kind's: for training the
workload, accelerator type, dataset size, ruleset and division; for TPCx-AI the scale factor,
streams, use cases and kit version; checkpointing adds its phase, mode and processes, kv_cache its option, a vector database
its index and dataset.
A field that differs is a refusal (one line, exit 2) unless --allow-different, which lists the
differences at the top of the comparison instead. A field neither result states (None on both
sides) is not a difference; one stated on one side only is.
"""

from __future__ import annotations

from suite.errors import ResultError
from suite.benchmark import Measured, identity_key

NAMES = {"workload": "workload", "accelerator": "accelerator type", "dataset_size": "dataset size",
         "record_size": "record size",
         "ruleset": "ruleset", "division": "division", "scale_factor": "scale factor",
         # the storage kinds' and TPCx-AI's own (their `measured`): a checkpoint phase, its layout, a
         # kv_cache option, a vector database's index and query set, a TPCx-AI engine
         "phase": "phase", "mode": "mode", "miniature": "miniature", "processes": "processes",
         "option": "option", "index": "index", "dataset": "dataset", "engine": "engine",
         "streams": "streams", "use_cases": "use cases", "kit_version": "kit version"}


def differences(base: Measured, other: Measured) -> list[tuple[str, object, object]]:
    """(field, base's value, other's value) for each identity field that differs."""
    out = []
    for key in list(base.identity) + [k for k in other.identity if k not in base.identity]:
        x, y = base.identity.get(key), other.identity.get(key)
        if x != y:
            out.append((key, x, y))
    if base.kind != other.kind:
        out.insert(0, ("kind", base.kind, other.kind))
    return out


def check(results: list[Measured], allow_different: bool) -> list[str]:
    """Each later result against the first: a ResultError at the first difference, or (with
    allow_different) the differences as lines for the top of the output."""
    lines = []
    base = results[0]
    for i, r in enumerate(results[1:], start=2):
        if identity_key(base.kind, base.identity) == identity_key(r.kind, r.identity):
            continue                          # like for like (the key a history series is made of)
        for key, x, y in differences(base, r):
            what = NAMES.get(key, key)
            if not allow_different:
                raise ResultError(f"{shown(r)}: {what}: expected {x} (as {shown(base)}), got {y}: results that differ "
                                  f"in {what} are not comparable (--allow-different compares them anyway)")
            lines.append(f"{what}: {letter(1)} {x}, {letter(i)} {y}")
    return lines


def shown(m: Measured) -> str:
    """How a result is named: its source where it is not a path alone (a history baseline), else its path."""
    return m.source or str(m.path)


def letter(i: int) -> str:
    """A, B, C ... Z, then R27, R28 ..."""
    return chr(ord("A") + i - 1) if i <= 26 else f"R{i}"




def side_by_side(results: list[Measured]) -> list[tuple[str, list, bool]]:
    """(key, each result's value, differs) for every system key any result has; differing keys first,
    each group in the order the keys first appear."""
    keys: list[str] = []
    seen = set()
    for r in results:
        for k in r.system:
            if k not in seen:
                seen.add(k)
                keys.append(k)
    rows = [(k, [r.system.get(k) for r in results], len({r.system.get(k) for r in results}) > 1) for k in keys]
    return [row for row in rows if row[2]] + [row for row in rows if not row[2]]
