"""A kv_cache result leaf on disk, ours or published (`kv_cache/<model>/run/<ts>/`): summary.json,
kv_cache_<ts>_metadata.json, option_<O>/trial_<T>/rank_<R>/kvcache_results_*.json, the per-trial
logs. Loaded bounded (suite.files: 16 MiB a file, nothing read through a link out of the leaf),
every value the figures use checked: a bad one is one line naming file, field, expected and actual.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from suite import files
from suite.errors import ResultError, expected_got

OPTION_DIR = re.compile(r"option_([1-9][0-9]?)")
TRIAL_DIR = re.compile(r"trial_([0-9]{1,4})")
RANK_DIR = re.compile(r"rank_([0-9]{1,6})")
RESULT_FILE = re.compile(r"kvcache_results_[0-9A-Za-z_]{1,40}\.json")
OLD_SUMMARY = re.compile(r"kvcache_run_summary_[0-9A-Za-z_]{1,40}\.json")   # before mlcommons/storage#640
METADATA_FILE = re.compile(r"kv_cache_[0-9A-Za-z_]{1,40}_metadata\.json")
MAX_RANK_FILES = 20000


@dataclass
class Leaf:
    path: Path
    summary: dict | None
    metadata: dict | None
    metadata_path: Path | None
    ranks: dict = field(default_factory=dict)          # (option, trial, rank) -> (path, doc)
    rank_dirs: dict = field(default_factory=dict)      # (option, trial) -> [rank numbers with a dir]
    logs: list = field(default_factory=list)
    summary_name: str | None = None                    # summary.json, or an older kvcache_run_summary_<dt>.json


def is_leaf(path: Path) -> bool:
    """A directory holding option_<O>/ directories or a kv_cache metadata file."""
    try:
        return path.is_dir() and any(OPTION_DIR.fullmatch(p.name) or METADATA_FILE.fullmatch(p.name)
                                     for p in path.iterdir())
    except OSError:
        return False


def number(doc, keys: tuple, where) -> float:
    """doc[k1][k2]...: a finite number, else ResultError naming the file and the field."""
    value = doc
    for k in keys:
        if not isinstance(value, dict) or k not in value:
            raise ResultError(expected_got(where, ".".join(keys), "a number", "nothing there"))
        value = value[k]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ResultError(expected_got(where, ".".join(keys), "a finite number", repr(value)[:40]))
    return float(value)


def _json(path: Path, root: Path) -> dict:
    doc = files.load_json(path, error=ResultError, root=root)
    if not isinstance(doc, dict):
        raise ResultError(expected_got(path, "document", "a JSON object", type(doc).__name__))
    return doc


def _dirs(path: Path, pattern) -> list[tuple[int, Path]]:
    out = []
    for p in sorted(path.iterdir()):
        m = pattern.fullmatch(p.name)
        if m and p.is_dir() and not p.is_symlink():
            out.append((int(m.group(1)), p))
    return out


def load(path: Path) -> Leaf:
    """The leaf at `path` (ResultError, one line, when a file in it is unusable)."""
    path = Path(path)
    if not is_leaf(path):
        raise ResultError(expected_got(path, "path", "a kv_cache result (option_<O>/ directories)", "none"))
    older = sorted(p for p in path.iterdir() if OLD_SUMMARY.fullmatch(p.name) and p.is_file())
    summary_path = path / "summary.json" if (path / "summary.json").is_file() else (older[-1] if older else None)
    summary = _json(summary_path, path) if summary_path else None
    metas = sorted(p for p in path.iterdir() if METADATA_FILE.fullmatch(p.name) and p.is_file())
    metadata = _json(metas[0], path) if metas else None
    leaf = Leaf(path, summary, metadata, metas[0] if metas else None)
    leaf.summary_name = summary_path.name if summary_path else None
    leaf.logs = sorted(p.name for p in path.iterdir() if p.name.endswith((".stdout.log", ".stderr.log")))
    count = 0
    for o, odir in _dirs(path, OPTION_DIR):
        for t, tdir in _dirs(odir, TRIAL_DIR):
            leaf.rank_dirs[(o, t)] = []
            for r, rdir in _dirs(tdir, RANK_DIR):
                leaf.rank_dirs[(o, t)].append(r)
                found = sorted(p for p in rdir.iterdir() if RESULT_FILE.fullmatch(p.name) and p.is_file())
                if found:
                    count += 1
                    if count > MAX_RANK_FILES:
                        raise ResultError(expected_got(path, "rank files", f"at most {MAX_RANK_FILES}", "more"))
                    leaf.ranks[(o, t, r)] = (found[-1], _json(found[-1], path))
    return leaf


def commands(leaf: Leaf) -> list[str]:
    """The commands that ran (metadata command_output_files[*].command), in order."""
    meta = leaf.metadata or {}
    out = []
    listed = meta.get("command_output_files")
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(item.get("command"), str):
            out.append(item["command"][:20000])
    return out


FLAGS = {"--model": str, "--num-users": int, "--duration": float, "--gpu-mem-gb": float, "--cpu-mem-gb": float,
         "--max-concurrent-allocs": int, "--seed-base": int, "--generation-mode": str, "--config": str,
         "--enable-autoscaling": bool, "--rank-output-base": str, "--rank-cache-base": str,
         "--storage-capacity-gb": float, "--token-bytes-divisor": int, "--seed": int}


def parse_command(command: str) -> dict:
    """The kv-cache flags of one command line ({flag: value}; a flag without a value: True). A value
    that does not parse is kept as text (the rules then see it is not the closed one)."""
    import shlex

    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    out: dict = {}
    for i, w in enumerate(words):
        name, _, inline = w.partition("=")
        if name not in FLAGS:
            continue
        kind = FLAGS[name]
        if kind is bool:
            out[name] = True
            continue
        raw = inline or (words[i + 1] if i + 1 < len(words) else "")
        try:
            out[name] = kind(raw)
        except ValueError:
            out[name] = raw
    return out


def option_of(command: str) -> int | None:
    """The option a trial command ran: option_<O> in its --rank-output-base."""
    base = parse_command(command).get("--rank-output-base")
    m = re.search(r"option_([1-9][0-9]?)", base) if isinstance(base, str) else None
    return int(m.group(1)) if m else None
