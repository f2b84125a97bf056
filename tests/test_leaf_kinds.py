"""Every kind of leaf file the published trees have, and what our `suite run` writes for it (issue 45):
the published v3.0 leaves in tests/data/v3 (training, checkpointing, kv_cache, vector_database) and the
published v1.0 and v0.5 results in ../shared/fixtures and ../shared/trees (DDN's whole v1.0 tree).
A file kind is (round, benchmark, phase, the file's name within its leaf with the stamps, ranks and
option/trial numbers generalised). For each kind, COVERED says either that our leaf of the same round,
benchmark and phase holds a file of that kind whose keys and JSON types hold every published file's
(recursively, tests/test_leaf_keys.missing; DIFFERENCES lists the only differences allowed, each with
its reason), or why our runs do not write it. A kind a fixture brings that COVERED does not name fails.
Real runs: tests/leaf_builders (each a miniature, made once per session), the session's `voiced`
checkpointing and kv_cache miniatures and its `tiny_diskann` vector-database run (tests/conftest.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.leaf_builders import made
from tests.test_leaf_keys import load, missing

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent / "shared"
PUBLISHED = [HERE / "data" / "v3", SHARED / "fixtures", SHARED / "trees"]
BENCH = ("training", "checkpointing", "kv_cache", "vector_database")
STAMP = re.compile(r"\d{8}_\d{6}")
COMPARE = "compare"
POINTER = re.compile(r"md5-tree-v2:[0-9a-f]{32}\n?")

# kind -> COMPARE, or the reason our runs do not write it
COVERED: dict[tuple[str, str, str, str], str] = {
    ("v0.5", "training", "run", "summary.json"): COMPARE,
    ("v0.5", "training", "run", "per_epoch_stats.json"): COMPARE,
    ("v0.5", "training", "run", "configs/overrides.yaml"): COMPARE,
    ("v0.5", "training", "report", "mlperf_storage_report.json"): COMPARE,
    ("v1.0", "training", "run", "summary.json"): COMPARE,
    ("v1.0", "training", "run", "per_epoch_stats.json"): COMPARE,
    ("v1.0", "training", "run", "configs/config.yaml"): COMPARE,
    ("v1.0", "training", "run", "configs/overrides.yaml"): COMPARE,
    ("v1.0", "training", "report", "mlperf_storage_report.json"): COMPARE,
    ("v1.0", "training", "run", "configs/hydra.yaml"):
        "Hydra's record of itself (its launcher, sweeper, help and logging templates, runtime paths) as the "
        "Hydra app that launched DLIO: no suite process is a Hydra app, so any such file would be invented; "
        "what a reader needs is in overrides.yaml and config.yaml, and v1.0's report.py reads only "
        "summary.json and configs/overrides.yaml (DDN's published code/report.py)",
    ("v1.0", "training", "datagen", "configs/config.yaml"):
        "DLIO's Hydra output of a generation run: `suite datagen` writes no results tree; its record is "
        "<data-dir>/generation_log.json, and a v1.0 run's configs/ name the dataset it read",
    ("v1.0", "training", "datagen", "configs/overrides.yaml"): "as datagen configs/config.yaml",
    ("v1.0", "training", "datagen", "configs/hydra.yaml"): "as run configs/hydra.yaml and datagen configs/config.yaml",
    ("v1.0", "training", "run", "<rank>_output.json"):
        "DLIO's per-rank step timings: our ranks record theirs in steps/rank-<r>.json (per step start, end, "
        "compute and sleep, per epoch bytes and samples), which `suite check` re-derives from; "
        "`suite run --engine dlio` keeps DLIO's own",
    ("v1.0", "training", "run", "dft.log"):
        "DFTracer's trace (a profiler DLIO ran beside the benchmark): we run no profiler; empty in the "
        "published copy",
    ("v1.0", "training", "run", "dlp.log"): "dlio_profiler's trace: as dft.log",
    ("v1.0", "training", "datagen", "dft.log"): "DFTracer's trace of a generation run: as run dft.log",
    ("v1.0", "training", "datagen", "dlp.log"): "dlio_profiler's trace of a generation run: as run dft.log",
    ("v3.0", "training", "run", "summary.json"): COMPARE,
    ("v3.0", "training", "run", "fs_separation.json"): COMPARE,
    ("v3.0", "training", "run", "training_<ts>_metadata.json"): COMPARE,
    ("v3.0", "training", "run", "<rank>_per_epoch_stats.json"): COMPARE,
    ("v3.0", "training", "run", "dlio_config/config.yaml"): COMPARE,
    ("v3.0", "training", "run", "dlio_config/overrides.yaml"): COMPARE,
    ("v3.0", "training", "run", ".mlps-code-image"): COMPARE,
    ("v3.0", "training", "run", "dlio.log"): COMPARE,
    ("v3.0", "training", "run", "<rank>_output.json"):
        "published as the staff's `PRUNED BY STAFF` placeholder (no keys to compare); DLIO's per-rank step "
        "timings, which our ranks record in steps/rank-<r>.json (as v1.0's <rank>_output.json)",
    ("v3.0", "training", "datagen", "training_<ts>_metadata.json"): COMPARE,
    ("v3.0", "training", "datagen", "fs_separation.json"): COMPARE,
    ("v3.0", "training", "datagen", "dlio_config/overrides.yaml"): COMPARE,
    ("v3.0", "training", "datagen", "dlio.log"):
        "published as the staff's `PRUNED BY STAFF` placeholder: DLIO's log of its generation run; our "
        "generation is no DLIO run and its record is the leaf's metadata (`datagen`: files, bytes, seconds)",
    ("v3.0", "training", "datasize", "training_<ts>_metadata.json"): COMPARE,
    ("v3.0", "training", "datasize", ".mlps-code-image"): COMPARE,
    ("v3.0", "checkpointing", "run", "summary.json"): COMPARE,
    ("v3.0", "checkpointing", "run", "fs_separation.json"): COMPARE,
    ("v3.0", "checkpointing", "run", "checkpointing_<ts>_metadata.json"): COMPARE,
    ("v3.0", "checkpointing", "run", "<rank>_per_epoch_stats.json"): COMPARE,
    ("v3.0", "checkpointing", "run", "dlio_config/overrides.yaml"): COMPARE,
    ("v3.0", "kv_cache", "run", "summary.json"): COMPARE,
    ("v3.0", "kv_cache", "run", "kv_cache_<ts>_metadata.json"): COMPARE,
    ("v3.0", "kv_cache", "run", "option_<n>/trial_<n>/rank_<n>/kvcache_results_<ts>.json"): COMPARE,
    ("v3.0", "vector_database", "datagen", "summary.json"): COMPARE,
    ("v3.0", "vector_database", "run", "summary.json"): COMPARE,
    ("v3.0", "vector_database", "run", ".mlps-code-image"): COMPARE,
    ("v3.0", "vector_database", "run", "vectordb/simple/vdb_multi_node_summary.json"): COMPARE,
    ("v3.0", "vector_database", "run", "statistics.json"):
        "the figures of a run as the other layout of published vector-DB leaves has them (SAMSUNG's: no "
        "summary.json, its statistics.json and config.json); ours are in summary.json and the ranks' "
        "vdb_multi_node_summary.json, the layout the other published leaves have (compared above); the "
        "checker reads both (tests/vector_database/test_vdb_rules.py)",
    ("v3.0", "vector_database", "run", "config.json"):
        "the run's configuration in that other layout (statistics.json's); ours is in the metadata and "
        "summary.json the other published leaves have",
}

# (file name of the kind, key path) -> why ours may differ there; nothing else may
_READER = ("an option of a DLIO reader ours is not (set by DLIO's {} workload file): our reader reads with "
           "threads and its config.yaml lists only what it uses; our comparison run is unet3d")
DIFFERENCES: dict[tuple[str, str], str] = {
    ("config.yaml", "workload.reader.shuffle_size"): _READER.format("cosmoflow_*: the tf.data shuffle buffer"),
    ("config.yaml", "workload.reader.dont_use_mmap"): _READER.format("resnet50_a100: the DALI npy reader's"),
}


def kind_of(rel: tuple[str, ...], rnd: str, phase: str | None = None) -> tuple[str, str, str, str]:
    """A leaf file's kind from its path below the results root (results/<system>/ in a published tree;
    `phase` "datagen" for a v1.0 tree's generation_logs/<system>/)."""
    if rnd == "v3.0":
        bench = next(x for x in rel if x in BENCH)
        phase = next((x for x in rel if x in ("run", "datagen", "datasize")), "run")
        inner = rel[next(i for i, x in enumerate(rel) if STAMP.fullmatch(x)) + 1:]
    elif rel[-1] == "mlperf_storage_report.json":
        bench, phase, inner = "training", "report", rel[-1:]
    else:
        bench, phase = "training", phase or ("datagen" if "datagen" in rel else "run")
        inner = rel[-2:] if rel[-2] == "configs" else rel[-1:]
    name = re.sub(r"(^|/)\d+_", r"\1<rank>_", STAMP.sub("<ts>", "/".join(inner)))
    return rnd, bench, phase, re.sub(r"(option|trial|rank)_\d+", r"\1_<n>", name)


