"""Our leaves are the reference's leaves, plus our evidence (issue 45): every key of every leaf file the
published v3.0 leaves in tests/data have (training's summary.json, metadata, fs_separation.json, rank
output, dlio_config/; checkpointing's likewise) is in the same file of our own `suite run` leaves, with
the same JSON type (an integer and a float are both numbers; a published null or empty value says
nothing of a type). Keys that only describe the reference's own machine (its /proc/meminfo fields, its
cluster snapshot's per-disk counters) are compared at their parent only, and what the submitter chose
(its override_parameters, and the parameters they introduced) at the mapping. Real runs of the same
workloads: a v3.0 unet3d b200 run (a 1 MiB-record dataset of 8 files) and a v3.0 llama3-8b miniature
write+read pair."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.ours3_builders import FAST

DATA = Path(__file__).resolve().parent / "data" / "v3"
TRAIN = DATA / "tree/closed/Alluxio/results/aws_c5n18xlarge_i3en24xlarge_8c_10s_8a/training/unet3d"
CKPT = DATA / "checkpointing_alluxio/closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
CKPT_TREE = DATA / "tree/closed/Alluxio/results/aws_r5n24xlarge_i3en12xlarge_1c_1s_8h/checkpointing/llama3-8b"
# subtrees whose keys are the reference machine's, not the format's: compared as a mapping only
OPAQUE = ("host_meminfo", "system_info", "host_cpuinfo", "cluster_info", "meminfo", "cpuinfo",
          "override_parameters")
# what mlpstorage adds of its own to DLIO's parameters and our ranks have no such thing for, each with why
WHY_NOT = ("mlpstorage's default for DLIO's PyTorch DataLoader workers (fork); our ranks read with threads, "
           "and record no such context")
# mappings keyed by what the machine or the run named (a report's runs, disk_io's devices): one child's shape
GENERIC = {"runs": "<run>", "devices": "<device>"}
REFERENCE_ONLY = {"parameters.reader.multiprocessing_context": WHY_NOT, "workload.reader.multiprocessing_context": WHY_NOT}
ALLUXIO = DATA / "training_alluxio/rigA_c5n18xl/training/unet3d"    # a run leaf with its dlio_config/ and rank stats
SMALL = ["--param", "dataset.record_length=1048576", "--param", "dataset.record_length_stdev=0"]


def _type(v) -> str | None:
    if v is None or v == "" or v == [] or v == {}:
        return None
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, (int, float)):
        return "number"
    return {str: "string", list: "list", dict: "mapping"}[type(v)]


def shape(doc, at: str = "") -> dict[str, str | None]:
    """Every key path of a document and its JSON type (lists: their first element's shape)."""
    out = {at or ".": _type(doc)}
    if isinstance(doc, dict) and at.rsplit(".", 1)[-1] not in OPAQUE:
        for k, v in doc.items():
            k = "<epoch>" if str(k).isdigit() else k       # per_epoch_stats: one epoch's shape, not how many
            k = GENERIC.get(at.rsplit(".", 1)[-1], k)     # a report's runs by dir name, disk_io's devices by name
            out.update(shape(v, f"{at}.{k}" if at else str(k)))
    elif isinstance(doc, list) and doc and isinstance(doc[0], dict):
        out.update(shape(doc[0], f"{at}[]"))
    return out


def load(p: Path):
    text = p.read_text()
    if text.strip() == "PRUNED BY STAFF":
        return None
    return yaml.safe_load(text) if p.suffix == ".yaml" else json.loads(text)


def missing(theirs: Path, ours: Path) -> list[str]:
    """The published file's key paths our file lacks or holds with another type."""
    a, b = load(theirs), load(ours)
    if a is None:
        return []
    mine = shape(b)
    chosen = {f"parameters.{k}" for d in (a, b) if isinstance(d, dict) for k in (d.get("override_parameters") or {})}
    for side in (theirs, ours):                   # a config.yaml: the overrides.yaml beside it says what was chosen
        over = side.parent / "overrides.yaml"
        if side.name == "config.yaml" and over.is_file():
            chosen |= {"workload." + line.split("=", 1)[0][len("++workload."):]
                       for line in (yaml.safe_load(over.read_text()) or []) if str(line).startswith("++workload.")}
    out = []
    for key, kind in shape(a).items():
        if key in chosen or key in REFERENCE_ONLY:
            continue                                      # a parameter the submitter introduced by overriding it
        if key not in mine:
            out.append(f"{key}: absent")
        elif kind is not None and mine[key] is not None and kind != mine[key]:
            out.append(f"{key}: {mine[key]}, published {kind}")
    return out


def _named(leaf: Path, name: str) -> Path:
    """A leaf's file, its stamp in the name replaced by this leaf's (training_<ts>_metadata.json)."""
    if "_metadata.json" in name:
        return next(leaf.glob(f"{name.split('_', 1)[0]}_*_metadata.json"))
    return leaf / name


@pytest.fixture(scope="module")
def ours(tmp_path_factory, voiced) -> dict[str, Path]:
    """Our unet3d b200 v3.0 run on a dataset of 8 1-MiB files (made once a session across xdist's workers:
    tests/conftest.py `once`), and the session's llama3-8b miniature write+read pair (`voiced`, made once
    for every file that reads it)."""
    from tests.conftest import once

    train = once(tmp_path_factory, "leaf-keys-unet3d", _unet3d)
    got = voiced["checkpointing"]
    if isinstance(got, BaseException):
        raise got
    ckpt = got[2] / "checkpointing" / "llama3-8b"
    assert ckpt.is_dir(), got[1][-2000:]
    return {"training": train, "checkpointing": ckpt}


def _unet3d(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("keys")
    subprocess.run([sys.executable, "-m", "suite", "datagen", "--workload", "unet3d", "--accelerator-type", "b200",
                    "--files", "8", "--data-dir", str(base / "data"), *SMALL], cwd=base, capture_output=True,
                   timeout=600, check=True)
    ran = subprocess.run([sys.executable, "-m", "suite", "run", "--workload", "unet3d", "--accelerator-type", "b200",
                          "--accelerators", "1", "--ruleset", "v3.0", "--data-dir", str(base / "data"), "--results-dir",
                          str(base / "R"), "--division", "open", "--runs", "1", *SMALL, *FAST],
                         cwd=base, capture_output=True, text=True, timeout=600)
    train = base / "R" / "training" / "unet3d"
    assert (train / "run").is_dir(), ran.stderr[-2000:]
    return train


def _pairs(published: Path, mine: Path, phase_of) -> list[tuple[Path, Path]]:
    out = []
    for f in sorted(p for p in published.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml")):
        rel = f.relative_to(published)
        leaf = phase_of(mine, rel)
        if leaf is not None:
            out.append((f, _named(leaf, rel.name) if len(rel.parts) <= 3 else leaf / Path(*rel.parts[2:])))
    return out


def _training_leaf(mine: Path, rel: Path) -> Path | None:
    phase = rel.parts[0]
    leaves = sorted((mine / phase).iterdir()) if (mine / phase).is_dir() else []
    if not leaves:
        return None
    if rel.name == "0_output.json" or rel.name == "dlio.log":
        return leaves[-1]
    return leaves[-1]


def test_every_published_training_leaf_key_is_in_ours(ours):
    problems = []
    pairs = _pairs(TRAIN, ours["training"], _training_leaf)
    assert len(pairs) >= 10, "the published leaves' files to compare"
    for theirs, mine in pairs:
        if theirs.name == "0_output.json":
            continue                        # published as PRUNED BY STAFF; ours: compared below
        assert mine.is_file(), f"{theirs.relative_to(TRAIN)}: our leaf has no {mine.name}"
        problems += [f"{theirs.relative_to(TRAIN)}: {m}" for m in missing(theirs, mine)]
    assert problems == []


def test_a_published_run_leafs_config_and_rank_stats_are_ours_too(ours):
    """training_alluxio keeps what the tree's copy pruned: dlio_config/{config,overrides}.yaml and rank 0's
    0_per_epoch_stats.json of a run leaf."""
    theirs_leaf = next((ALLUXIO / "run").iterdir())
    mine_leaf = sorted((ours["training"] / "run").iterdir())[-1]
    checked, problems = 0, []
    for theirs in sorted(p for p in theirs_leaf.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml")):
        rel = theirs.relative_to(theirs_leaf)
        mine = mine_leaf / rel
        assert mine.is_file(), f"{rel}: our leaf has no {rel}"
        problems += [f"{rel}: {m}" for m in missing(theirs, mine)]
        checked += 1
    assert checked >= 5 and problems == []


def test_every_published_checkpointing_leaf_key_is_in_ours(ours):
    problems = []
    mine_leaves = sorted(p for p in ours["checkpointing"].iterdir() if p.is_dir())
    assert len(mine_leaves) == 2 and CKPT.is_dir() and CKPT_TREE.is_dir()
    for src in (CKPT, CKPT_TREE):
        for theirs_leaf, mine_leaf in zip(sorted(p for p in src.iterdir() if p.is_dir()), mine_leaves):
            for theirs in sorted(p for p in theirs_leaf.rglob("*") if p.is_file() and p.suffix in (".json", ".yaml")):
                rel = theirs.relative_to(theirs_leaf)
                mine = _named(mine_leaf, rel.name) if len(rel.parts) == 1 else mine_leaf / rel
                assert mine.is_file(), f"{rel}: our leaf has no {mine.name}"
                problems += [f"{src.name}/{rel}: {m}" for m in missing(theirs, mine)]
    assert problems == []


KV = DATA / "kv_cache_FarmGPU/open/FarmGPU/results/potato8-qlc-np6-open-tnf-70b/kv_cache/llama3.1-70b-instruct/run"
VDB = DATA / "vector_database_TTA/closed/TTA/results/seahorse-storage/vector_database/milvus/DISKANN"


def test_every_published_kv_cache_leaf_key_is_in_ours(voiced):
    """A real kv-cache run (option 1, one 2-s trial: the session's `voiced` one, tests/conftest.py, made once
    for every file that reads it): its metadata, summary.json and a rank's results hold every key the
    published FarmGPU leaf has (option 3 there: the same files, another option)."""
    got = voiced["kv_cache"]
    if isinstance(got, BaseException):
        raise got
    mine = next(got[2].glob("kv_cache/*/run/*"), None)
    assert mine is not None, "the session's kv-cache run wrote no leaf"
    theirs = next(KV.iterdir())
    pairs = [(next(theirs.glob("kv_cache_*_metadata.json")), next(mine.glob("kv_cache_*_metadata.json"))),
             (theirs / "summary.json", mine / "summary.json"),
             (next(theirs.glob("option_*/trial_0/rank_0/*.json")), next(mine.glob("option_*/trial_0/rank_0/*.json")))]
    assert [f"{a.name}: {m}" for a, b in pairs for m in missing(a, b)] == []


def test_every_published_vector_database_summary_key_is_in_ours(tiny_diskann):
    """A real vdb-tiny run on the DiskANN engine (the session's `tiny_diskann`, tests/conftest.py: made once
    for every file that reads it): datagen's and the run's summary.json hold every key the published TTA
    leaves have (the run leaf's vdb_multi_node_summary.json and .mlps-code-image: tests/test_leaf_kinds.py)."""
    mine = next((tiny_diskann / "R").glob("vector_database/*/DISKANN"), None)
    assert mine is not None, "the session's vdb-tiny run wrote no DISKANN leaf"
    problems = []
    for phase in ("datagen", "run"):
        theirs_leaf, mine_leaf = sorted((VDB / phase).iterdir())[-1], sorted((mine / phase).iterdir())[-1]
        problems += [f"{phase}/summary.json: {m}" for m in missing(theirs_leaf / "summary.json", mine_leaf / "summary.json")]
    assert problems == []


def test_every_published_training_leaf_key_is_in_our_parquet_leaves(tmp_path, tmp_path_factory):
    """flux-mini's v3.0 leaves (Parquet: the reads and the ceiling added) have every key of the published
    unet3d leaves' datasize and run files, as unet3d's own do, but the parameters unet3d's workload config
    sets and flux's staged config (mlcommons/storage flux_b200.yaml: model name only, no checkpoint
    section, no resize) does not."""
    import parquet_builders

    mine = parquet_builders.series(tmp_path / "R", "flux-mini", tmp_path_factory) / "training" / "flux-mini"
    problems, pairs = [], [(t, m) for t, m in _pairs(TRAIN, mine, _training_leaf) if t.name != "0_output.json"]
    assert len(pairs) >= 8, "the published leaves' files to compare"
    for theirs, leaf_file in pairs:
        assert leaf_file.is_file(), f"{theirs.relative_to(TRAIN)}: our leaf has no {leaf_file.name}"
        problems += [f"{theirs.relative_to(TRAIN)}: {m}" for m in missing(theirs, leaf_file)]
    unet3d_only = (".parameters.model.type:", ".parameters.model.model_size:", ".parameters.checkpoint",
                   ".parameters.dataset.record_length_bytes_resize:")
    assert [p for p in problems if not any(k in "." + p.split(": ", 1)[1] for k in unet3d_only)] == []
    assert problems, "the comparison ran: unet3d's own parameters are absent from flux's leaves"
