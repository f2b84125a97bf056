"""Data-generation logs: where submitters keep them, what they say, which benchmark they belong to.

Seen in published v1.0 trees: `generation_logs/<system>/<workload>/<host>/configs/...` (DLIO's own
output of the datagen run), `generation_logs/<workload>/...` (one log for several systems), a
`*-gen/` or `datagen/` directory beside results/, and plain `.log` files. A log is found anywhere
under the organisation's directory (the nearest ancestor holding `results/`) and matched to a
benchmark of the SAME organisation by workload, file count (at least the run's num_files_train),
data folder and a timestamp before the first run. A log under another system's name does not
serve a benchmark; a log of another organisation never does.

What a log says: its DLIO overrides/config (workload, dataset.num_files_train, dataset.data_folder)
or, for a text log, `workload=`, `num_files_train`, `data_folder` and its first ISO timestamp.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from suite.layouts.benchdirs import identify
from suite.layouts.benchdirs.identify import overrides_dict

GEN_DIR = re.compile(r"^(?:generation[-_]?logs?|datagen|data[-_]?gen)$", re.I)
GEN_SUFFIX = re.compile(r"[-_]gen$", re.I)          # `unet3d-gen/` beside results/, never under it
TEXT_LOG_BYTES = 256 * 1024          # a text log is read up to this much
ISO_TIME = re.compile(r"(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?)")
WORKLOAD_RE = re.compile(r"workload=([A-Za-z0-9_-]+)")
FILES_RE = re.compile(r"num_files_train\W{1,3}(\d+)")
FOLDER_RE = re.compile(r"data_folder\W{1,3}([^\s,'\"]+)")
SUBFOLDERS_RE = re.compile(r"num_subfolders_train\W{1,3}(\d+)")


@dataclass
class GenerationLog:
    path: Path
    model: str | None
    accelerator: str | None
    system: str | None
    org_dir: Path | None = None          # the organisation directory it was found under
    num_files: int | None = None         # dataset.num_files_train it generated
    data_folder: str | None = None
    start_s: float | None = None         # when it ran (local time, as DLIO writes it)
    start_text: str | None = None
    num_subfolders: int | None = None    # dataset.num_subfolders_train it generated
    end_s: float | None = None           # its last time (summary end, else the last ISO time it writes)
    end_text: str | None = None


def in_gen_dir(rel_parts) -> bool:
    """Under generation_logs/ or datagen/ anywhere, or under a `*-gen/` directory outside results/
    (a system or benchmark directory named `..._gen` under results/ stays a result)."""
    lower = [p.lower() for p in rel_parts]
    for i, p in enumerate(rel_parts):
        if GEN_DIR.search(p) or (GEN_SUFFIX.search(p) and "results" not in lower[:i]):
            return True
    return False


def org_dir_of(d: Path, root: Path, subdirs: dict) -> Path | None:
    """The nearest ancestor (d itself included, root included) that holds a `results` directory."""
    for a in (d, *d.parents):
        if any(n.lower() == "results" for n in subdirs.get(a, [])):
            return a
        if a == root:
            return None
    return None


def timestamp(text) -> float | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace(" ", "T", 1)).timestamp()
    except ValueError:
        return None


def from_host(host, root: Path, subdirs: dict, text_of) -> GenerationLog:
    """A datagen run's DLIO output dir (configs/overrides.yaml, config.yaml, perhaps a dlio.log)."""
    model, accel, _ = identify.host_workload(host)
    rel = host.path.relative_to(root).parts
    if model is None:
        model, accel = identify.from_names(rel)
    ov = overrides_dict(host.overrides)
    dataset = (host.config or {}).get("dataset") if isinstance(host.config, dict) else None
    dataset = dataset if isinstance(dataset, dict) else {}
    files = _int(ov.get("dataset.num_files_train", dataset.get("num_files_train")))
    folder = ov.get("dataset.data_folder", dataset.get("data_folder"))
    start = (host.summary or {}).get("start") if isinstance(host.summary, dict) else None
    texts = text_of(host.path)
    if start is None:
        start = next((m.group(1) for t in texts if (m := ISO_TIME.search(t))), None)
    end = (host.summary or {}).get("end") if isinstance(host.summary, dict) else None
    if not isinstance(end, str):
        end = _last_time(texts)
    return GenerationLog(host.path, model, accel, _system(host.path, root), org_dir_of(host.path, root, subdirs),
                         files, folder if isinstance(folder, str) else None, timestamp(start), start,
                         _int(ov.get("dataset.num_subfolders_train", dataset.get("num_subfolders_train"))),
                         timestamp(end), end)


