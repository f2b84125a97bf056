"""What a reference-tool leaf in a layout says of itself and of its system (the row's system columns, its code
image, its metadata, overrides, paths and fs separation): the facts every kind's reference leaves share."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from suite.layouts import leaf_files as v3load
from suite.layouts import pooled as v3tree
from suite.layouts import solution
from suite.rules.ops import Item


def row(system: v3tree.System, org: v3tree.Org, benchmark: str, model: str, path: Path) -> dict:
    """The columns a published row has beside its figures: the system under test's."""
    doc = system.doc or {}
    sol = solution.solution(doc)
    return {"division": org.division, "org": org.name, "system": system.name, "benchmark": benchmark,
            "model": model, "path": str(path), "availability": sol["availability"],
            "usable_capacity_tib": sol["usable_capacity_tib"], "int_client_store_tib": sol["int_client_store_tib"],
            "provisioned_power_w": solution.provisioned_power_w(doc), "rack_units": solution.rack_units(doc),
            "deployment": sol["deployment"], "storage_location": sol["storage_location"],
            "benchmark_api": sol["benchmark_api"], "sut_type": sol["sut_type"],
            "access_protocol": sol["access_protocol"]}


def code_image(leaves) -> str | None:
    """The code image (32-hex hash) the first leaf with a `.mlps-code-image` pointer names."""
    return next((x.pointer[1] for x in leaves if getattr(x, "pointer", None)), None)


def meta_of(leaves) -> v3load.Metadata | None:
    return next((x.meta for x in leaves if x.meta is not None), None)


def leaf_facts(leaf: v3tree.Leaf) -> dict:
    """A leaf's own facts from its metadata and fs_separation.json: what it overrode (3.6.2, 3.6.3,
    4.6.3), whether its data and results paths are one (3.4.1, 4.4.1), checkpoint fsync (4.3.2)."""
    out = {}
    m = leaf.meta
    if m is not None:
        out["leaf.overrides"] = [Item(k, m.path, "override_parameters") for k in m.override_keys]
        if m.fsync is not None:
            out["checkpoint.fsync"] = m.fsync
    fs = leaf.fs
    if fs is not None and fs.data_path and fs.results_path:
        d, r = PurePosixPath(fs.data_path), PurePosixPath(fs.results_path)
        out["leaf.paths_shared"] = d == r or d in r.parents or r in d.parents
        out["fs_separation.contradictions"] = _fs_contradicts(leaf, d, r)
    return out


def _fs_contradicts(leaf: v3tree.Leaf, data: PurePosixPath, results: PurePosixPath) -> list:
    """fs_separation.json's paths against what the run's metadata says it read and wrote: the data
    folder lies under the data path, the leaf's result_dir under the results path (3.4.1, 4.4.1)."""
    m, out = leaf.meta, []
    if m is None:
        return out
    for got, base, name in ((m.data_folder, data, "parameters.dataset.data_folder"),
                            (m.result_dir, results, "result_dir")):
        if got and not (PurePosixPath(got) == base or base in PurePosixPath(got).parents):
            out.append(Item(got, m.path, name, f"a path under {base} (fs_separation.json)"))
    return out


def leaf_scope(leaf: v3tree.Leaf, benchmark: str, phase: str, division: str, measured: bool) -> dict:
    missing = []
    if phase in ("run", "write", "read", "combined") and leaf.summary is None and not any(
            p.path.name == "summary.json" for p in leaf.problems):
        pruned = "summary.json" in leaf.pruned
        missing.append(Item("pruned by staff" if pruned else "missing", leaf.path / "summary.json", "(file)",
                            "summary.json with the run's figures"))
    return {"leaf.benchmark": benchmark, "leaf.phase": phase, "leaf.measured": measured,
            "result.division": division, "leaf.files_missing": missing,
            "leaf.unreadable": [Item(p.actual, p.path, p.field, p.expected) for p in leaf.problems],
            "leaf.pruned": [Item("PRUNED BY STAFF", leaf.path / n, "(file)", "the file, or the staff's placeholder",
                                    note="a staff placeholder: accepted as such") for n in leaf.pruned],
            "fs_separation.recorded": leaf.fs_present, "fs_separation.same_filesystem": leaf.same_fs}


def leaf_sources(leaf: v3tree.Leaf) -> dict:
    s = leaf.path / "summary.json"
    fs = leaf.path / "fs_separation.json"
    meta = leaf.meta.path if leaf.meta is not None else leaf.path / "(metadata)"
    return {"checkpoint.fsync": (meta, "parameters.checkpoint.fsync"), "leaf.overrides": (meta, "override_parameters"),
            "leaf.paths_shared": (fs, "data_or_chkpt_path, results_path"),
            "leaf.au_mean_pct": (s, "metric.train_au_mean_percentage"), "leaf.gap_to_next_s": (s, "end (to the next run's start)"),
            "leaf.num_files_train": (s, "num_files_train"), "fs_separation.same_filesystem": (fs, "same_filesystem"),
            "fs_separation.recorded": (fs, "(file)")}


def checkpoint_phase(leaf: v3tree.Leaf) -> str:
    """What a checkpointing leaf recorded doing: write, read, combined (both) or none (its metadata's
    num_checkpoints_{write,read}; else the metric keys its summary holds)."""
    m = leaf.meta
    if m is not None and m.num_checkpoints_write is not None and m.num_checkpoints_read is not None:
        w, r = m.num_checkpoints_write, m.num_checkpoints_read
        return "combined" if w and r else "write" if w else "read" if r else "none"
    keys = set(leaf.summary.metric) if leaf.summary is not None else set()
    w = any(k.startswith("save_checkpoint") for k in keys)
    r = any(k.startswith("load_checkpoint") for k in keys)
    return "combined" if w and r else "write" if w else "read" if r else "none"
