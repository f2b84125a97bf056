"""Facts of a v3.0 training result re-derived from its evidence, never taken from a figure the leaf
states (issue 36, "results that lie"): each returns a list of Items, one per violation AND one per fact
that cannot be computed, so a rule over it (op: empty) is a finding either way, never a skipped rule.

- `au(summary)`: a run's AU mean is the mean of its per-epoch `train_au_percentage` (DLIO's
  per-epoch array); the recorded `train_au_mean_percentage` must be that mean (3.3.2);
- `dataset_short(...)`: a run's num_files_train against the round's dataset-size rule
  (Rules.md 3.1.2, `datasize:` of rules/<round>/ruleset.yaml), from the run's own host memory
  and accelerators and the result's dlio_config (record length, batch);
- `closed_values(...)`: a closed run's dlio_config (metadata `parameters`) against the
  workload's closed values (workloads/<model>.yaml for its accelerator) (3.6.2);
- `runs_problems(runs)`: runs that overlap, come from another host, or repeat another's figures.
"""

from __future__ import annotations

from statistics import fmean

from suite.errors import SuiteError
from suite.numbers import is_number
from suite.rules import rulesets
from suite.rules.ops import Item

GIB = 1 << 30
AU_TOLERANCE_PCT = 0.01       # the recorded mean may differ from the re-derived one by rounding only
# dlio_config keys a closed run may not change, with the Workload attribute holding the closed value
CLOSED_VALUES = (("reader.batch_size", "batch_size"), ("train.computation_time", "computation_time_s"),
                 ("dataset.record_length_bytes", "record_length_bytes"),
                 ("dataset.num_samples_per_file", "num_samples_per_file"), ("dataset.format", "format"),
                 ("train.epochs", "epochs"))


def au(summary) -> tuple[float | None, list]:
    """(the run's AU mean re-derived from its per-epoch AU, [Items]): a missing or non-numeric
    per-epoch array, a missing or non-numeric recorded mean, or a recorded mean that is not the
    mean of the per-epoch figures, is an Item."""
    where = summary.path
    epochs = summary.metric.get("train_au_percentage")
    recorded = summary.metric.get("train_au_mean_percentage")
    out = []
    if not isinstance(epochs, list) or not epochs:
        out.append(Item(_shown(epochs), where, "metric.train_au_percentage",
                        "the per-epoch AU figures (a non-empty list of numbers)"))
        derived = None
    else:
        derived = fmean(epochs)
    if not isinstance(recorded, float):
        out.append(Item(_shown(recorded), where, "metric.train_au_mean_percentage", "the run's AU mean (a number)"))
    elif derived is not None and abs(recorded - derived) > AU_TOLERANCE_PCT:
        out.append(Item(f"{recorded:.3f}", where, "metric.train_au_mean_percentage",
                        f"{derived:.3f} (the mean of train_au_percentage)"))
    return derived, out


def _shown(v) -> str:
    return "absent" if v is None else repr(v)[:60]


def _param(meta_doc: dict, dotted: str):
    cur = meta_doc
    for k in dotted.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(k)
    return cur


def _number(v):
    """A dlio_config value as a number: mlpstorage records some as strings ("55500", "0.162")."""
    if is_number(v):
        return v
    if isinstance(v, str) and len(v) < 32:
        try:
            return float(v)
        except ValueError:
            return None
    return None


