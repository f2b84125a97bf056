"""Use cases as data: workloads/tpcx-ai/ucNN.yaml, thresholds and stream orders in rules/tpcx-ai/.

A use-case file (schema suite/tpcx_ai/schemas/tpcxai-usecase.schema.json) names the tables the stages
read, the key columns joining predictions to truth, the algorithm (ours and the kit's, and where
they differ), the params given to train/serve, and the quality metric with its direction. The
threshold for that metric lives in rules/tpcx-ai/thresholds.yaml (ids tpcxai-ucNN-quality); the
throughput-test orders in rules/tpcx-ai/streams.yaml. Both are rule files whose `params` carry
the data (schema suite/tpcx_ai/schemas/tpcxai-thresholds.schema.json).
"""

import math
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import WorkloadError, expected_got

DIRECTION_OP = {"higher": "min", "lower": "max", "none": "none"}


@dataclass(frozen=True)
class UseCase:
    number: int
    name: str
    task: str
    tables: tuple[str, ...]
    keys: tuple[str, ...]
    algorithm: str
    reference_algorithm: str
    differs: str
    params: dict
    metric: str
    direction: str
    path: str = ""
    substitute: str = ""  # what stands in for the kit's model ("" = the kit's): the metric's name is qualified


@dataclass(frozen=True)
class Threshold:
    id: str
    use_case: int
    metric: str
    op: str              # min (value >= threshold), max (value <= threshold) or none
    value: float | None
    source: str

    def passes(self, measured: float) -> bool:
        if self.op == "none":
            return True
        if measured is None or not math.isfinite(measured):
            return False
        return measured >= self.value if self.op == "min" else measured <= self.value

    def describe(self) -> str:
        return "none" if self.op == "none" else f"{self.metric} {'>=' if self.op == 'min' else '<='} {self.value:g}"


def load(path: Path, number: int | None = None) -> UseCase:
    """One use-case file, schema-checked; a problem is a one-line WorkloadError naming file and key."""
    doc = files.load_yaml(Path(path), schema="tpcxai-usecase", error=WorkloadError)
    if number is not None and doc["use_case"] != number:
        raise WorkloadError(expected_got(path, "use_case", number, doc["use_case"]))
    if (doc["metric"] == "none") != (doc["direction"] == "none"):
        raise WorkloadError(expected_got(path, "direction", "none exactly when metric is none", doc["direction"]))
    return UseCase(number=doc["use_case"], name=doc["name"], task=doc["task"], tables=tuple(doc["tables"]),
                   keys=tuple(doc["keys"]), algorithm=doc["algorithm"], reference_algorithm=doc["reference_algorithm"],
                   differs=doc["differs"], params=dict(doc["params"]), metric=doc["metric"],
                   direction=doc["direction"], path=str(path), substitute=doc.get("substitute", ""))


def load_all(registry, numbers) -> dict[int, UseCase]:
    out = {}
    for n in numbers:
        path = registry.workload_file(n)
        if not path.is_file():
            raise WorkloadError(expected_got(path, "use case", f"a definition of use case {n}", "no such file"))
        out[n] = load(path, n)
    return out


def _params(path: Path, key: str):
    doc = files.load_yaml(path, schema="rules", error=WorkloadError)
    params = doc.get("params") or {}
    files.validate(params, "tpcxai-thresholds", f"{path}: params", WorkloadError)
    if key not in params:
        raise WorkloadError(expected_got(path, f"params.{key}", "a list", "none"))
    return params[key]


def thresholds(registry) -> dict[int, Threshold]:
    path = registry.rules_dir() / "thresholds.yaml"
    out = {}
    for i, t in enumerate(_params(path, "thresholds")):
        th = Threshold(**t)
        where = f"{path}: thresholds[{i}]"
        if th.id != f"tpcxai-uc{th.use_case:02d}-quality":
            raise WorkloadError(expected_got(where, "id", f"tpcxai-uc{th.use_case:02d}-quality", th.id))
        if th.use_case in out:
            raise WorkloadError(expected_got(where, "use_case", "one threshold per use case", f"a second for {th.use_case}"))
        if (th.op == "none") != (th.value is None) or (th.op == "none") != (th.metric == "none"):
            raise WorkloadError(expected_got(where, "op", "none exactly when metric is none and value null", th.op))
        out[th.use_case] = th
    return out


def permutations(registry) -> list[list[int]]:
    path = registry.rules_dir() / "streams.yaml"
    perms = _params(path, "permutations")
    for i, p in enumerate(perms):
        if sorted(p) != list(range(1, 11)):
            raise WorkloadError(expected_got(path, f"permutations[{i}]", "a permutation of 1..10", p))
    return perms


def check_against(ucs: dict[int, UseCase], ths: dict[int, Threshold]) -> None:
    """Each use case's metric and direction agree with its threshold."""
    for n, uc in ucs.items():
        th = ths.get(n)
        if th is None:
            raise WorkloadError(expected_got(uc.path, "metric", f"a threshold for use case {n} in thresholds.yaml", "none"))
        if th.metric != uc.metric or DIRECTION_OP[uc.direction] != th.op:
            raise WorkloadError(expected_got(uc.path, "metric", f"{th.metric} ({th.op}) as {th.id} says",
                                             f"{uc.metric} ({uc.direction})"))


def list_rows(registry) -> list[list[str]]:
    """[use case, name, task, algorithm, metric, threshold] for `suite list workloads`."""
    ths = thresholds(registry)
    rows = []
    for n in range(1, 11):
        path = registry.workload_file(n)
        th = ths.get(n)
        if path.is_file():
            uc = load(path, n)
            rows.append([f"UC{n:02d}", uc.name, uc.task, uc.algorithm, uc.metric, th.describe() if th else "?"])
        else:
            rows.append([f"UC{n:02d}", "(not installed)", "", "", th.metric if th else "", th.describe() if th else ""])
    return rows
