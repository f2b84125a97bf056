"""toyio's check: every claimed figure against the one re-derived from the reads, three passes, every
file read whole in each pass."""

from __future__ import annotations

from pathlib import Path

from suite.rules import findings
from suite.toyio import figures, leaf


def assess(path: Path):
    result, reads = leaf.load(path)
    doc = figures.from_reads(reads)
    found = []
    if len(doc["passes"]) != 3:
        found.append(findings.make("toyio-passes", "error", "invalid", str(path), "passes", 3, len(doc["passes"])))
    for p in doc["passes"]:
        if p["files"] != result.get("files") or p["bytes"] != p["files"] * 2**20:
            found.append(findings.make("toyio-whole-files", "error", "invalid", str(path), f"pass {p['pass']}.bytes",
                                       (result.get("files") or 0) * 2**20, p["bytes"]))
    claimed = result.get("throughput_mib_s")
    if not isinstance(claimed, (int, float)) or abs(claimed - doc["throughput_mib_s"]) > 1e-6 * doc["throughput_mib_s"]:
        found.append(findings.make("toyio-rederived", "error", "invalid", str(path), "throughput_mib_s",
                                   round(doc["throughput_mib_s"], 3), claimed))
    return findings.verdict(found), found, doc
