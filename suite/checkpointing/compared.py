"""The checkpointing kind's figures for `suite compare` and `suite history` (suite.benchmark.Measured):
per phase directory (a write or a read), per complete run its GiB/s and mean seconds per checkpoint,
re-derived from the ranks' records by suite.checkpointing.figures.run (never results.json's or the
run set's claims); per checkpoint its own GiB/s and seconds (the per-epoch values)."""

from __future__ import annotations

from pathlib import Path

from suite.errors import SuiteError
from suite.checkpointing import figures


def measured(path: Path) -> list:
    """Each phase directory under `path` as suite.benchmark.Measured: per complete run its GiB/s and
    mean duration per checkpoint, re-derived from the ranks' records (figures.run), never the claims
    of results.json or the run set; per checkpoint its own GiB/s and duration (the per-epoch values)."""
    from suite.benchmark import Measured
    from suite.checkpointing.check import Phase, phase_dirs
    from suite.harness import hostfacts
    from suite.harness.storagerun import storage_dir

    out = []
    for d in phase_dirs(storage_dir(Path(path))):
        ph = Phase(d)
        rs, which = ph.run_set, ph.run_set["phase"]
        done, notes = [], []
        for p, doc in ph.runs:
            again = figures.run(p.parent, doc) if doc["status"] == "complete" else None
            cks = [c for c in (again.checkpoints if again else []) if c["phase"] == which and c["duration_s"] > 0]
            if cks:
                done.append((doc, cks))
            else:
                notes.append(f"{p.parent.name}: left out ({doc['status']}, no {which} checkpoints)")
        docs = [doc for doc, _ in done]
        out.append(Measured(
            path=d, kind="checkpointing", label=f"{rs['workload']} {which} ({d.name})",
            identity={"workload": rs["workload"], "phase": which, "mode": rs["mode"], "miniature": rs["miniature"],
                      "processes": rs["processes"], "ruleset": _ruleset(ph), "division": rs["division"]},
            system={"accelerators": str(rs["processes"]),
                    "hostnames": ", ".join(sorted({h for doc in docs for h in doc["hosts"]})) or None,
                    "fsync": _one(str(doc.get("fsync")) for doc in docs),
                    **hostfacts.system(docs[0] if docs else {})},
            figures=tuple(f for f in _ckpt_figures(which, [c for _, c in done]) if f.per_run),
            notes=tuple(notes), when=_iso_utc(docs[0]["start_unix_s"]) if docs else None))
    return out


def _ckpt_figures(which: str, runs: list[list[dict]]) -> tuple:
    from suite.benchmark import Samples

    def samples(name, label, key, better):
        per_epoch = tuple(tuple(c[key] for c in cks) for cks in runs)
        first = tuple(e[0] / later for e in per_epoch if len(e) >= 2 and (later := sum(e[1:]) / len(e[1:])) > 0)
        return Samples(name=name, label=label, higher_is_better=better,
                       per_run=tuple(sum(e) / len(e) for e in per_epoch), per_epoch=per_epoch, first_to_later=first)
    return (samples(f"{which}_gib_s", f"{which} GiB/s", "throughput_gib_s", True),
            samples(f"{which}_duration_s", f"{which} s per checkpoint", "duration_s", False))


def _ruleset(ph) -> str | None:
    from suite.checkpointing.check import _ruleset_of
    from suite.rules import rulesets

    try:
        return _ruleset_of(ph, "auto", rulesets.covering("checkpointing"))
    except SuiteError:
        return None


def _one(values) -> str | None:
    vals = sorted(set(values))
    return ", ".join(vals) or None


def _iso_utc(t: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(t, timezone.utc).replace(tzinfo=None).isoformat(timespec="microseconds")