def required_files(summary, params: dict, round_name: str) -> tuple[int | None, str]:
    """(the files the round's dataset-size rule demands of this run, or None and why not)."""
    try:
        size = rulesets.get(round_name).datasize
    except SuiteError as exc:
        return None, str(exc)
    rec = _number(_param(params, "dataset.record_length_bytes"))
    batch = _number(_param(params, "reader.batch_size"))
    spf = _number(_param(params, "dataset.num_samples_per_file")) or 1
    mem, n, hosts = summary.host_memory_gib, summary.num_accelerators, summary.num_hosts
    missing = [name for name, v in (("dataset.record_length_bytes", rec), ("reader.batch_size", batch),
                                    ("host_memory_GB", sum(mem) if mem else None), ("num_accelerators", n))
               if not v or v <= 0]
    if missing or size is None:
        return None, f"no {', '.join(missing) or 'datasize rule'} to size the dataset from"
    if hosts and len(mem) != hosts:
        return None, f"host_memory_GB lists {len(mem)} hosts, num_hosts is {hosts}"
    memory_files = int(sum(mem) * GIB * size.memory_multiple // (spf * rec))
    steps_files = int(size.min_steps * n * batch // spf)
    return max(memory_files, steps_files), ""


def dataset_short(summary, params: dict | None, round_name: str) -> list:
    """[Item] when the run read fewer files than the dataset-size rule demands, or when that cannot be
    computed (no dlio_config, no host memory, no file count)."""
    where = summary.path
    if params is None:
        return [Item("no dlio_config (metadata parameters) in the result", where, "num_files_train",
                     "a dataset sized by the round's rule (Rules.md 3.1.2)")]
    need, why = required_files(summary, params, round_name)
    if need is None:
        return [Item(f"cannot be computed: {why}", where, "num_files_train", "a dataset sized by the round's rule")]
    got = summary.num_files_train
    if got is None or got < need:
        return [Item(_shown(got), where, "num_files_train", f">= {need} (the round's dataset-size rule, from this "
                     f"run's {len(summary.host_memory_gib)} hosts' memory and {summary.num_accelerators} accelerators)")]
    return []


def closed_values(meta, params: dict | None) -> list:
    """[Item] per closed dlio_config value the run changed against workloads/<model>.yaml for its
    accelerator; an Item when the reference or the config cannot be read."""
    from suite.training import workloads

    if meta is None or params is None:
        return [Item("no metadata", None, "parameters", "the run's dlio_config, to compare with the closed values")]
    try:
        ref = workloads.resolve(meta.model or "", meta.accelerator or "")
    except (SuiteError, KeyError, ValueError) as exc:
        return [Item(str(exc)[:160], meta.path, "model, accelerator", "a workload and accelerator of the round")]
    out = []
    for key, attr in CLOSED_VALUES:
        want, got = getattr(ref, attr), _param(params, key)
        num = _number(got) if is_number(want) and not isinstance(want, bool) else None
        same = (num is not None and abs(num - want) <= 1e-9 * max(1.0, abs(want))) if is_number(want) else got == want
        if not same:
            out.append(Item(_shown(got), meta.path, f"parameters.{key}", f"{want!r} (workloads/{ref.name}.yaml, "
                                                                           f"{ref.accelerator})"))
    return out


def runs_problems(runs: list) -> dict:
    """{fact: [Item]}: runs overlapping the next, runs from a host other than the warm-up's, runs whose
    per-epoch figures repeat another run's."""
    timed = [r for r in runs if r.summary is not None]
    overlap = [Item(b.summary.start.isoformat(), b.path / "summary.json", "start",
                    f"at or after {a.ts}'s end ({a.summary.end.isoformat()}): runs one after another")
               for a, b in zip(timed, timed[1:]) if b.summary.start < a.summary.end]
    hosts = [r for r in timed if r.summary.hostname is not None]
    first = hosts[0].summary.hostname if hosts else None
    other = [Item(r.summary.hostname, r.path / "summary.json", "hostname", f"{first} (the warm-up's host)")
             for r in hosts[1:] if r.summary.hostname != first]
    seen, dup = {}, []
    for r in timed:
        key = tuple((k, tuple(v)) for k, v in sorted(r.summary.metric.items()) if isinstance(v, list)) or \
            tuple((k, v) for k, v in sorted(r.summary.metric.items()) if isinstance(v, float))   # no per-epoch lists
        if key and key in seen:
            dup.append(Item(f"the figures of {seen[key]}", r.path / "summary.json", "metric",
                            "a run's own per-epoch figures"))
        seen.setdefault(key, r.ts)
    return {"series.overlap": overlap, "series.other_host": other, "series.duplicate": dup}
