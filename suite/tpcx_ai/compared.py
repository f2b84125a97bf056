"""The TPCx-AI kind's figures for `suite compare` and `suite history` (suite.benchmark.Measured): one
result per run (or FDR data file): AIUCpm where the run is complete, the metric's components (load
TLD, power training TPTT, power serving TPST, throughput TTT; seconds, lower is better) and each use
case's power-phase times (training, serving 1, serving 2).

Every figure is re-derived as `suite metrics` derives it (suite.tpcx_ai.fdr): from the jobs' start
and end times where the result records them (our runs), never from the result's stated `metric` or
`use_case_results`; an FDR data file without jobs gives its stated per-use-case times, the lowest
level it has. One run is one value per figure: a comparison of two runs has no interval.
"""

from __future__ import annotations

from pathlib import Path

from suite.benchmark import Measured, Samples
from suite.errors import SuiteError
from suite.tpcx_ai import fdr

COMPONENTS = (("tld_s", "TLD s (load)"), ("tptt_s", "TPTT s (training)"), ("tpst_s", "TPST s (serving)"),
              ("ttt_s", "TTT s (throughput)"))
PHASES = (("training_s", "training"), ("serving_1_s", "serving 1"), ("serving_2_s", "serving 2"))
SYSTEM_KEYS = ("cpu_count", "hostname", "machine", "memory_bytes", "system")


def measured(path: Path) -> list[Measured]:
    data = fdr.load(path)
    res = data.compute()
    inputs = data.inputs
    figs = []
    if res.aiucpm_unrounded is not None:
        figs.append(_one("aiucpm", "AIUCpm", True, res.aiucpm_unrounded))
    figs += [_one(name, label, False, getattr(res, name)) for name, label in COMPONENTS]
    for key, phase in PHASES:
        times = getattr(inputs, key) or {}
        figs += [_one(f"uc{uc:02d}_{key}", f"UC{uc} {phase} s", False, t) for uc, t in sorted(times.items())]
    raw = _raw(data)
    notes = [] if res.aiucpm_unrounded is not None else [f"AIUCpm: not computed (use cases missing: {res.missing})"]
    identity = {"workload": "tpcx-ai", "scale_factor": res.scale_factor, "streams": res.streams,
                "use_cases": ",".join(str(u) for u in sorted(inputs.training_s or {})), "kit_version": data.kit_mode}
    host = raw.get("host") if isinstance(raw.get("host"), dict) else {}
    system = {f"host.{k}": str(host[k])[:120] for k in SYSTEM_KEYS if host.get(k) is not None}
    system["processes"] = None if raw.get("processes") is None else str(raw.get("processes"))[:20]
    when = raw.get("started_at")
    return [Measured(path=data.path.parent if data.path.name == fdr.RUN_FILE else data.path, kind="tpcx-ai",
                     label=f"TPCx-AI SF {res.scale_factor:g} ({data.path.parent.name})", identity=identity,
                     system=system, figures=tuple(f for f in figs if f.per_run), notes=tuple(notes),
                     when=when.rstrip("Z") if isinstance(when, str) else None)]


def _one(name: str, label: str, higher: bool, value) -> Samples:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    return Samples(name=name, label=label, higher_is_better=higher, per_run=(float(value),) if ok else ())


def _raw(data) -> dict:
    """The run's own document (host, processes, start), where the path is a run of ours."""
    from suite.tpcx_ai import leaf as result

    if data.path.name != fdr.RUN_FILE:
        return {}
    try:
        doc = result.read(data.path)
    except SuiteError:
        return {}
    return doc if isinstance(doc, dict) else {}