def _published_file(p: Path) -> tuple[str, str, str, str] | None:
    parts = p.parts
    if p.name == "README.md":
        return None
    if "v3" in parts and "tree" not in parts:          # tests/data/v3/<excerpt>/...: below the benchmark's dir
        return kind_of(parts[next(i for i, x in enumerate(parts) if x in BENCH):], "v3.0")
    rnd = "v3.0" if "v3" in parts else ("v0.5" if "mlperf-storage-v0.5" in parts else "v1.0")
    for top, phase in (("results", None), ("generation_logs", "datagen")):
        if top in parts:
            return kind_of(parts[parts.index(top) + 2:], rnd, phase)
    return None                                           # systems/, code/, the code pool: no leaves


def published() -> dict[tuple[str, str, str, str], list[Path]]:
    out: dict[tuple[str, str, str, str], list[Path]] = {}
    for root in PUBLISHED:
        for p in sorted(root.rglob("*")) if root.is_dir() else ():
            k = _published_file(p) if p.is_file() else None
            if k is not None:
                out.setdefault(k, []).append(p)
    return out


def ours(which: str, request) -> dict[tuple[str, str, str, str], list[Path]]:
    """Our results' leaf files by kind, in leaf order (a results root's own files: no leaf's). The
    checkpointing and kv_cache miniatures are the session's `voiced` ones (tests/conftest.py: the llama3-8b
    v3.0 write and read, a kv-cache run of option 1, one 2-s trial, made once for every file that needs
    them), the vector-database run its `tiny_diskann` one (a
    real DiskANN run of vdb-tiny, which tests/kinds, tests/history and tests/hostile read too), read as they
    are: nothing here writes."""
    if which in ("checkpointing", "kv_cache"):
        got = request.getfixturevalue("voiced")[which]
        if isinstance(got, BaseException):
            raise got
        root = got[2]
    elif which == "vector_database":
        root = request.getfixturevalue("tiny_diskann") / "R"     # the session's vdb-tiny DiskANN run
    else:
        root = made(which, request.getfixturevalue("tmp_path_factory"))
    rnd, out = (which if which in ("v0.5", "v1.0") else "v3.0"), {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).parts
        in_leaf = any(STAMP.fullmatch(x) for x in rel[:-1]) if rnd == "v3.0" else (
            len(rel) > 1 or rel[-1] == "mlperf_storage_report.json")
        if p.is_file() and in_leaf:
            out.setdefault(kind_of(rel, rnd), []).append(p)
    return out


