"""Series of the history: the entries of one kind and identity (workload, accelerator, dataset, round,
division: what `suite compare` would compare, suite.benchmark.identity_key) on one system (its
fingerprint), oldest first; per entry one value of a figure (the geometric mean of its runs) with its
run-to-run spread; the change points of each series (suite.history.changepoints) with a verdict per
figure direction; and the baseline `suite compare RESULT --baseline history` compares a result with.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

from suite.history import changepoints
from suite.history.entry import APART, OK, Entry, key_of

DEFAULT_FIGURE = "samples_per_second"
REGRESSION, IMPROVEMENT = "regression", "improvement"
FIRST = ("dataset_size", "record_size", "ruleset", "division")    # a series' name: these identity fields first
SHOWN_IDS = 12              # entry ids a line names one by one (runs of consecutive ids as ranges)


def key(e: Entry) -> str:
    return e.series()


def described(e: Entry) -> str:
    """A series for people: workload, accelerator, the rest of its identity, system."""
    rest = [str(e.identity[k]) for k in sorted(e.identity, key=lambda k: (FIRST.index(k) if k in FIRST else len(FIRST), k))
            if k not in ("workload", "accelerator") and e.identity[k] is not None]
    said = f"{e.workload or e.kind} {e.accelerator or '-'}" + (f" ({', '.join(rest)})" if rest else "")
    apart = " (an older store's entry without an identity: a series of its own)" if e.series().startswith(APART) else ""
    return f"{said} on {e.system_label} [{e.system_fp[:8]}]{apart}"


@dataclass
class Point:
    entry: Entry
    value: float
    low: float                  # the entry's slowest and fastest run (its run-to-run spread)
    high: float
    runs: int


@dataclass
class Series:
    key: str
    figure: str
    label: str
    higher_is_better: bool
    first: Entry                # its first entry: kind, workload, accelerator, identity, system
    points: list[Point] = field(default_factory=list)
    changes: list[changepoints.Change] = field(default_factory=list)

    def name(self) -> str:
        return described(self.first)

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
    out: dict[str, Series] = {}
    for e in entries:
        f = e.figure(figure)
        if e.status != OK or f is None or f.point() is None:
            continue
        s = out.get(key(e))
        if s is None:
            s = out[key(e)] = Series(key(e), figure, f.label, f.higher_is_better, e)
        low, high = f.spread()
        s.points.append(Point(e, f.point(), low, high, len(f.positive())))
    for s in out.values():
        s.points.sort(key=lambda p: (p.entry.when(), p.entry.id))
        if detect:
            s.changes = changepoints.changes([p.value for p in s.points])
    return sorted(out.values(), key=lambda s: (s.name(), s.key))


def ids(found) -> str:
    """Entry ids as people read them: #3, #5-#9, #12 (past SHOWN_IDS runs: the first ones and how many more)."""
    nums, runs = sorted({e if isinstance(e, int) else e.id for e in found}), []
    for n in nums:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    said = [f"#{a}" if a == b else f"#{a}-#{b}" for a, b in runs]
    return ", ".join(said[:SHOWN_IDS]) + (f" and {len(said) - SHOWN_IDS} more runs of ids" if len(said) > SHOWN_IDS else "")


def baseline(store, measured):
    """The series of `measured` (a suite.benchmark.Measured) in the store, as one Measured: per figure
    the runs of every entry since the series' last change point (its current level), the result itself
    left out (same content hash or path). Its label names exactly the entries used; its notes say why
    each other entry was left out. None when the series has no usable entry."""
    from suite.benchmark import Measured, Samples
    from suite.history import record, store as stores

    fp = record.fingerprint(_redacted(measured.system))
    wanted = key_of(measured.kind, measured.identity, fp)
    own, path = record.content_hash(measured.path), os.path.realpath(measured.path)
    found, left = [], []
    for e in store.entries(series_key=wanted):
        why = ("the result itself" if e.content_hash == own or e.results_path == path else
               e.status if e.status != OK else "no figures" if not e.figures else None)
        (left.append(f"{ids([e])}: {why}") if why else found.append(e))
    workload = measured.identity.get("workload")
    others = [e for e in store.entries(kind=measured.kind, workload=workload, figures=False) if key(e) != wanted]
    if others:
        left.append(f"{ids(others)}: other series of {workload or measured.kind} (another dataset, round, "
                    f"division, system ...)")
    figures, used = [], set()
    for name in [f.name for f in measured.figures]:
        level, before = _current_level(found, name)
        vals = [x for e in level for x in e.figure(name).positive()]
        if not vals:
            continue
        used |= {e.id for e in level}
        f = level[-1].figure(name)
        if before:
            left.append(f"{ids(before)}: before the last change point of {f.label} (at #{level[0].id})")
        figures.append(Samples(name=name, label=f.label, higher_is_better=f.higher_is_better, per_run=tuple(vals),
                               per_epoch=tuple(ep for e in level for ep in e.figure(name).per_epoch)))
    if not figures:
        return None
    first = next(e for e in found if e.id in used)
    return Measured(path=measured.path, kind=measured.kind, label=f"history: {len(used)} entries, {ids(used)}",
                    identity=dict(measured.identity), system=dict(first.system), figures=tuple(figures),
                    notes=tuple(left), when=max(e.when() for e in found if e.id in used),
                    source=f"history store {stores.shown(store.where)}, series {described(first)}")


def _current_level(entries: list[Entry], name: str) -> tuple[list[Entry], list[Entry]]:
    """(the entries since the last change point of figure `name`: all of them without one; those before)."""
    having = [e for e in entries if e.figure(name) is not None and e.figure(name).point() is not None]
    if not having:
        return [], []
    values = [e.figure(name).point() for e in having]
    found = changepoints.find(values) if all(math.isfinite(v) and v > 0 for v in values) else []
    return (having[found[-1]:], having[:found[-1]]) if found else (having, [])


def _redacted(system: dict) -> dict:
    from suite import redact

    return redact.mapping(system)
