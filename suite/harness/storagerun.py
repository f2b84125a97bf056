"""What the kinds that run on storage share (training, checkpointing; kv_cache, vector_database and
tpcx_ai use a part): the `suite run` options they all take, the default number of measured runs,
the files that name a storage run's directory, the refusal of `suite report --storage-nodes` for
what is not a sweep, and how a run speaks (one flushed line at a time).

Held here, below the kinds, so that no kind imports another for them (each kind a vertical slice).
"""

from __future__ import annotations

from pathlib import Path

from suite import terminal
from suite.errors import SuiteError

STORAGE_FILES = ("summary.json", "results.json", "per_epoch_stats.json")   # one run's files name its directory
SWEEP_FILE = "sweep.json"            # a `suite sweep` dir's document (suite.training.sweep.result writes it)
STORAGE_RUN_OPTIONS = ("accelerators", "runs", "memory_limit", "division", "ruleset", "hosts", "hostfile",
                       "allow_no_cache_drop", "no_cache_drop")   # used by every kind that runs on storage


def storage_dir(path: Path) -> Path:
    """A run's summary.json, results.json or per_epoch_stats.json stands for its directory."""
    return path.parent if path.name in STORAGE_FILES and not path.is_dir() else path


def refuse_storage_nodes(path, args) -> None:
    """`suite report --storage-nodes K` sizes a sweep's table: refused for any other result."""
    if getattr(args, "storage_nodes", 1) != 1:
        raise SuiteError(f"--storage-nodes: expected only with a sweep dir (its sizing table), got "
                         f"{args.storage_nodes} for {path}")


def say(*parts) -> None:
    """One flushed line (wrapped at suite.terminal.WIDTH columns)."""
    terminal.say(*parts)
