"""What a timestamped leaf is, read from its own files and never from the folders around it (issue 44:
one judgement wherever a result sits).

A *reference leaf* is what MLCommons' `mlpstorage` writes for one invocation (and what the published
v3.0 trees hold): a folder named `YYYYMMDD_HHMMSS` with `<benchmark>_<ts>_metadata.json`, DLIO's
summary.json or fs_separation.json, and none of the evidence only `suite run` writes. Its benchmark
comes from the metadata file's name, else from the figures summary.json holds (training's
`train_au_*`, checkpointing's `save_checkpoint*` / `load_checkpoint*`). A training leaf's phase is its
folder's (datagen, datasize, run), else its metadata's `command`.

Every read is bounded and link-free; a file that cannot be read leaves the leaf unclassified here (the
kind's check of the leaf says why).
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import SuiteError
from suite.harness import leafstamp

BENCHMARKS = ("training", "checkpointing")            # the kinds whose leaves mlpstorage writes this way
PHASES = ("datagen", "datasize", "run")               # a training leaf's folder
OURS = ("results.json", "run_set.json", "checkpoint_run_set.json")   # evidence only `suite run` writes
MAX_NAMES = 400                                       # names looked at in one folder
SUMMARY_BYTES = 1 << 20                               # a published summary.json is ~10 KB


@dataclass(frozen=True)
class Leaf:
    path: Path
    benchmark: str                   # training | checkpointing
    phase: str                       # training: datagen | datasize | run; checkpointing: ""

    @property
    def node(self) -> Path:
        """The benchmark folder the leaf belongs to: training's `<model>/` above its phase folder (or
        the leaf's folder when it sits in none), checkpointing's `<model>/`."""
        up = self.path.parent
        return up.parent if self.benchmark == "training" and up.name in PHASES else up


def names(d: Path, dirs: bool = False) -> list[str]:
    """A bounded, link-free listing of `d`'s files (or folders)."""
    out: list[str] = []
    try:
        with os.scandir(d) as it:
            for e in it:
                if len(out) >= MAX_NAMES:
                    break
                if e.is_symlink():
                    continue
                if e.is_dir(follow_symlinks=False) if dirs else e.is_file(follow_symlinks=False):
                    out.append(e.name)
    except OSError:
        return []
    return sorted(out)


def ours(d: Path, listed: list[str] | None = None) -> bool:
    """`d` holds evidence only `suite run` writes (its own leaves are read by its kinds with all of it)."""
    listed = names(d) if listed is None else listed
    return bool(set(OURS) & set(listed)) or (d / "run-1" / "results.json").is_file()


def reference(d: Path) -> Leaf | None:
    """The reference leaf `d` is, or None (not a stamp, ours, or nothing a reference leaf holds)."""
    d = Path(d)
    if not leafstamp.is_stamp(d.name) or d.is_symlink() or not d.is_dir():
        return None
    listed = names(d)
    if ours(d, listed):
        return None
    meta = next((n for n in listed if leafstamp.metadata_re("|".join(BENCHMARKS)).fullmatch(n)), None)
    benchmark = meta.rsplit("_", 3)[0] if meta else _by_summary(d, listed)
    if benchmark is None:
        return None
    phase = ""
    if benchmark == "training":
        phase = d.parent.name if d.parent.name in PHASES else _command(d / meta) if meta else "run"
    return Leaf(d, benchmark, phase)


def _by_summary(d: Path, listed: list[str]) -> str | None:
    if "summary.json" not in listed:
        return None
    try:
        doc = files.load_json(d / "summary.json", limit=SUMMARY_BYTES, root=d)
    except (SuiteError, OSError, ValueError, RecursionError):
        return None
    metric = doc.get("metric") if isinstance(doc, dict) else None
    keys = set(metric) if isinstance(metric, dict) else set()
    if any(k.startswith("train_au") for k in keys):
        return "training"
    if any(k.startswith(("save_checkpoint", "load_checkpoint")) for k in keys):
        return "checkpointing"
    return None


def _command(meta: Path) -> str:
    try:
        doc = files.load_json(meta, limit=SUMMARY_BYTES, root=meta.parent)
    except (SuiteError, OSError, ValueError, RecursionError):
        return "run"
    command = doc.get("command") if isinstance(doc, dict) else None
    return command if command in PHASES else "run"


_DIVISION_RE = re.compile(r"/(closed|open)/[^/\s\"']+/results/")
DIVISION_TEXT_BYTES = 1 << 20          # of a leaf's serialised metadata looked at


def recorded_division(doc) -> str | None:
    """The division a reference leaf recorded for itself: the `<division>/<Org>/results/` its own
    metadata names as where the run wrote (mlpstorage's result_dir, kv_cache's --rank-output-base),
    read from the leaf's content, not from where the leaf sits now; None where it names none."""
    try:
        text = json.dumps(doc, default=str)[:DIVISION_TEXT_BYTES]
    except (TypeError, ValueError, RecursionError):
        return None
    m = _DIVISION_RE.search(text)
    return m.group(1) if m else None


REPORTGEN = ("results.json", "results.csv")    # what the reference tool's `reports reportgen` writes
PROBE_BYTES = 4096


def reportgen_outputs(d: Path, listed) -> list[str]:
    """The reference tool's `reports reportgen` outputs in folder `d` (its `--output-dir`, usually the
    results dir itself): a results.json holding a JSON array (its list of runs, never one run's record:
    ours is an object) with no run output beside it, and the results.csv written with it. A layout's
    artifact, read by no kind and counted as no run."""
    listed = set(listed)
    if "results.json" not in listed or listed & {"summary.json", "per_epoch_stats.json"}:
        return []
    try:
        fd = os.open(d / "results.json", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return []
    try:
        head = os.read(fd, PROBE_BYTES) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)
    if not head.lstrip()[:1] == b"[":
        return []
    return [n for n in REPORTGEN if n in listed]
