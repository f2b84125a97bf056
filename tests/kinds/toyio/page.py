"""toyio's report page: the verdict and figure first, then a row per pass."""

from __future__ import annotations

from pathlib import Path

from suite.report.content import Figures, Page, Section, Table, Verdict
from suite.toyio import check


def build(path: Path) -> Page:
    verdict, found, doc = check.assess(path)
    head = Section("toyio", "toyio", [Verdict(verdict, f"{verdict.upper()}: {len(found)} findings"),
                                      Figures([("read MiB/s", f"{doc['throughput_mib_s']:.1f}", "re-derived")])])
    rows = [[p["pass"], p["files"], p["bytes"], f"{p['throughput_mib_s']:.1f}"] for p in doc["passes"]]
    passes = Section("passes", "Passes", [Table(["pass", "files", "bytes", "MiB/s"], rows)])
    return Page("toyio report", str(path), [head, passes],
                tables={"passes": (["pass", "files", "bytes", "throughput_mib_s"], doc["passes"])})
