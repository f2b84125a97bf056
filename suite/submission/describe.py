"""`suite submission describe`: the system description document (Markdown, HTML, PDF).

One content model, two renderers: a document is a title and sections (Hardware, Software, Settings,
Misc); a section holds blocks: ("p", text), ("list", [text]) or ("table", header, rows). The text
comes from the system description file and from the evidence the runs recorded (results.json:
cache drop, memory cgroup, versions). Every text is escaped for its format (suite.report.escape's
markdown(), html.escape). The PDF is the HTML printed by headless chromium where it is installed.
"""

from __future__ import annotations

import tempfile
from datetime import datetime, timezone
from pathlib import Path

from suite import __version__, files
from suite.errors import SuiteError, expected_got
from suite.submission import document, evidence, place, system as sysdesc
from suite.submission.layout import Tree, layout_of, open_tree


def _flat(node, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted key, value) rows of a nested description block."""
    if isinstance(node, dict):
        return [row for k, v in node.items() for row in _flat(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(node, list):
        if all(not isinstance(v, (dict, list)) for v in node):
            return [(prefix, ", ".join(map(str, node)) or "(none)")]
        return [row for i, v in enumerate(node) for row in _flat(v, f"{prefix}[{i}]")]
    return [(prefix, "" if node is None else str(node))]


def _mib(n) -> str:
    return f"{n / 1024**2:.0f} MiB" if isinstance(n, (int, float)) else "not recorded"


def _hardware(doc: dict, ruleset: str) -> list:
    if layout_of(ruleset).v1_system:
        blocks = []
        for node in doc.get("nodes", []):
            name = node.get("node_type_name", "node")
            rows = [r for k in ("CPU", "DRAM", "nic_ports", "drives", "accelerators") for r in _flat(node.get(k), k)]
            blocks += [("p", f"Node type {name}:"), ("table", ("item", "value"), rows)]
        blocks += [("p", "Networks:"), ("table", ("item", "value"), _flat(doc.get("networks"), "networks"))]
        storage = {k: v for k, v in (doc.get("storage_system") or {}).items() if k != "software_components"}
        blocks += [("p", "Storage system:"), ("table", ("item", "value"), _flat(storage))]
        return blocks
    rows = _flat({k: (v.get("hardware"), v.get("networking"), v.get("quantity")) if isinstance(v, dict) else v
                  for k, v in (doc.get("Nodes") or {}).items()})
    return [("p", f"System: {doc.get('System', {}).get('name')} ({doc.get('System', {}).get('type')})"),
            ("table", ("item", "value"), rows),
            ("p", "Power requirements:"), ("table", ("item", "value"), _flat(doc.get("PowerRequirements")))]


def _software(doc: dict, ruleset: str, sets: list[evidence.Results]) -> list:
    if layout_of(ruleset).v1_system:
        rows = [r for n in doc.get("nodes", []) for r in _flat(n.get("operating_system"), n.get("node_type_name"))]
        rows += _flat((doc.get("storage_system") or {}).get("software_components"), "storage software")
        rows.append(("storage version", str((doc.get("storage_system") or {}).get("version"))))
    else:
        rows = [r for k, v in (doc.get("Nodes") or {}).items() if isinstance(v, dict)
                for r in _flat(v.get("operating_system"), k)]
    versions = sorted({(k, str(v)) for s in sets for r in s.runs for k, v in (r.doc.get("versions") or {}).items()})
    rows += [(f"benchmark: {k}", v) for k, v in versions]
    return [("table", ("component", "version"), rows)]


def _settings(doc: dict, ruleset: str, sets: list[evidence.Results]) -> list:
    if layout_of(ruleset).v1_system:
        opts = [o for n in doc.get("nodes", []) for o in n.get("config_options") or []]
        mount = (doc.get("storage_system") or {}).get("client_mount_options")
    else:
        opts = [str(v.get("tuning")) for v in (doc.get("Nodes") or {}).values() if isinstance(v, dict) and v.get("tuning")]
        mount = None
    blocks = [("p", "Configuration options as stated in the system description:"), ("list", opts or ["(none)"])]
    if mount:
        blocks += [("p", "Client mount options of the data dir's file system:"), ("list", [", ".join(map(str, mount))])]
    for s in sets:
        run = s.runs[0]
        ov = run.path / "configs" / "overrides.yaml"
        items = files.load_yaml(ov) if ov.is_file() else []
        blocks += [("p", f"{s.workload}-{s.accelerator}: {run.doc.get('division')} division, ruleset "
                         f"{run.doc.get('ruleset')}; the benchmark's parameters as run (overrides.yaml of "
                         f"{run.path.name}); nothing else was changed (closed division: the run refuses "
                         f"any other parameter):"),
                   ("list", [str(i) for i in items] if isinstance(items, list) else [str(items)])]
    return blocks


def _misc(tree: Tree, system: str, sets: list[evidence.Results]) -> list:
    blocks = []
    for s in sets:
        runs = s.runs
        method = {str(((r.doc.get("enforcement") or {}).get("cache_drop") or {}).get("method")) for r in runs}
        blocks += [("p", f"{s.workload}-{s.accelerator}: page cache dropped before every run with: "
                         f"{'; '.join(sorted(method))}. Per run:"),
                   ("table", ("run", "cache drop", "took", "page cache before → after"),
                    [_cache_row(r) for r in runs])]
        mem = [(r.doc.get("enforcement") or {}).get("memory_limit") or {} for r in runs]
        blocks += [("p", "Memory available to the simulated accelerator(s): each run's ranks ran inside a memory "
                         "cgroup; the limit was read back from the cgroup after it was set, the peak usage read "
                         "from the cgroup at the end of the run, and the cgroup removed afterwards:"),
                   ("table", ("run", "cgroup", "limit requested", "limit applied", "peak", "OOM kills", "removed"),
                    [(r.path.name, f"{m.get('version')} {m.get('path')}", _mib(m.get("requested_bytes")),
                      _mib(m.get("applied_bytes")), _mib(m.get("peak_bytes")), str(m.get("oom_kills")),
                      str(m.get("removed"))) for r, m in zip(runs, mem)])]
    logs = [f"results/{system}/{s.path.name}/run-<k>/: dlio.log, summary.json, per_epoch_stats.json, "
            f"results.json (this evidence), steps/rank-<r>.json" for s in sets]
    logs += [f"generation_logs/{system}/{s.path.name}/generation_log.json: the data generation" for s in sets]
    return blocks + [("p", f"Where the logs are (under {tree.org_dir.name}/):"), ("list", logs)]


def _cache_row(run: evidence.RunEvidence) -> tuple:
    c = (run.doc.get("enforcement") or {}).get("cache_drop") or {}
    outcome = "done" if c.get("succeeded") else f"FAILED ({c.get('error')})" if c.get("attempted") else "not attempted"
    took = f"{c['duration_s']:.3f} s" if isinstance(c.get("duration_s"), (int, float)) else "-"
    return run.path.name, outcome, took, f"{_mib(c.get('cached_bytes_before'))} → {_mib(c.get('cached_bytes_after'))}"


def content(tree: Tree, system: str) -> tuple[str, list]:
    doc = sysdesc.load(tree, system)
    bench_root = tree.org_dir / "results" / system
    sets = [evidence.load(d) for d in sorted(bench_root.iterdir()) if d.is_dir() and not d.name.startswith(".")] \
        if bench_root.is_dir() else []
    cover = [("table", ("", ""), [("System name", system), ("Submitter", tree.org),
                                  ("Division", tree.division.upper()), ("Benchmark version", f"MLPerf Storage {tree.ruleset}"),
                                  ("Date", datetime.now(timezone.utc).strftime("%Y-%m-%d")),
                                  ("Benchmarks", ", ".join(s.path.name for s in sets) or "none added yet"),
                                  ("Made by", f"suite {__version__} (suite submission describe)")])]
    sections = [("Cover", cover), ("Hardware", _hardware(doc, tree.ruleset)),
                ("Software", _software(doc, tree.ruleset, sets)),
                ("Settings", _settings(doc, tree.ruleset, sets)), ("Misc", _misc(tree, system, sets))]
    todo = sysdesc.todos(doc)
    if todo:
        sections.append(("TODO", [("p", "Fields of the system description still to fill in:"),
                                  ("list", [f"{f}: {w}" for f, w in todo])]))
    return f"System description: {system}", sections


def describe(root: Path, system: str, replace: bool) -> list[str]:
    """Write systems/<system>.{md,html,pdf}; existing ones only with `replace` (kept aside)."""
    tree = open_tree(root)
    if not tree.system_file(system).is_file():
        raise SuiteError(expected_got(tree.system_file(system), "file", f"the system description of {system!r}", "none"))
    title, sections = content(tree, system)
    base = tree.org_dir / "systems" / system
    targets = [base.with_name(f"{system}.{ext}") for ext in ("md", "html", "pdf")]
    place.refuse_existing([t for t in targets if t.exists() or t.is_symlink()], replace)
    with tempfile.TemporaryDirectory(dir=base.parent, prefix=".describe-") as tmp:
        work = Path(tmp)
        (work / "doc.md").write_text(document.markdown(title, sections), encoding="utf-8")
        (work / "doc.html").write_text(document.page(title, sections), encoding="utf-8")
        why = document.pdf(work / "doc.html", work / "doc.pdf")
        aside = place.aside_root(tree.root)
        lines = []
        for ext, target in zip(("md", "html", "pdf"), targets):
            if (work / f"doc.{ext}").is_file():
                moved = place.move_aside(tree.root, target, aside)
                (work / f"doc.{ext}").rename(target)
                lines.append(f"  wrote {target}" + (f" (old copy kept at {moved})" if moved else ""))
    if why:
        lines.append(f"  no PDF: {why}")
    return [f"suite submission describe: {system} ({len(sections)} sections)", *lines]
