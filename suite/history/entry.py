"""What `suite history` remembers of one benchmark: a typed record (one row of the store, its figures
beside it). Units in names; the figures are the per-run values `suite compare` uses (warm-up runs
left out), so a series is analysed with the same statistics."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

OK, FAILED, INTERRUPTED = "ok", "failed", "interrupted"
STATUSES = (OK, FAILED, INTERRUPTED)


@dataclass(frozen=True)
class Figure:
    name: str                              # samples_per_second, au_percentage ...
    label: str
    higher_is_better: bool
    per_run: tuple[float, ...]
    per_epoch: tuple[tuple[float, ...], ...] = ()

    def positive(self) -> list[float]:
        """The per-run values a log can take (positive, finite)."""
        return [x for x in self.per_run if isinstance(x, float | int) and math.isfinite(x) and x > 0]

    def point(self) -> float | None:
        """The entry's value: the geometric mean of its runs (None without a positive one)."""
        vals = self.positive()
        return math.exp(math.fsum(math.log(x) for x in vals) / len(vals)) if vals else None

    def spread(self) -> tuple[float, float] | None:
        """The run-to-run spread shown around the point: (lowest, highest) run."""
        vals = self.positive()
        return (min(vals), max(vals)) if vals else None


def key_of(kind: str, identity: dict, system_fp: str) -> str:
    """A series: the results `suite compare` would compare without --allow-different (one kind and
    identity: workload, accelerator, dataset, round, division ..., suite.benchmark.identity_key) on
    one system (its fingerprint)."""
    from suite.benchmark import identity_key

    return f"{identity_key(kind, identity)}@{system_fp}"


APART = "apart:"                           # the key of an older store's entry with no identity to key it by


@dataclass(frozen=True)
class Entry:
    """One recorded benchmark. `id` is 0 before the store gives it one."""

    recorded_at: str                       # ISO 8601 UTC, when it was recorded
    source: str                            # run | import
    status: str                            # ok | failed | interrupted
    kind: str
    workload: str | None
    accelerator: str | None                # type (h100, a100 ...)
    accelerators: int | None               # count
    ruleset: str | None
    division: str | None
    verdict: str                           # compliant | non-compliant | failed | unknown
    system_fp: str                         # fingerprint of the system description (hex)
    system_label: str                      # a hostname or org / system, for people
    results_path: str | None
    content_hash: str | None               # `<algorithm>:<hex>` over the result's files (suite.history.digest)
    started_at: str | None = None          # the result's own start time
    command: tuple[str, ...] = ()          # the command line, credentials redacted
    cwd: str | None = None
    exit_code: int | None = None
    duration_s: float | None = None
    system: dict = field(default_factory=dict)
    identity: dict = field(default_factory=dict)
    hash_scope: dict = field(default_factory=dict)    # {root, exclude} when the hash covers more than results_path
    series_key: str = ""                   # its series (key_of below); "apart:<id>": an older store's, kept apart
    figures: tuple[Figure, ...] = ()
    id: int = 0

    def series(self) -> str:
        """Its series: the recorded key, else the one its kind, identity and system make."""
        return self.series_key or key_of(self.kind, self.identity, self.system_fp)

    def figure(self, name: str) -> Figure | None:
        return next((f for f in self.figures if f.name == name), None)

    def when(self) -> str:
        """The time a series orders it by: the result's start, else when it was recorded."""
        return self.started_at or self.recorded_at

    def to_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "figures"}
        out["command"] = list(self.command)
        out["series_key"] = self.series()
        out["figures"] = [{"name": f.name, "label": f.label, "higher_is_better": f.higher_is_better,
                           "per_run": list(f.per_run), "per_epoch": [list(e) for e in f.per_epoch]}
                          for f in self.figures]
        return out
