"""TPCx-AI result figures from a data file: YAML, JSON or CSV (schema suite/tpcx_ai/schemas/fdr.schema.json).

A data file carries what AIUCpm@SF and $/AIUCpm@SF are computed from: the scale factor, the
load time, 10 training times, 2 x 10 serving times, the throughput-test elapsed time, the
number of streams, the total price and currency, the availability date and the kit version;
optionally per-job start/end times (`jobs`), quality per use case, and the published figures.

YAML and JSON hold the document directly. CSV holds the same document one value per row, with
the header `field,use_case,stream,value,start_s,end_s` (only `field` and `value` are required):
- a top-level field: `scale_factor,,,10`;
- a per-use-case time: `training_s,3,,113.122`;
- a published figure or a quality entry: `published.aiucpm,,,425.31`, `quality.metric,2,,word_error_rate`;
- a job: `job,<use case>,<stream>,<phase>,<start_s>,<end_s>`;
- a row whose field starts with `#` is a comment.
See docs/fdr-format.md and submissions/examples/dell-sf10-fdr.yaml.
"""

import csv
import datetime
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from suite import files
from suite.errors import ResultError, expected_got
from suite.tpcx_ai import figures as metric

SUFFIXES = (".yaml", ".yml", ".json", ".csv")
RUN_FILE = "tpcxai-result.json"   # what a TPCx-AI run directory of ours holds
TIME_FIELDS = ("load_time_s", "throughput_elapsed_s")
UNIT_SECONDS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "min": 60.0, "h": 3600.0}
TEXT_FIELDS = {"kind", "kit_version", "sponsor", "system", "source", "publication_date",
               "availability_date", "currency", "notes"}
INT_FIELDS = {"schema_version", "streams", "reported_streams"}
_UC_KEY = re.compile(r"^(?:uc)?0?([1-9]|10)$", re.IGNORECASE)
_TIME_TEXT = re.compile(r"^\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|nan|inf|-inf)\s*([a-zA-Z]+)\s*$")


@dataclass
class Fdr:
    path: Path
    doc: dict                       # the document as loaded (after CSV conversion)
    inputs: metric.Inputs
    kit_mode: str | None            # "1.0.2" or "1.0.3"; None for kit_version "unknown"
    jobs: list = field(default_factory=list)
    published: dict = field(default_factory=dict)
    quality: dict = field(default_factory=dict)   # {use case: {metric, value, threshold, ...}}

    def compute(self) -> metric.Result:
        return metric.compute(self.inputs, where=str(self.path))


def load(path) -> Fdr:
    """Load, validate and normalise a data file (or a run directory holding RUN_FILE)."""
    path = Path(path)
    if path.is_dir():
        if not (path / RUN_FILE).is_file():
            raise ResultError(expected_got(path, "kind", f"a directory with {RUN_FILE}", "none there"))
        path = path / RUN_FILE
    suffix = path.suffix.lower()
    partial = False   # a run result of ours may be of a subset of use cases (no AIUCpm, and why)
    if suffix not in SUFFIXES:
        raise ResultError(expected_got(path, "file kind", "a .yaml, .yml, .json or .csv data file", repr(suffix or path.name)))
    if suffix in (".yaml", ".yml"):
        doc = files.load_yaml(path, error=ResultError)
    elif suffix == ".json":
        doc = files.load_json(path, error=ResultError)
        if isinstance(doc, dict) and doc.get("schema_version") == 2 and doc.get("kind") == "tpcx-ai-run":
            from suite.tpcx_ai import leaf as result   # a run's tpcxai-result.json (version 2) in the FDR form

            files.validate(doc, result.SCHEMA, path, ResultError)
            doc = result.fdr_doc(doc, str(path.parent))
            partial = True
    else:
        doc = from_csv(files.read_text(path, error=ResultError), path)
    return from_doc(doc, path, partial)


