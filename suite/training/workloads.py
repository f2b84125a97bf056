"""The training kind's workloads: a training workload file resolved for an accelerator.

A training workload file (suite.storage.workloads lists and loads every workload file) carries DLIO's
section keys (dataset, reader, train, checkpoint, storage, metric) and an `accelerators` block whose
entries override any of them. `resolve()` merges base + accelerator block + --param overrides into one
config (validated again) and a typed `Workload` whose field names carry their units.
"""

import copy
import math
from dataclasses import dataclass, field
from functools import lru_cache

from suite import files
from suite.errors import WorkloadError
from suite.storage import workloads as catalogue
from suite.storage.workloads import paths, setting

TRAINING = "training"     # a training workload file's `benchmark:`
SCHEMA = "workload"       # its schema (suite/training/schemas/workload.schema.json)

SECTIONS = ("dataset", "reader", "train", "checkpoint", "storage", "metric")


MAX_FILE_BYTES = 64 << 30


def param_types() -> dict[str, str]:
    """Every `section.key` a --param may set, with its JSON-schema type."""
    import json

    schema = json.loads(files.schema_path(SCHEMA).read_text())
    out = {}
    for section, spec in schema["$defs"].items():
        for key, prop in spec["properties"].items():
            kind = prop.get("type")
            if kind is None and "enum" in prop:
                kind = "string"
            out[f"{section}.{key}"] = kind
    return out


def parse_params(pairs: list[str]) -> dict[str, object]:
    """Turn ["reader.read_threads=8", ...] into {"reader.read_threads": 8, ...}."""
    types = param_types()
    out: dict[str, object] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        key = key.strip().removeprefix("workload.").removeprefix("++workload.")
        if not sep:
            raise WorkloadError(f"--param {pair!r}: expected key=value, got no '='")
        if key not in types:
            raise WorkloadError(f"--param {key}: expected one of {', '.join(sorted(types))}, got unknown key")
        out[key] = _convert(key, raw.strip(), types[key])
    return out


def _convert(key: str, raw: str, kind: str):
    try:
        if kind == "integer":
            if len(raw) > 20:
                raise ValueError
            return int(raw)
        if kind == "number":
            value = float(raw)
            if not math.isfinite(value):  # NaN passes a schema's minimum; inf overflows the sizing
                raise WorkloadError(f"--param {key}: expected a finite number, got {raw!r}")
            return value
        if kind == "boolean":
            if raw.lower() in ("true", "1", "yes"):
                return True
            if raw.lower() in ("false", "0", "no"):
                return False
            raise ValueError
    except ValueError:
        raise WorkloadError(f"--param {key}: expected {kind}, got {raw!r}") from None
    return raw


@dataclass(frozen=True)
class Workload:
    """A workload resolved for one accelerator type, with units in every name."""

    name: str
    accelerator: str
    rulesets: tuple[str, ...]
    framework: str
    format: str
    num_samples_per_file: int
    record_length_bytes: float
    record_length_stdev_bytes: float
    batch_size: int
    read_threads: int
    computation_threads: int
    prefetch_size: int
    transfer_size_bytes: int
    odirect: bool
    file_shuffle: str
    sample_shuffle: str
    seed: int
    epochs: int
    computation_time_s: float
    total_training_steps: int | None
    checkpoint_model_size_bytes: int | None
    checkpoint_after_epoch: int | None
    au_threshold: float
    num_files_train: int | None
    num_subfolders_train: int
    data_folder: str
    config: dict = field(compare=False, repr=False)  # the merged DLIO-style config
    miniature_cache_budget_bytes: int | None = None  # the miniature's page-cache budget (suite run without --data-dir)
    model_type: str | None = None          # DLIO's model.type (cnn): the reference's workload config
    scaled_down: bool = False              # a miniature by construction (flux-mini): every run labelled MINIATURE

    @property
    def dlio_name(self) -> str:
        """The Hydra workload name DLIO uses in overrides.yaml, e.g. unet3d_h100."""
        return self.name if self.accelerator == "v100" else f"{self.name}_{self.accelerator}"


def names() -> list[str]:
    """The training workloads (`benchmark: training`)."""
    return catalogue.names(TRAINING)


def load(name: str) -> dict:
    """The validated training workload file `name` (no accelerator applied); another kind's file is
    refused naming its kind."""
    path = paths().get(name)
    if path is not None and (kind := catalogue.benchmark_of(path)) != TRAINING:
        raise WorkloadError(f"{path}: benchmark: expected a training workload here, got {kind} "
                            f"(suite run --workload {name} runs it)")
    return catalogue.load(name, SCHEMA, TRAINING)


def accelerators(name: str) -> list[str]:
    return sorted(load(name)["accelerators"])


def with_later_rounds(listed) -> tuple[str, ...]:
    """The rounds a workload file lists, and every round that takes its workloads from one of them
    (a round that `extends:` a listed one and declares no `workloads:` of its own: rules/*/ruleset.yaml)."""
    from suite.rules import rulesets

    later = [r.name for r in rulesets.discover().values() if r.workloads_of in listed and r.name not in listed]
    return (*listed, *later)