def _last_time(texts) -> str | None:
    """The latest ISO time the texts write (a log dated after the run shows it anywhere, not only first)."""
    times = [(t, m) for text in texts for m in ISO_TIME.findall(text) if (t := timestamp(m)) is not None]
    return max(times)[1] if times else None


def from_text(path: Path, text: str, root: Path, subdirs: dict) -> GenerationLog:
    """A plain .log file: what it names (workload=, num_files_train, data_folder, first timestamp)."""
    rel = path.relative_to(root).parts
    m = WORKLOAD_RE.search(text)
    model, accel = identify.parse_workload_name(m.group(1)) if m else (None, None)
    if model is None:
        model, accel = identify.from_names(rel)
    files = FILES_RE.search(text)
    folder = FOLDER_RE.search(text)
    start = ISO_TIME.search(text)
    sub = SUBFOLDERS_RE.search(text)
    end = _last_time([text])
    return GenerationLog(path, model, accel, _system(path, root), org_dir_of(path.parent, root, subdirs),
                         int(files.group(1)) if files else None, folder.group(1) if folder else None,
                         timestamp(start.group(1)) if start else None, start.group(1) if start else None,
                         int(sub.group(1)) if sub else None, timestamp(end), end)


def _int(v) -> int | None:
    try:
        return int(str(v))
    except (TypeError, ValueError):
        return None


def _system(d: Path, root: Path) -> str | None:
    """generation_logs/<system>/...: the system; a workload name there is no system."""
    sys_name = identify.system_of(d, root)
    if sys_name and identify.parse_workload_name(sys_name)[0]:
        return None
    return sys_name


def candidates(b, logs: list[GenerationLog], org_systems: set[str]) -> list[GenerationLog]:
    """The logs that could serve benchmark `b`: same organisation, same workload (one dataset may
    serve both accelerators), not filed under another of the organisation's systems."""
    out = []
    for g in logs:
        if g.model != b.workload:
            continue
        if b.org_dir is not None or g.org_dir is not None:
            if g.org_dir != b.org_dir:
                continue
            if g.system and g.system in org_systems and b.system and g.system != b.system:
                continue
        elif not (g.system == b.system or g.path.is_relative_to(b.path)):
            continue
        out.append(g)
    return out


def mismatch(g: GenerationLog, files: int | None, folder: str | None, first_start: float | None) -> str | None:
    """Why log `g` did not generate the dataset the runs read (None: it did, as far as both say)."""
    if g.num_files is not None and files is not None and g.num_files < files:
        return f"{g.num_files} files generated, runs read {files}"
    if g.data_folder and folder and not same_folder(g.data_folder, folder):
        return f"data folder {g.data_folder}, runs read {folder}"
    if g.start_s is not None and first_start is not None and g.start_s >= first_start:
        return f"generated at {g.start_text}, after run 1 started"
    if g.end_s is not None and first_start is not None and g.end_s > first_start:
        return f"log dated up to {g.end_text}, after run 1 started"
    return None


def folder_match(a: str | None, b: str | None) -> int:
    """How well a log's data folder matches the runs': 3 the same, 2 nested, 1 the same tail of a
    relative path, 0 unknown (either not said), -1 different."""
    if not a or not b:
        return 0
    pa, pb = _parts(a), _parts(b)
    if pa is None or pb is None:
        return 0
    if pa == pb:
        return 3
    if not same_folder(a, b):
        return -1
    short, long_ = sorted((pa, pb), key=len)
    return 2 if long_[:len(short)] == short else 1


def _parts(path: str) -> list[str] | None:
    """A folder's components, normalised (`a/./b/../c` -> a, c); None when it names no folder
    (`.`, `./`, empty: relative to a directory nobody recorded)."""
    parts = [p for p in posixpath.normpath(path.strip()).split("/") if p not in ("", ".")]
    return parts or None


def same_folder(a: str, b: str) -> bool:
    """The same data folder as far as the two say: equal, or one nested in the other (DLIO writes
    into <data_folder>/<workload>), or one the tail of the other (relative to a storage root the
    other includes). `.` (or empty) matches nothing but itself: it says which folder only with the
    directory it was run from, which nobody recorded."""
    pa, pb = _parts(a), _parts(b)
    if pa is None or pb is None:
        return pa == pb
    short, long_ = sorted((pa, pb), key=len)
    return long_[:len(short)] == short or long_[-len(short):] == short
