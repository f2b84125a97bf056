"""What a `suite run` results dir says about itself: its runs, workload, division, hosts, evidence.

`load(path)` reads R/run-<k>/results.json (schema-checked) for every run; `refusals(results, tree,
hosts)` says, one line each, why the runs may not go into that tree: another system, a workload
mix-up, another ruleset or division, too few runs, a miniature, an incomplete or non-compliant
closed run. `generation_log(results)` finds the data dir's generation_log.json the runs read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import SuiteError, expected_got
from suite.rules import rulesets

RUN_DIR = re.compile(r"^run-(\d+)$")


@dataclass
class RunEvidence:
    path: Path
    doc: dict          # results.json

    @property
    def results_path(self) -> Path:
        return self.path / "results.json"


@dataclass
class Results:
    path: Path
    runs: list[RunEvidence]

    def field(self, name: str) -> list:
        return [r.doc.get(name) for r in self.runs]

    @property
    def workload(self) -> str:
        return self.runs[0].doc["workload"]

    @property
    def accelerator(self) -> str:
        return self.runs[0].doc["accelerator"]


def load(path: Path) -> Results:
    path = Path(path)
    if not path.is_dir():
        raise SuiteError(expected_got(path, "RESULTS", "a `suite run` results directory",
                                      "no such directory" if not path.exists() else "a file"))
    runs = []
    for d in sorted(path.iterdir(), key=lambda p: int(RUN_DIR.match(p.name).group(1)) if RUN_DIR.match(p.name) else 0):
        if RUN_DIR.match(d.name) and not d.is_symlink() and d.is_dir():
            # across hosts (DLIO's shape) results.json is in run-<k>/<rank-0 host>/, the other hosts hold configs/
            across = [h for h in sorted(d.iterdir()) if not h.is_symlink() and (h / "results.json").is_file()]
            if not (d / "results.json").is_file() and len(across) == 1:
                d = across[0]
            if not (d / "results.json").is_file():
                raise SuiteError(expected_got(d / "results.json", "file", "the run's results.json", "none"))
            runs.append(RunEvidence(d, files.load_json(d / "results.json", schema="results")))
    if not runs:
        raise SuiteError(expected_got(path, "runs", "run-<k>/results.json written by `suite run`", "none"))
    return Results(path, runs)


def _same(results: Results, name: str) -> str | None:
    values = results.field(name)
    for run, value in zip(results.runs, values):
        if value != values[0]:
            return expected_got(run.results_path, name, f"{values[0]!r} as in {results.runs[0].results_path}",
                                repr(value))
    return None


def refusals(results: Results, ruleset: str, division: str, hosts: list[str]) -> list[str]:
    """Every reason the runs may not go into a `division`/`ruleset` submission for these hosts."""
    out = [m for m in (_same(results, k) for k in ("workload", "accelerator", "ruleset", "division",
                                                     "num_accelerators")) if m]
    for run in results.runs:
        doc, where = run.doc, run.results_path
        if doc.get("ruleset") != ruleset:
            out.append(expected_got(where, "ruleset", f"{ruleset} (the submission's)", repr(doc.get("ruleset"))))
        if division == "closed" and doc.get("division") != "closed":
            out.append(expected_got(where, "division", "closed (the submission's)", repr(doc.get("division"))))
        stray = sorted(set(doc.get("hosts") or [doc.get("host", {}).get("hostname")]) - set(hosts))
        if stray:
            out.append(expected_got(where, "hosts", f"hosts of the system description ({', '.join(hosts)})",
                                    ", ".join(map(str, stray))))
        if doc.get("miniature"):
            out.append(expected_got(where, "miniature", "false (a miniature run is never valid for submission)",
                                    "true"))
        if doc.get("status") != "complete" or not doc.get("complete"):
            out.append(expected_got(where, "status", "complete", repr(doc.get("status"))))
        comp = doc.get("compliance") or {}
        if division == "closed" and not comp.get("compliant"):
            reasons = "; ".join(map(str, comp.get("reasons") or [])) or "no reason recorded"
            out.append(expected_got(where, "compliance.compliant", "true for the closed division",
                                    f"false ({reasons})"))
    wanted = rulesets.run_count(ruleset)                  # the round's runs.count (ruleset.yaml)
    if division == "closed" and len(results.runs) < wanted:
        out.append(expected_got(results.path, "runs", f"at least {wanted} for the closed division",
                                len(results.runs)))
    return out


def generation_log(results: Results) -> tuple[Path, dict]:
    """The data dir's generation_log.json (schema-checked), matching the runs' dataset."""
    data_dirs = {str((r.doc.get("dataset") or {}).get("data_dir")) for r in results.runs}
    first = results.runs[0]
    if len(data_dirs) != 1 or "None" in data_dirs:
        raise SuiteError(expected_got(first.results_path, "dataset.data_dir", "one data dir for all runs",
                                      ", ".join(sorted(data_dirs))))
    path = Path(data_dirs.pop()) / "generation_log.json"
    if not path.is_file():
        raise SuiteError(expected_got(path, "file", "the generation log `suite datagen` wrote beside the data",
                                      "none (unreadable evidence)"))
    log = files.load_json(path, schema="generation_log")
    ds = first.doc.get("dataset") or {}
    for key, want in (("workload", results.workload), ("accelerator", results.accelerator),
                      ("num_files", ds.get("num_files_train"))):
        if log.get(key) != want:
            raise SuiteError(expected_got(path, key, f"{want!r} as the runs read ({first.results_path})",
                                          repr(log.get(key))))
    return path, log
