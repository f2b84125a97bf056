"""The MLPerf Storage v3.0 results tables as mlpstorage's `reports reportgen` writes them
(results.csv / results.json; mlcommons/storage PRs #826 and #829, with #836's fixes; facts, not code):
one flat file for all eight web tables, a fixed column set never driven by the data.

- Columns, in order: the System-Under-Test block (Public ID, Organization, Division, Benchmark Type,
  Model, Name, Description, Type, Access Protocol, Availability, RU's, Integrated Client Storage
  (TiB), Usable Capacity (TiB), Provisioned Power (W)), then one block per workload whose columns are
  named `<Block> - <column>` (Training, Checkpointing, VDB, KVCache and KVCache's three option
  groups). A row fills the SUT block and its own workload block; every other cell is blank. Ours add
  three columns at the end: Verdict (closed | open | invalid, this suite's), Findings (their count) and
  Figures (recomputed: re-derived from the ranks' records; claimed: the summaries' figures as published).
- Division: the path's division upper-cased (CLOSED, OPEN). Benchmark Type: training, checkpointing,
  kv_cache, vector_database. Model: Unet3D, RetinaNet, 8B, 70B, 405B, 1250B; blank for kv_cache and
  vector_database.
- Name: the system name linking `<division>/<org>/systems/<system>.yaml`; Description: "PDF" linking
  the .pdf; Code and Logs: "code" / "logs" linking the run's code image `<org>/code-<hash8>/`. A link
  is `<a href="HREF">TEXT</a>` in the CSV and {"text", "href"} in the JSON.
- Type: Shared when the solution declares simultaneous write and read, else Failover; then its
  storage_location ("remote and local" for remote_and_local), then its product_API; blank when one is
  missing. Access Protocol: POSIX for a file benchmark_API, else S3. Availability title-cased (RDI
  kept). Provisioned Power: blank unless the deployment is onprem.
- Figures unrounded, in the units the column names (GiB/s, seconds, ms, %): training Read B/W = the
  mean over the five measured runs of train_io_mean_MB_per_second / 1024; checkpointing B/W and
  durations = the means over the write (read) invocations; Checkpoint Mode Full or Subset; DP
  Instances the closed GPU count over the GPUs per data-parallel instance (8B 1, 70B 8, 405B 2, 1T 2).
- Rows sorted by division, organisation, system, benchmark type, model, accelerator; Public IDs
  v3.0-0001... in that order (a tree without reportgen's public_ids.json registry).

Every cell a spreadsheet would run as a formula is escaped (suite.report.escape.csv_cell).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from suite.numbers import CLAIMED
from suite.report import escape

SUT = ["Public ID", "Organization", "Division", "Benchmark Type", "Model", "Name", "Description", "Type",
       "Access Protocol", "Availability", "RU's", "Integrated Client Storage (TiB)", "Usable Capacity (TiB)",
       "Provisioned Power (W)"]
BLOCKS = {  # benchmark type -> (block prefix, its columns)
    "training": ("Training", ["Accelerator Type", "# Client Nodes", "Code", "Logs", "# Simulated Accelerators",
                              "Read B/W (GiB/s)"]),
    "checkpointing": ("Checkpointing", ["Checkpoint Mode", "# Client Nodes", "DP Instances", "Code", "Logs",
                                        "Write B/W (GiB/s)", "Write Duration (secs)", "Read B/W (GiB/s)",
                                        "Read Duration (secs)"]),
    "vector_database": ("VDB", ["# Client Nodes", "Code", "Logs", "Vector Count", "Vector Dimension", "Index Type",
                                "Queries per Sec", "Query Latency (ms)", "Recall Percentage", "Storage IOPs",
                                "Read B/W (GiB/s)"]),
    "kv_cache": ("KVCache", ["# Client Nodes", "Code", "Logs"]),
}
KV_GROUPS = [("1", "llama3.1-8b Storage Only"), ("2", "llama3.1-8b Storage + Mem"), ("3", "llama3.1-70b Storage Only")]
KV_METRICS = ["Throughput (tok/s)", "Read B/W (GiB/s)", "Write B/W (GiB/s)", "P95 Read Latency (ms)"]
EXTRA = ["Verdict", "Findings", "Figures"]      # Figures: recomputed (from the ranks' records) or claimed
MODEL_LABELS = {"unet3d": "Unet3D", "retinanet": "RetinaNet", "llama3-8b": "8B", "llama3-70b": "70B",
                "llama3-405b": "405B", "llama3-1t": "1250B"}
DP_INSTANCES = {"llama3-8b": 8 // 8, "llama3-70b": 64 // 8, "llama3-405b": 512 // 256, "llama3-1t": 1024 // 512}


def _columns() -> list[str]:
    cols = list(SUT)
    for prefix, names in BLOCKS.values():
        cols += [f"{prefix} - {n}" for n in names]
    for _, label in KV_GROUPS:
        cols += [f"KVCache {label} - {m}" for m in KV_METRICS]
    return cols + EXTRA


COLUMNS = _columns()


@dataclass(frozen=True)
class Link:
    """A cell that is visible text and a repository-relative address."""

    text: str
    href: str


def kv_column(option: str, metric: str) -> str:
    """The column of one kv_cache option's figure (option "1".."3", metric one of KV_METRICS)."""
    return f"KVCache {dict(KV_GROUPS)[option]} - {metric}"