def resolve(name: str, accelerator: str, params: dict[str, object] | None = None) -> Workload:
    doc = load(name)
    path = paths()[name]
    accels = doc["accelerators"]
    if accelerator not in accels:
        raise WorkloadError(f"{path}: accelerators: expected one of {', '.join(sorted(accels))}, got {accelerator!r}")
    config = {s: copy.deepcopy(doc.get(s, {})) for s in SECTIONS}
    for section in SECTIONS:
        config[section].update(copy.deepcopy(accels[accelerator].get(section, {})))
    for dotted, value in (params or {}).items():
        section, key = dotted.split(".", 1)
        config[section][key] = value
    probe = {"schema_version": 1, "name": name, "benchmark": TRAINING, "framework": doc["framework"],
             "accelerators": {accelerator: {"rulesets": accels[accelerator]["rulesets"], "train": {}}}, **config}
    files.validate(probe, SCHEMA, f"{path} (with --param)", WorkloadError)
    ds = config["dataset"]
    file_bytes = ds["num_samples_per_file"] * (ds["record_length"] + 4 * ds.get("record_length_stdev", 0))
    if file_bytes > MAX_FILE_BYTES:  # a file is written and read in memory-bounded pieces, but not this
        raise WorkloadError(f"{path} (with --param): dataset.num_samples_per_file x record_length: expected files "
                            f"up to {MAX_FILE_BYTES >> 30} GiB, got {file_bytes / (1 << 30):.3g} GiB")
    if ds["format"] == "parquet" and (problem := _parquet_problem(name, accelerator, config)):
        raise WorkloadError(f"{path}: {problem}")
    if "computation_time" not in config["train"]:
        raise WorkloadError(f"{path}: accelerators.{accelerator}.train.computation_time: expected a number, got none")
    ds, rd, tr, ck = config["dataset"], config["reader"], config["train"], config["checkpoint"]
    return Workload(
        name=name, accelerator=accelerator, rulesets=with_later_rounds(accels[accelerator]["rulesets"]),
        framework=doc["framework"], format=ds["format"],
        num_samples_per_file=ds["num_samples_per_file"],
        record_length_bytes=ds["record_length"], record_length_stdev_bytes=ds.get("record_length_stdev", 0),
        batch_size=rd["batch_size"], read_threads=rd.get("read_threads", 1),
        computation_threads=rd.get("computation_threads", 1), prefetch_size=rd.get("prefetch_size", 2),
        transfer_size_bytes=rd.get("transfer_size", 0), odirect=rd.get("odirect", False),
        file_shuffle=rd.get("file_shuffle", "seed"), sample_shuffle=rd.get("sample_shuffle", "seed"),
        seed=rd.get("seed", 100), epochs=tr.get("epochs", 1), computation_time_s=tr["computation_time"],
        total_training_steps=tr.get("total_training_steps"),
        checkpoint_model_size_bytes=ck.get("model_size") if _checkpoints(accels[accelerator]) else None,
        checkpoint_after_epoch=ck.get("checkpoint_after_epoch"),
        au_threshold=config["metric"]["au"], num_files_train=ds.get("num_files_train"),
        num_subfolders_train=ds.get("num_subfolders_train", 0), data_folder=ds.get("data_folder", f"data/{name}/"),
        config=config, miniature_cache_budget_bytes=(doc.get("miniature") or {}).get("cache_budget_bytes"),
        model_type=doc.get("model_type"), scaled_down=bool((doc.get("miniature") or {}).get("scaled_down")),
    )


def _parquet_problem(name: str, accelerator: str, config: dict) -> str | None:
    """Why a parquet dataset's columns do not make its records (suite.training.data.parquet.mismatch)."""
    from types import SimpleNamespace

    from suite.training.data import parquet

    ds = config["dataset"]
    probe = SimpleNamespace(config=config, num_samples_per_file=ds["num_samples_per_file"],
                            record_length_bytes=ds["record_length"])
    return parquet.mismatch(probe)


def _checkpoints(block: dict) -> bool:
    """The accelerator's config writes the end-of-training checkpoint (DLIO's workflow.checkpoint)."""
    return bool((block.get("workflow") or {}).get("checkpoint", True))


@lru_cache(maxsize=None)
def find(name: str | None, accelerator: str | None) -> Workload | None:
    """resolve(), cached, for reading results: None for a workload or accelerator we do not ship."""
    if not (name and accelerator):
        return None
    try:
        return resolve(name, accelerator)
    except Exception:  # noqa: BLE001 - an unknown workload/accelerator pair
        return None


def record_length(config, name: str | None, accelerator: str | None) -> tuple[float | None, str]:
    """Mean bytes per sample of a result and where it came from: its configs/config.yaml (`config`,
    the loaded document) dataset.record_length when positive, else the workload file, else unknown."""
    from suite.numbers import to_float

    conf = config if isinstance(config, dict) else {}
    dataset = conf.get("dataset") if isinstance(conf.get("dataset"), dict) else {}
    for key in ("record_length_bytes", "record_length"):        # mlpstorage's DLIO, DLIO 1.x
        value = to_float(dataset.get(key))
        if value and value > 0:
            return value, f"config.yaml dataset.{key}"
    length = setting(name, accelerator, "dataset", "record_length")
    if length:
        return float(length), f"workloads/{name}.yaml"
    return None, "summary.json train_io_mean_MB_per_second / samples/s"


def au_threshold_percentage(name: str | None, accelerator: str | None) -> float | None:
    """The workload's AU threshold in percent (metric.au x 100: the one source; the rules'
    au_threshold_percentage is derived from it). Without an accelerator (v0.5 names carry none):
    the threshold its accelerators share. None for a workload we do not ship."""
    if name and not accelerator:
        try:
            found = {au_threshold_percentage(name, a) for a in accelerators(name)}
        except WorkloadError:
            return None
        return found.pop() if len(found) == 1 else None
    w = find(name, accelerator)
    return None if w is None else 100.0 * w.au_threshold
