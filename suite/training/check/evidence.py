"""Benchmark facts about the submission's evidence: its system description (found how, JSON syntax,
PDF beside it, solution type, a documented memory limit), its data-generation logs (do they belong
to the dataset the runs read) and its mlperf_storage_report.json (does it match the runs: one item
listing every differing field).
"""

from __future__ import annotations

from suite.layouts.benchdirs import genlogs, identify, systems as system_files, tree as layout
from suite.numbers import is_number
from suite.rules import engine as rules
from suite.rules.engine import Item
from suite.training import figures as metrics

MEMORY_LIMIT_KEYS = ("memory.max", "memory_max", "memory_limit_bytes", "cgroup_memory_limit_bytes")


def system_facts(b: layout.Benchmark, tree: layout.Tree, facts: dict, sources: dict, docs: dict):
    """system.* facts; returns the description used (or None)."""
    system, how = system_files.for_benchmark(b, tree.systems)
    expected = b.system if how in ("near", "only") and b.system else (system.name if system else b.system)
    facts.update({"system.file": str(system.path) if system else None,
                  "system.name": system.name if system else None,
                  "system.expected_name": expected or (system.name if system else None),
                  "system.found_by": how})
    if system is None:
        return None
    facts["system.syntax"] = [Item(system.syntax, system.path, "(JSON syntax)", "valid JSON")] if system.syntax else []
    pdf = system_files.pdf_beside(system, _Dirs(tree.dir_files))
    facts["system.pdf"] = str(pdf) if pdf else None
    sources["system.pdf"] = (system.path.with_suffix(".pdf"), "file")
    sources["system.name"] = (system.path, "file name")
    if isinstance(system.doc, dict):
        docs["system"] = ({"doc": system.doc}, system.path)
        sources["system.doc"] = (system.path, "(top level)")
        st = system.doc.get("storage_system")
        if isinstance(st, dict) and isinstance(st.get("solution_type"), str):
            facts["system.solution_type"] = st["solution_type"]
            sources["system.solution_type"] = (system.path, "storage_system.solution_type")
    return system


class _Dirs:
    """The walk's dir -> files map, shaped as systems.pdf_beside expects."""

    def __init__(self, dirs):
        self.dirs = dirs


def solution_kind(value: str, allowed: list[str], aliases: dict | None = None) -> str:
    """The allowed access type `value` starts with ('Proprietary - EXAScaler' -> 'Proprietary'), the one
    a file-system type stands for ('ext4' -> 'Local storage', rules param solution_type_aliases), else value."""
    low = value.strip().lower()
    for fs, kind in (aliases or {}).items():
        if low == str(fs).lower() or low.startswith(f"{str(fs).lower()} ") or low.startswith(f"fuse.{str(fs).lower()}"):
            return kind
    for a in sorted(allowed, key=len, reverse=True):
        if low == a.lower() or low.startswith(a.lower() + " ") or low.startswith(a.lower() + "-") \
                or low.startswith(a.lower() + " -") or low.startswith(a.lower() + "("):
            return a
    return value


def documented_memory_limit(doc) -> int | None:
    """A per-host memory limit in bytes written in the system description (a cgroup memory.max)."""
    stack = [doc]
    seen = 0
    while stack and seen < 100_000:
        node = stack.pop()
        seen += 1
        if isinstance(node, dict):
            for k, v in node.items():
                if str(k).lower() in MEMORY_LIMIT_KEYS and is_number(v) and v > 0:
                    return int(v)
                stack.append(v)
        elif isinstance(node, list):
            stack.extend(node)
    return None


# --------------------------------------------------------------------------- generation logs


def generation_facts(b: layout.Benchmark, facts: dict, sources: dict, first_start: float | None):
    """generation_logs (the candidates) and generation_logs.unmatched (one item per candidate, with why
    it did not generate the dataset the runs read; empty when one did or none is there); returns the
    log that did (None: none did, or none is there)."""
    facts["generation_logs"] = [str(g.path) for g in b.generation_logs]
    files, folder = _dataset_read(b)
    whys = [(g, genlogs.mismatch(g, files, folder, first_start)) for g in b.generation_logs]
    ok = any(w is None for _, w in whys)
    facts["generation_logs.unmatched"] = [] if ok else [
        Item(w, g.path, "dataset", "the dataset the runs read (files, data folder, before the first run)")
        for g, w in whys]
    return matching_log(whys, folder)


def matching_log(whys, folder):
    """The log that generated the runs' dataset: of those that match, the best data-folder match
    (the same folder before a nested one before a tail of a relative one); None when none matches."""
    matched = [g for g, w in whys if w is None]
    if not matched:
        return None
    return max(matched, key=lambda g: genlogs.folder_match(g.data_folder, folder))


def _dataset_read(b: layout.Benchmark):
    for run in b.runs:
        for h in run.hosts:
            s = h.summary if isinstance(h.summary, dict) else {}
            ov = identify.overrides_dict(h.overrides)
            files = s.get("num_files_train") if is_number(s.get("num_files_train")) else None
            folder = ov.get("dataset.data_folder")
            if folder is None and isinstance(h.config, dict) and isinstance(h.config.get("dataset"), dict):
                folder = h.config["dataset"].get("data_folder")
            if files is not None or folder is not None:
                return files, folder if isinstance(folder, str) else None
    return None, None


# --------------------------------------------------------------------------- the report against the runs


def report_differences(b: layout.Benchmark, agg: dict | None, unmatched_runs: list[Item]) -> list[Item]:
    """One item naming every field where mlperf_storage_report.json differs from its runs (none: [])."""
    rep = b.report if isinstance(b.report, dict) else {}
    overall = rep.get("overall") if isinstance(rep.get("overall"), dict) else {}
    diffs: list[str] = []
    if "num_benchmark_runs" in overall and overall["num_benchmark_runs"] != len(b.runs):
        diffs.append(f"num_benchmark_runs {overall['num_benchmark_runs']!r} (runs: {len(b.runs)})")
    if agg:
        o = agg["overall"]
        for key, exact in ((metrics.SAMPLES_MEAN, True), (metrics.SAMPLES_STDEV, False),
                           (metrics.REPORT_MB_MEAN, True), (metrics.REPORT_MB_STDEV, False)):
            have, want = overall.get(key), o.get(key)
            if is_number(have) and is_number(want) and not rules.close_enough(
                    have, want, rel=1e-9, abs_=0.0 if exact else 1e-9):
                diffs.append(f"{key} {have!r} (recomputed {want!r})")
        for key in (metrics.NUM_ACCELERATORS, "num_files_train", "num_samples_per_file"):
            have, want = overall.get(key), o.get(key)
            if have is not None and want is not None and str(have) != str(want):
                diffs.append(f"{key} {have!r} (runs: {want!r})")
    if isinstance(overall.get("model"), str) and b.workload and \
            identify.model_aliases().get(overall["model"].lower(), overall["model"]) != b.workload:
        diffs.append(f"model {overall['model']!r} (runs: {b.workload!r})")
    for it in unmatched_runs:
        diffs.append(f"{it.field} {it.value!r} ({it.expected})")
    if not diffs:
        return []
    fields = ", ".join(d.split(" ", 1)[0] for d in diffs)
    return [Item("; ".join(diffs), b.report_path, f"differing fields: {fields}", "the values recomputed from the runs")]