def block(benchmark: str, values: dict) -> dict:
    """A workload block's cells, named as the file names them, from {column without prefix: value}
    (kv_cache: and "options": {"1".."3": {metric column: value}})."""
    prefix, names = BLOCKS[benchmark]
    out = {f"{prefix} - {k}": v for k, v in values.items() if k in names}
    options = values.get("options") if benchmark == "kv_cache" else None
    for opt, figs in (options or {}).items():
        if str(opt) in dict(KV_GROUPS) and isinstance(figs, dict):
            out.update({kv_column(str(opt), m): v for m, v in figs.items() if m in KV_METRICS})
    return out


def training(row: dict) -> dict:
    return block("training", {"Accelerator Type": row.get("accelerator"), "# Client Nodes": row.get("client_hosts"),
                              "# Simulated Accelerators": row.get("accelerators"),
                              "Read B/W (GiB/s)": row.get("read_gib_s")})


def checkpointing(row: dict) -> dict:
    mode = row.get("mode")
    return block("checkpointing", {
        "Checkpoint Mode": mode.capitalize() if isinstance(mode, str) else None,
        "# Client Nodes": row.get("client_hosts"), "DP Instances": DP_INSTANCES.get(row.get("model")),
        "Write B/W (GiB/s)": row.get("write_gib_s"), "Write Duration (secs)": row.get("write_duration_s"),
        "Read B/W (GiB/s)": row.get("read_gib_s"), "Read Duration (secs)": row.get("read_duration_s")})


def sut(division: str, org: str, system: str, sys_row: dict | None) -> dict:
    """The System-Under-Test block (Public ID filled once the rows are sorted)."""
    s = sys_row or {}
    avail = s.get("availability")
    power = s.get("provisioned_power_w") if s.get("deployment") == "onprem" else None
    base = f"{division}/{org}/systems/{system}"
    return {"Organization": org, "Division": division.upper(), "Name": Link(system, f"{base}.yaml"),
            "Description": Link("PDF", f"{base}.pdf"), "Type": s.get("sut_type"),
            "Access Protocol": s.get("access_protocol"),
            "Availability": None if not isinstance(avail, str) else avail if avail.isupper() else avail.capitalize(),
            "RU's": s.get("rack_units"), "Integrated Client Storage (TiB)": s.get("int_client_store_tib"),
            "Usable Capacity (TiB)": s.get("usable_capacity_tib"), "Provisioned Power (W)": power}


def code_links(benchmark: str, org: str, code_hash: str | None) -> dict:
    if not code_hash:
        return {}
    prefix = BLOCKS[benchmark][0]
    href = f"{org}/code-{code_hash[:8]}/"
    return {f"{prefix} - Code": Link("code", href), f"{prefix} - Logs": Link("logs", href)}