def from_doc(doc, path, partial: bool = False) -> Fdr:
    where = str(path)
    if not isinstance(doc, dict):
        raise ResultError(expected_got(where, "(top level)", "a mapping of fields", type(doc).__name__))
    doc = _plain(doc)
    for name in metric.PER_USE_CASE:
        value = doc.get(name)
        if value is not None and not isinstance(value, (list, dict)):
            raise ResultError(expected_got(where, name, "a list of up to 10 times (UC1 first) or a mapping uc1..uc10",
                                           f"{type(value).__name__} {value!r}"))
    files.validate(doc, "fdr", where, ResultError)
    kit_mode = {"1.0.2": "1.0.2", "1.0.3": "1.0.3", "1.0.3.1": "1.0.3"}.get(doc["kit_version"])
    price = None if doc.get("total_price") is None else metric.finite_positive(doc["total_price"], where, "total_price")
    metric.finite_positive(doc["scale_factor"], where, "scale_factor")
    jobs = [metric.Job(phase=j["phase"], start_s=j["start_s"], end_s=j["end_s"], use_case=j.get("use_case"),
                       stream=j.get("stream"))
            for j in doc.get("jobs", [])]
    given = {name: _times(doc[name], where, name) for name in metric.PER_USE_CASE if name in doc}
    given.update({name: _time(doc[name], where, name) for name in TIME_FIELDS if name in doc})
    reported = doc.get("reported_streams")
    missing_throughput = ()
    if jobs:   # what the jobs time is derived from them; figures given beside them must agree
        reported, missing_throughput = _from_jobs(jobs, kit_mode, given, reported, where, partial)
    missing = [n for n in (*TIME_FIELDS, *metric.PER_USE_CASE) if n not in given]
    if missing:
        raise ResultError(expected_got(where, missing[0], "a time (or per-job times in `jobs`)", "none"))
    inputs = metric.Inputs(scale_factor=doc["scale_factor"], streams=doc["streams"], reported_streams=reported,
                           total_price=price, currency=doc.get("currency"), missing_throughput=missing_throughput,
                           **given)
    quality = {_uc(k, where, "quality"): v for k, v in doc.get("quality", {}).items()}
    for uc, q in quality.items():
        for key in ("value", "threshold"):   # may be 0 or negative (MCC), never NaN or infinite
            if key in q and not math.isfinite(q[key]):
                raise ResultError(expected_got(where, f"quality.uc{uc}.{key}", "a finite number", repr(q[key])))
    published = doc.get("published", {})
    for key, value in published.items():
        metric.finite_positive(value, where, f"published.{key}")
    data = Fdr(path=Path(path), doc=doc, inputs=inputs, kit_mode=kit_mode, jobs=jobs,
               published=published, quality=quality)
    data.compute()   # refuse now what the metric would refuse (streams, non-positive times, ...)
    return data


def _from_jobs(jobs, kit_mode, given: dict, reported, where: str, partial: bool):
    """Derive the phase times from per-job times into `given` (checking figures stated beside them);
    returns (streams reported, use cases some throughput stream did not run when `partial`)."""
    if kit_mode is None:
        raise ResultError(expected_got(where, "kit_version", "1.0.2 or 1.0.3 when jobs are given", "'unknown'"))
    metric.check_jobs(jobs, where=f"{where}: jobs")
    phases = {j.phase for j in jobs}
    short = metric.incomplete_streams(jobs) if partial else {}
    derived = {}
    try:
        if "load" in phases:
            derived["load_time_s"] = metric.load_time_s(jobs, kit_mode)
        if "throughput" in phases:  # a run of ours may be of a subset of use cases: no AIUCpm, say why
            derived["throughput_elapsed_s"] = metric.throughput_time_s(jobs, kit_mode, complete=not partial)
    except ResultError as exc:
        raise ResultError(f"{where}: {exc}") from None
    if "throughput" in phases:
        found = metric.streams_reported(jobs)
        if reported is not None and reported != found:
            raise ResultError(expected_got(where, "reported_streams", f"{found} (streams in jobs)", reported))
        reported = found
    for name in metric.PER_USE_CASE:
        if name[:-2] in phases:
            derived[name] = metric.use_case_times(jobs, name[:-2], where=f"{where}: jobs")
    for name, value in derived.items():
        if name in given:
            _agree(given[name], value, where, name, kit_mode)
    given.update(derived)
    return reported, tuple(sorted({uc for ucs in short.values() for uc in set(metric.USE_CASES) - set(ucs)}))


# --------------------------------------------------------------------------- values