def _leaf(p: Path) -> Path:
    """The leaf holding `p`: its stamped folder (v3.0), its run folder (v1.0: run1, run-1, runs/run1/c008)."""
    for q in p.parents:
        if STAMP.fullmatch(q.name) or re.fullmatch(r"run[-_]?\d+", q.name):
            return q
        if re.fullmatch(r"run[-_]?\d+", q.parent.name) and (q / "summary.json").is_file():
            return q
    return p.parent


def _counterpart(p: Path, mine: list[Path]) -> Path:
    """Our file for published `p`: in our leaf at the same position among its siblings (a checkpointing
    write leaf then its read leaf; our last leaf where we have fewer), the same rank's where it has one."""
    leaf = _leaf(p)
    siblings = sorted(q for q in leaf.parent.iterdir() if q.is_dir())
    leaves = sorted({_leaf(m) for m in mine})
    ours_leaf = leaves[min(siblings.index(leaf) if leaf in siblings else 0, len(leaves) - 1)]
    in_leaf = [m for m in mine if _leaf(m) == ours_leaf]
    return next((m for m in in_leaf if m.name == p.name), in_leaf[0])


def test_every_published_leaf_file_kind_is_covered():
    found = published()
    if not (SHARED / "fixtures").is_dir():
        pytest.skip("../shared/fixtures is not here")
    assert sorted(found) == sorted(COVERED)
    assert all(v == COMPARE or len(v) > 20 for v in COVERED.values()), "every reason says why"


def _same(theirs: Path, mine: Path) -> list[str]:
    if theirs.name == ".mlps-code-image":
        return [] if POINTER.fullmatch(mine.read_text()) else [f"not one md5-tree-v2:<32 hex> line: {mine.read_text()!r}"]
    if theirs.suffix == ".log":
        return [] if mine.stat().st_size > 0 else ["empty"]
    if load(theirs) is None:                                 # PRUNED BY STAFF
        return []
    allowed = {key for (name, key) in DIFFERENCES if name == theirs.name}
    return [m for m in missing(theirs, mine) if m.split(":", 1)[0] not in allowed]


@pytest.mark.parametrize("which", ["v0.5", "v1.0", "training", "checkpointing", "kv_cache", "vector_database"])
def test_every_compared_kind_holds_the_published_keys_and_types(which, request):
    theirs = {k: v for k, v in published().items() if COVERED.get(k) == COMPARE
              and (k[0] == which if which in ("v0.5", "v1.0") else (k[0], k[1]) == ("v3.0", which))}
    if which in ("v0.5", "v1.0") and not (SHARED / "fixtures").is_dir():
        pytest.skip("../shared/fixtures (the published v0.5 and v1.0 leaves) is not here")
    assert theirs, f"no published {which} leaf files to compare"
    mine = ours(which, request)
    problems = []
    for k, paths in sorted(theirs.items()):
        if k not in mine:
            problems.append(f"{'/'.join(k)}: our leaves have no such file")
            continue
        for p in paths:
            problems += [f"{p.relative_to(p.parents[3])}: {m}" for m in _same(p, _counterpart(p, mine[k]))]
    assert problems == []
