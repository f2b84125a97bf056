"""A checkpointing leaf's summary.json figures re-derived from its per-rank records (issue 36, class 4):
DLIO's `metric` block (save_/load_checkpoint_io_mean_GB_per_second, its stdev, the duration mean and
stdev) from `<r>_per_epoch_stats.json` (per checkpoint: start, end, duration) and the checkpoint size.

Per checkpoint k the duration is the slowest rank's (DLIO's leaves: rank 0's, the one its summary is
computed on; ours, which keep run-1/ beside: the largest over the ranks, as suite.checkpointing.results
takes it), each rank's duration its own end - start; the throughput size / duration; the metric the
mean and population stdev over the checkpoints. The same leaf gives the same figures wherever it sits:
this module is read by the checkpointing kind and by the published-tree check alike. A leaf without
the per-rank records is "not re-derivable": its claimed figures are shown as such."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from statistics import fmean, pstdev

from suite import files
from suite.errors import ResultError
from suite.rules.ops import Item

EPOCH_FILE = re.compile(r"([0-9]{1,6})_per_epoch_stats\.json")
CKPT_KEY = re.compile(r"(save|load)_ckpt([0-9]{1,5})")
REL_TOLERANCE = 1e-6
TIME_ABS_S = 2e-6                # ISO times carry microseconds
MAX_RANK_FILES = 4096


@dataclass
class Rederived:
    metric: dict = field(default_factory=dict)        # DLIO's keys, re-derived
    items: list = field(default_factory=list)         # summary.json claims (and rank records) that disagree
    statements: list = field(default_factory=list)    # [{figure, claimed, derived, status}]
    rederivable: bool = False


def checkpoint_bytes(doc, wanted) -> list[tuple[str, float | None]]:
    """(key, throughput x duration) of each checkpoint record of epoch "1" of a <rank>_per_epoch_stats.json
    document whose key `wanted(key)` accepts, by key; None where either figure is not a number (the bytes
    the record says its rank moved, for a check against the model's layout)."""
    epoch = doc.get("1") if isinstance(doc, dict) else None
    out = []
    for key, c in sorted(epoch.items()) if isinstance(epoch, dict) else ():
        if not wanted(key) or not isinstance(c, dict):
            continue
        try:
            out.append((key, float(c.get("throughput")) * float(c.get("duration"))))
        except (TypeError, ValueError):
            out.append((key, None))
    return out


def _time(text, where: Path, key: str) -> float:
    if not isinstance(text, str) or len(text) > 40:
        raise ResultError(f"{where}: {key}: expected an ISO date-time, got {str(text)[:40]!r}")
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ResultError(f"{where}: {key}: expected an ISO date-time, got {text!r}") from None


def _ranks(leaf: Path, root: Path, ours: bool) -> dict[int, dict]:
    found = sorted((int(m.group(1)), p) for p in leaf.iterdir() if (m := EPOCH_FILE.fullmatch(p.name)) and p.is_file())
    if not ours:
        found = [x for x in found if x[0] == 0]       # DLIO's summary is rank 0's
    out = {}
    for r, p in found[:MAX_RANK_FILES]:
        doc = files.load_json(p, error=ResultError, root=root)
        epoch = doc.get("1") if isinstance(doc, dict) else None
        if not isinstance(epoch, dict):
            raise ResultError(f"{p}: 1: expected the epoch's checkpoints, got {type(epoch).__name__}")
        out[r] = {"path": p, "epoch": epoch}
    return out


def _durations(ranks: dict[int, dict], items: list) -> dict[tuple[str, int], float]:
    """{(save|load, k): the slowest rank's duration}; each rank's duration checked against its times."""
    out: dict[tuple[str, int], float] = {}
    for r, rec in sorted(ranks.items()):
        for key, c in rec["epoch"].items():
            m = CKPT_KEY.fullmatch(key)
            if not m or not isinstance(c, dict):
                continue
            took = _time(c.get("end"), rec["path"], f"1.{key}.end") - _time(c.get("start"), rec["path"], f"1.{key}.start")
            d = c.get("duration")
            if isinstance(d, str):
                try:
                    d = float(d)
                except ValueError:
                    d = None
            if not isinstance(d, (int, float)) or isinstance(d, bool) or not math.isfinite(d) or abs(d - took) > TIME_ABS_S \
                    or d <= 0:
                items.append(Item(d, rec["path"], f"1.{key}.duration", expected=round(took, 6), expected_given=True,
                                  note="its end - start, positive"))
                d = took
            k = (m.group(1), int(m.group(2)))
            out[k] = max(out.get(k, 0.0), float(d))
    return out


def rederive(leaf: Path, root: Path | None = None) -> Rederived:
    """The leaf's DLIO metric from its per-rank records, and summary.json's claims against it."""
    leaf = Path(leaf)
    root = Path(root or leaf)
    out = Rederived()
    sp = leaf / "summary.json"
    summary = files.load_json(sp, error=ResultError, root=root) if sp.is_file() else None
    claimed = summary.get("metric") if isinstance(summary, dict) and isinstance(summary.get("metric"), dict) else {}
    size = claimed.get("checkpoint_size_GB")
    ours = (leaf / "run-1").is_dir()
    ranks = _ranks(leaf, root, ours)
    durations = _durations(ranks, out.items) if ranks else {}
    if not durations or not isinstance(size, (int, float)) or isinstance(size, bool) or not size > 0:
        return out
    out.rederivable = True
    out.metric["checkpoint_size_GB"] = float(size)
    for prefix in ("save", "load"):
        ds = [d for (p, _k), d in sorted(durations.items()) if p == prefix]
        if not ds:
            continue
        tp = [size / d for d in ds]
        out.metric.update({f"{prefix}_checkpoint_io_mean_GB_per_second": fmean(tp),
                           f"{prefix}_checkpoint_io_stdev_GB_per_second": pstdev(tp),
                           f"{prefix}_checkpoint_duration_mean_seconds": fmean(ds),
                           f"{prefix}_checkpoint_duration_stdev_seconds": pstdev(ds)})
    for key, want in sorted(out.metric.items()):
        got = claimed.get(key)
        ok = isinstance(got, (int, float)) and not isinstance(got, bool) and \
            math.isclose(got, want, rel_tol=REL_TOLERANCE, abs_tol=1e-9)
        out.statements.append({"figure": f"summary.json metric.{key}", "claimed": got, "derived": want,
                               "status": "rederived" if ok else "mismatch"})
        if not ok:
            out.items.append(Item(got, sp, f"metric.{key}", expected=want, expected_given=True,
                                  note="re-derived from <r>_per_epoch_stats.json (the slowest rank per checkpoint)"))
    return out