def row(benchmark: str, model: str, accelerator, sut_cells: dict, cells: dict, verdict: str, findings: int,
        figures: str | None = None) -> dict:
    """One full row: every column present, blank where it does not apply; `_key` sorts it."""
    out = {c: None for c in COLUMNS}
    out.update(sut_cells)
    out.update(cells)
    out["Benchmark Type"] = benchmark
    out["Model"] = "" if benchmark in ("kv_cache", "vector_database") else MODEL_LABELS.get(model, model)
    out["Verdict"], out["Findings"], out["Figures"] = verdict, findings, figures or CLAIMED
    out["_key"] = (sut_cells.get("Division", "").lower(), sut_cells.get("Organization", ""),
                   sut_cells["Name"].text if isinstance(sut_cells.get("Name"), Link) else "", benchmark,
                   "" if benchmark in ("kv_cache", "vector_database") else model or "", str(accelerator or ""))
    return out


def numbered(rows: list[dict], ruleset: str) -> list[dict]:
    """The rows in reportgen's order with their Public IDs (<round>-NNNN), the sort key dropped."""
    out = []
    for i, r in enumerate(sorted(rows, key=lambda r: r["_key"]), 1):
        r = {k: v for k, v in r.items() if k != "_key"}
        r["Public ID"] = f"{ruleset}-{i:04d}"
        out.append(r)
    return out


def _plain(value):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return value


def csv_text(rows: list[dict]) -> str:
    """results.csv: the header, then each row; links as anchors, numbers as Python writes them
    (suite.report.escape.csv_text: quoted, no formula runs)."""
    def cell(v):
        v = _plain(v)
        return f'<a href="{_attr(v.href)}">{_attr(v.text)}</a>' if isinstance(v, Link) else v
    return escape.csv_text(COLUMNS, [[cell(r.get(c)) for c in COLUMNS] for r in rows])


def _attr(text: str) -> str:
    return escape.html_text(text)


def json_text(rows: list[dict]) -> str:
    """results.json: a list of objects, every column in order; links as {"text", "href"}."""
    def cell(v):
        v = _plain(v)
        return {"text": v.text, "href": v.href} if isinstance(v, Link) else v
    doc = [{c: cell(r.get(c)) for c in COLUMNS} for r in rows]
    return json.dumps(doc, indent=2, allow_nan=False, ensure_ascii=False) + "\n"


def where(path: Path, root: Path) -> tuple[str, str, str] | None:
    """(division, organisation, system) of a path `<division>/<Org>/results/<system>/...` under root."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        parts = Path(path).parts
    for i in range(len(parts) - 3):
        if parts[i].lower() in ("closed", "open") and parts[i + 2] == "results":
            return parts[i].lower(), parts[i + 1], parts[i + 3]
    return None


def assemble(res, others: list) -> list[dict]:
    """Every row of a checked tree (suite.published.check's Result): its training and checkpointing
    results, and `others`: (path, [(table, row)]) the kinds that checked its kv_cache and
    vector_database folders gave (row: the table's cells by column without the block prefix, its
    verdict, findings count and leaf path)."""
    systems = {(s["division"], s["org"], s["system"]): s for s in getattr(res, "systems", [])}
    out = []
    for r in res.rows:
        mine = _rel(r["path"], res.root)
        count = sum(1 for f in res.findings if f.path == mine or f.path.startswith(mine + "/"))
        cells = training(r) if r["benchmark"] == "training" else checkpointing(r)
        cells.update(code_links(r["benchmark"], r["org"], r.get("code_image")))
        s = sut(r["division"], r["org"], r["system"], systems.get((r["division"], r["org"], r["system"])))
        out.append(row(r["benchmark"], r["model"], r.get("accelerator"), s, cells, r.get("verdict", ""), count,
                       r.get("figures")))
    for path, taken in others:
        place = where(path, res.root)
        if place is None:
            continue
        for table, values in taken:
            if table not in BLOCKS:
                continue
            cells = block(table, values)
            cells.update(code_links(table, place[1], pointer(values.get("path"), res.root)))
            s = sut(*place, systems.get(place))
            out.append(row(table, values.get("model", ""), "", s, cells, values.get("verdict", ""),
                           values.get("findings", 0), values.get("figures")))
    return numbered(out, res.ruleset)


def pointer(leaf, root: Path) -> str | None:
    """The code image a leaf's `.mlps-code-image` names (its 32-hex hash), None where it has none."""
    from suite.errors import ResultError
    from suite.layouts.leaf_files import pointer as read

    p = Path(leaf) / ".mlps-code-image" if leaf else None
    if p is None or not p.is_file() or p.is_symlink():
        return None
    try:
        return read(p, root)[1]
    except ResultError:
        return None


def _rel(path, root) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)
