"""toyio's figures, always from the reads: per pass MiB/s = bytes / seconds of that pass's reads; the
result's figure is their mean. What `suite compare` measures is the same per-pass list."""

from __future__ import annotations

from pathlib import Path

from suite.benchmark import Measured, Samples
from suite.toyio import leaf


def from_reads(reads: list) -> dict:
    passes: dict[int, list] = {}
    for r in reads:
        passes.setdefault(int(r["pass"]), []).append(r)
    per = [{"pass": k, "files": len(rs), "bytes": sum(r["bytes"] for r in rs),
            "throughput_mib_s": sum(r["bytes"] for r in rs) / 2**20 / max(sum(r["duration_s"] for r in rs), 1e-9)}
           for k, rs in sorted(passes.items())]
    mean = sum(p["throughput_mib_s"] for p in per) / len(per) if per else 0.0
    return {"passes": per, "throughput_mib_s": mean}


def rederive(path: Path) -> dict:
    _, reads = leaf.load(path)
    return from_reads(reads)


def measured(path: Path) -> Measured:
    result, reads = leaf.load(path)
    doc = from_reads(reads)
    return Measured(path=path, kind="toyio", label=path.name,
                    identity={"workload": result.get("workload"), "files": result.get("files")},
                    system={"host": str(result.get("host"))},
                    figures=(Samples("throughput_mib_s", "MiB/s", True,
                                     tuple(p["throughput_mib_s"] for p in doc["passes"])),))
