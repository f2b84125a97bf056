"""A sweep's figures re-derived from its runs (issue 36, class 12): sweep.json's claims are never used.

Each point (storage, ceiling) and each confirmation names its `suite run` results dir; its figures
(AU per run and mean, samples/s, MiB/s, first against later epochs, the threshold met) are read again
from that dir's run-<k>/results.json (suite.training.sweep.result.point). A claimed figure that differs
from its runs' is a finding, and the runs' figure is the one used. A point whose runs are not in the
sweep dir (removed, a link, a path leaving the dir) is "claimed, not re-derivable": a finding, and
the point is not used (nothing measured). The summary claims (the ratio to the ceiling, the knee, the
maximum N) are then held to the re-derived points by suite.training.sweep.verify.

`review(doc, path)` -> (the doc with the runs' figures, every finding): what sizing and report use.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path

from suite.errors import SuiteError

MEASURED = ("runs", "runs_complete", "steps_per_epoch", "au_percentage", "au_per_run", "samples_per_second",
            "mib_per_second", "read_mib_per_second", "meets_threshold", "compliant",
            "first_epoch_samples_per_second", "later_epochs_samples_per_second", "first_to_later_ratio",
            "first_epoch_mib_per_second", "later_epochs_mib_per_second")
NOT_REDERIVABLE = "claimed, not re-derivable"
REL = 1e-9


def sweep_dir(path) -> Path:
    path = Path(path)
    return path if path.is_dir() else path.parent


def runs_dir(root: Path, pt: dict) -> Path | None:
    """The point's results dir inside the sweep dir, holding its runs' results.json; None otherwise
    (absent, absolute, leaving the sweep dir, or reached through a link)."""
    from suite import output

    rel = pt.get("results_dir")
    if not isinstance(rel, str) or not rel or Path(rel).is_absolute() or ".." in Path(rel).parts:
        return None
    d = root / rel
    if d.is_symlink() or not d.is_dir() or not output.is_inside(d, root):     # a link out is not its runs
        return None
    from suite.training.sweep import result

    return d if result.run_files(d) else None


def _same(a, b) -> bool:
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a is b or a == b and type(a) is type(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=REL, abs_tol=1e-12)
    return a == b


def _one(found: list, where: str, pt: dict, root: Path) -> None:
    """`pt` given its runs' figures in place (or emptied when it has none to give); findings appended."""
    from suite.training.sweep import result

    d = runs_dir(root, pt)
    derived = None
    if d is not None:
        try:
            derived = result.point(d, root)
        except SuiteError as exc:                  # a broken results.json: not re-derivable, said why
            found.append({"field": where, "claimed": _claim(pt), "derived": NOT_REDERIVABLE,
                          "why": f"its runs cannot be read: {exc}"})
            derived = None
        else:
            for key in MEASURED:
                if not _same(pt.get(key), derived[key]):
                    found.append({"field": f"{where}.{key}", "claimed": pt.get(key), "derived": derived[key],
                                  "why": f"its runs' results.json ({pt.get('results_dir')})"})
    elif pt.get("runs"):                           # it claims runs the sweep dir does not hold
        found.append({"field": where, "claimed": _claim(pt), "derived": NOT_REDERIVABLE,
                      "why": f"no run-<k>/results.json under {pt.get('results_dir')!r} in the sweep dir: not used"})
    if derived is None:
        derived = {k: None for k in MEASURED} | {"runs": 0, "runs_complete": 0, "au_per_run": [],
                                                  "meets_threshold": False, "compliant": False}
    pt.update({k: derived[k] for k in MEASURED})


def _claim(pt: dict) -> str:
    au = pt.get("au_percentage")
    return f"{pt.get('runs')} run(s), AU {au:.2f}%" if isinstance(au, (int, float)) else f"{pt.get('runs')} run(s)"


def review(doc: dict, path) -> tuple[dict, list[dict]]:
    """(the sweep with every figure from its runs, the findings: claims that differ from the runs or
    cannot be re-derived, then the summary claims the re-derived points contradict)."""
    from suite.training.sweep import result, verify

    root = sweep_dir(path)
    out = copy.deepcopy(doc)
    found: list[dict] = []
    for i, p in enumerate(out["points"]):
        for k in ("storage", "ceiling"):
            if isinstance(p.get(k), dict):
                _one(found, f"points[{i}].{k}", p[k], root)
    for i, c in enumerate(out.get("confirmations") or []):
        _one(found, f"confirmations[{i}]", c, root)
    seen = {c["field"] for c in found}
    found += [c for c in verify.contradictions(out) if c["field"] not in seen]
    for p in out["points"]:                          # the summaries shown: the re-derived ones
        p["storage_to_ceiling"] = result.storage_to_ceiling(p.get("storage"), p.get("ceiling"))
    out["knee"] = result.knee(out["points"])
    return out, found


def load(path) -> tuple[dict, list[dict]]:
    """sweep.json loaded (schema-checked, bounded) and reviewed against its runs."""
    from suite.training.sweep import result

    return review(result.load(path), path)
