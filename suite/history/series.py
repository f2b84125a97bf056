"""Series of the history: the entries of one kind, workload, accelerator type and system fingerprint,
oldest first; per entry one value of a figure (the geometric mean of its runs) with its run-to-run
spread; the change points of each series (suite.history.changepoints) with a verdict per figure
direction; and the baseline `suite compare RESULT --baseline history` compares a result with.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from suite.history import changepoints
from suite.history.entry import OK, Entry

DEFAULT_FIGURE = "samples_per_second"
REGRESSION, IMPROVEMENT = "regression", "improvement"


def key(e: Entry) -> tuple:
    return (e.kind, e.workload, e.accelerator, e.system_fp)


@dataclass
class Point:
    entry: Entry
    value: float
    low: float                  # the entry's slowest and fastest run (its run-to-run spread)
    high: float
    runs: int


@dataclass
class Series:
    key: tuple
    figure: str
    label: str
    higher_is_better: bool
    system_label: str
    points: list[Point] = field(default_factory=list)
    changes: list[changepoints.Change] = field(default_factory=list)

    def name(self) -> str:
        kind, workload, accel, fp = self.key
        return f"{workload or kind} {accel or '-'} on {self.system_label} [{fp[:8]}]"

    def verdict(self, change: changepoints.Change) -> str:
        """regression or improvement (by the figure's direction) when the interval excludes 1, else
        'not significant' (a step the detector found but the neighbours' interval does not confirm)."""
        if change.low is None or change.high is None or change.low <= 1.0 <= change.high:
            return "not significant"
        worse = change.high < 1.0 if self.higher_is_better else change.low > 1.0
        return REGRESSION if worse else IMPROVEMENT


def default_figure(entries: list[Entry]) -> str | None:
    names = [f.name for e in entries for f in e.figures]
    return DEFAULT_FIGURE if DEFAULT_FIGURE in names else (names[0] if names else None)


def build(entries: list[Entry], figure: str, detect: bool = True) -> list[Series]:
    """Every series with at least one completed entry that has `figure`, by the key, each oldest first."""
    out: dict[tuple, Series] = {}
    for e in entries:
        f = e.figure(figure)
        if e.status != OK or f is None or f.point() is None:
            continue
        s = out.get(key(e))
        if s is None:
            s = out[key(e)] = Series(key(e), figure, f.label, f.higher_is_better, e.system_label)
        low, high = f.spread()
        s.points.append(Point(e, f.point(), low, high, len(f.positive())))
    for s in out.values():
        s.points.sort(key=lambda p: (p.entry.when(), p.entry.id))
        if detect:
            s.changes = changepoints.changes([p.value for p in s.points])
    return sorted(out.values(), key=lambda s: tuple(str(x) for x in s.key))


def baseline(store, measured):
    """The series of `measured` (a suite.benchmark.Measured) in the store, as one Measured: per figure
    the runs of every entry since the series' last change point (its current level), the result
    itself left out (same content hash or path). None when the series has no such entry."""
    from suite.benchmark import Measured, Samples
    from suite.history import record

    fp = record.fingerprint(_redacted(measured.system))
    wanted = (measured.kind, measured.identity.get("workload"), measured.identity.get("accelerator"), fp)
    own, path = record.content_hash(measured.path), os.path.realpath(measured.path)
    same = {k: v for k, v in measured.identity.items() if v is not None}
    found = [e for e in store.entries(kind=wanted[0], workload=wanted[1], accelerator=wanted[2])
             if key(e) == wanted and e.status == OK and e.content_hash != own and e.results_path != path
             and e.identity == same]
    if not found:
        return None
    figures = []
    for name in [f.name for f in measured.figures]:
        level = _current_level(found, name)
        vals = [x for e in level for x in e.figure(name).positive()]
        if vals:
            f = level[-1].figure(name)
            figures.append(Samples(name=name, label=f.label, higher_is_better=f.higher_is_better,
                                   per_run=tuple(vals), per_epoch=tuple(ep for e in level for ep in e.figure(name).per_epoch)))
    first = found[0]
    ids = ", ".join(str(e.id) for e in found[-5:])
    return Measured(path=measured.path.parent / f"history:{first.system_label}", kind=measured.kind,
                    label=f"history ({len(found)} entries, last ids {ids})", identity=dict(measured.identity),
                    system=dict(first.system), figures=tuple(figures), when=found[-1].when())


def _current_level(entries: list[Entry], name: str) -> list[Entry]:
    """The entries since the last change point of figure `name` (all of them without one)."""
    having = [e for e in entries if e.figure(name) is not None and e.figure(name).point() is not None]
    if not having:
        return []
    values = [e.figure(name).point() for e in having]
    found = changepoints.find(values) if all(math.isfinite(v) and v > 0 for v in values) else []
    return having[found[-1]:] if found else having


def _redacted(system: dict) -> dict:
    from suite import redact

    return redact.mapping(system)