def _plain(value):
    """YAML dates become ISO strings and mapping keys strings, so the schema sees JSON types."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()[:10]
    return value


def _time(value, where, name) -> float:
    """Seconds from a number, or from a string with a unit; any other unit is refused."""
    if isinstance(value, str):
        m = _TIME_TEXT.match(value)
        unit = m.group(2).lower() if m else None
        if unit not in UNIT_SECONDS:
            raise ResultError(expected_got(where, name, "seconds (a number, or a string with unit s, ms, min or h)",
                                           repr(value)))
        value = float(m.group(1)) * UNIT_SECONDS[unit]
    return metric.round_ms(metric.finite_positive(value, where, name))


def _uc(key, where, name) -> int:
    m = _UC_KEY.match(str(key))
    if not m:
        raise ResultError(expected_got(where, name, "use-case keys uc1..uc10", repr(key)))
    return int(m.group(1))


def _times(value, where, name) -> dict[int, float]:
    if isinstance(value, list):
        return {i + 1: _time(v, f"{where}", f"{name}[{i}]") for i, v in enumerate(value)}
    out = {}
    for key, v in value.items():
        uc = _uc(key, where, name)
        if uc in out:
            raise ResultError(expected_got(where, f"{name}.uc{uc}", "one time", "two"))
        out[uc] = _time(v, where, f"{name}.uc{uc}")
    return out


def _agree(given, derived, where, name, kit_mode) -> None:
    if isinstance(given, dict):
        for uc in sorted(set(given) | set(derived)):
            _agree(given.get(uc), derived.get(uc), where, f"{name}.uc{uc}", kit_mode)
        return
    if given is None or derived is None or abs(given - derived) > 0.0005:
        raise ResultError(expected_got(where, name, f"{derived} (from jobs, kit {kit_mode})", given))


# --------------------------------------------------------------------------- CSV


CSV_COLUMNS = ("field", "use_case", "stream", "value", "start_s", "end_s")


def from_csv(text: str, path) -> dict:
    """The CSV form (one value per row) as the same document YAML and JSON carry."""
    reader = csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""))   # a UTF-8 BOM is no column
    try:
        return _csv_doc(reader, path)
    except csv.Error as exc:  # a stray quote or CR, a field over the module's 128 KiB limit
        raise ResultError(expected_got(f"{path}: line {reader.line_num}", "CSV", "well-formed CSV", str(exc))) from None


def _csv_doc(reader, path) -> dict:
    header = reader.fieldnames or []
    unknown = [c for c in header if c not in CSV_COLUMNS]
    if unknown or "field" not in header or "value" not in header:
        shown = ",".join(_visible(c) for c in header) or "none"
        raise ResultError(expected_got(path, "CSV header", ",".join(CSV_COLUMNS) + " (field and value required)",
                                       shown + (f" (unknown: {', '.join(_visible(c) for c in unknown)})" if unknown else "")))
    doc: dict = {}
    for n, row in enumerate(reader, start=2):
        at = f"{path}: line {n}"
        name = (row.get("field") or "").strip()
        if name.startswith("#"):      # a comment row
            continue
        value = (row.get("value") or "").strip()
        uc = (row.get("use_case") or "").strip()
        if name == "job":
            job = {"phase": value}
            for key in ("start_s", "end_s"):
                job[key] = _csv_value(row.get(key) or "", at, key, numeric=True)
            if uc:
                job["use_case"] = _csv_int(uc, at, "use_case")
            if (row.get("stream") or "").strip():
                job["stream"] = _csv_int(row["stream"].strip(), at, "stream")
            doc.setdefault("jobs", []).append(job)
        elif name in metric.PER_USE_CASE:
            if not uc:
                raise ResultError(expected_got(at, "use_case", f"a use case 1..10 for {name}", "none"))
            doc.setdefault(name, {})[f"uc{_csv_int(uc, at, 'use_case')}"] = _csv_value(value, at, name)
        elif name.startswith("quality."):
            if not uc:
                raise ResultError(expected_got(at, "use_case", f"a use case 1..10 for {name}", "none"))
            key = name.split(".", 1)[1]
            v = value.lower() == "true" if key == "higher_is_better" else (
                value if key == "metric" else _csv_value(value, at, name, numeric=True))
            doc.setdefault("quality", {}).setdefault(f"uc{_csv_int(uc, at, 'use_case')}", {})[key] = v
        elif name.startswith("published."):
            doc.setdefault("published", {})[name.split(".", 1)[1]] = _csv_value(value, at, name, numeric=True)
        elif name:
            if name in doc:
                raise ResultError(expected_got(at, name, "one row", "a second one"))
            if name in TEXT_FIELDS:
                doc[name] = value or None   # an empty cell is null (e.g. an unstated availability_date)
            elif name in INT_FIELDS:
                doc[name] = _csv_int(value, at, name)
            else:
                doc[name] = _csv_value(value, at, name)
    return doc


def _visible(name: str) -> str:
    """A column name as printed: invisible or non-ASCII characters spelled out (a BOM, a zero-width
    space), so a name that differs from an expected one never prints the same."""
    return name if name.isascii() and name.isprintable() else ascii(name)


def _csv_int(text, at, name) -> int:
    try:
        return int(text)
    except ValueError:
        raise ResultError(expected_got(at, name, "an integer", repr(text))) from None


def _csv_value(text, at, name, numeric=False):
    """A number where the text is one; else the text itself (a time with a unit, or an error)."""
    try:
        return float(text) if any(c in text.lower() for c in ".en") else int(text)
    except ValueError:
        if numeric:
            raise ResultError(expected_got(at, name, "a number", repr(text))) from None
        return text
