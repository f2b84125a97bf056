"""`suite run`, before anything runs: the options, the closed-division refusals, the dataset
(sized by suite.training.datasize, checked by suite.storage.datagen.scan, generated for the miniature).

Everything here is refused (exit 2) before a cache drop, a cgroup or a rank exists.
"""

import copy
import os
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path

from suite.errors import RuleError, SuiteError
from suite import files as suite_files, output
from suite.harness import resultsdir
from suite.rules import rulesets

MINIATURE_MEMORY_BYTES = 1024**3       # the embedded default's --memory-limit
MINIATURE_MIN_STEPS = 4                # per epoch, so AU (first step excluded) means something
DEFAULT_RUNS = 5                       # --runs' help: the default ruleset's runs.count (rules/v1.0/ruleset.yaml)


@dataclass
class Options:
    workload: str
    accelerators: int
    accelerator_type: str = "h100"
    data_dir: str | None = None
    results_dir: str | None = None
    runs: int | None = None
    memory_limit: int | None = None
    division: str = "closed"
    ruleset: str | None = None
    params: list = field(default_factory=list)
    hosts: list | None = None
    hostfile: str | None = None
    allow_no_cache_drop: bool = False
    no_cache_drop: bool = False        # open division only: measure from the page cache
    read_delay_s: float = 0.0          # benchmarks only; makes the run non-compliant
    stop_when_clear: dict | None = None  # suite sweep's probes: stop once AU vs the threshold is clear (RunPlan)
    launcher: str | None = None        # --launcher: how to reach the hosts (ssh when None; suite.harness.hosts)
    engine: str = "suite"              # suite (our ranks) or dlio (the reference code: storage/run/dlio.py)
    scan_memo: dict | None = None      # suite sweep: one dataset scan for all its runs (reused while unchanged)


def say(*parts) -> None:
    print(*parts, flush=True)


# --------------------------------------------------------------------------- preparation


MAX_HOSTFILE_BYTES = 1024 * 1024        # an MPI host file: one line a host


def parse_hosts(opts: Options) -> list[str]:
    if opts.hosts and opts.hostfile:
        raise SuiteError("--hosts and --hostfile: expected one of them, got both")
    if opts.hostfile:
        text = suite_files.read_text(Path(opts.hostfile), limit=MAX_HOSTFILE_BYTES)   # bounded, one line
        hosts = [ln.split("#")[0].split(":")[0].strip() for ln in text.splitlines()]
        hosts = [h for h in hosts if h]
        if not hosts:
            raise SuiteError(f"{opts.hostfile}: hosts: expected at least one host name, got none")
        return list(dict.fromkeys(hosts))
    return list(dict.fromkeys(opts.hosts or [])) or [socket.gethostname()]


def division_params(workload, ruleset: str) -> tuple[set, set, int]:
    """(closed allow-list, open allow-list, closed prefetch maximum) for this workload, read
    from rules/<ruleset>/ -- the same data `suite check` judges results by, so the two agree."""
    from suite.rules import engine as rules

    closed = rules.load(ruleset, "closed", workload.name).params
    allowed = set(closed["closed_params"]) | set(closed.get("workload_closed_params") or [])
    opened = allowed | set(rules.load(ruleset, "open", workload.name).params["open_params"])
    return allowed, opened, closed["prefetch_size_max"]


def check_closed_params(workload, params: dict, ruleset: str) -> None:
    allowed, _, max_prefetch = division_params(workload, ruleset)
    for key, value in sorted(params.items()):
        if key not in allowed:
            raise RuleError(f"--param {key}: expected one of the closed division's parameters "
                            f"({', '.join(sorted(allowed))}), got {key} (use --division open)")
    if params.get("reader.prefetch_size", 0) > max_prefetch:
        raise RuleError(f"--param reader.prefetch_size: expected at most {max_prefetch} in the closed "
                        f"division, got {params['reader.prefetch_size']}")


@dataclass
class Prepared:
    opts: Options
    workload: object
    params: dict
    ruleset: str
    hosts: list
    host_memory_bytes: int
    memory_limit: int | None
    miniature: bool
    data_dir: Path
    results_dir: Path
    files: list                     # [(path, size)] the run reads (num_files_train of them)
    format: str
    total_bytes: int
    required: object                # datasize.Datasize
    required_files: int             # what the rules applied here demand
    reasons: list                   # compliance reasons known before any run
    runs: int = DEFAULT_RUNS        # how many runs this invocation makes
    cluster: object = None          # hosts.Cluster across hosts (--hosts/--hostfile/--launcher), else None
    dataset_evidence: dict = field(default_factory=dict)    # who generated the data; our log or the scan
    warmup_runs: int = 0            # the first runs of the series are warm-ups (v3.0: 1), left out of the figures
    fs_separation: dict | None = None   # the ruleset asks for data and results apart: the probe before run 1
    generated: dict | None = None   # the miniature generated by this invocation: files, bytes, duration_s
    leaves: dict = field(default_factory=dict)   # run k -> its directory (suite.training.leaf)
    commands: dict = field(default_factory=dict)   # run k -> the argv it executed (mpiexec and the ranks)
    memory_budget: object = None    # the miniature's cgroup in parts (suite.training.run.budget.MemoryBudget)


def results_name(workload, n: int) -> str:
    """The default results dir's name (suite.harness.resultsdir adds the UTC time)."""
    return f"{workload.dlio_name}-{n}acc"


def check_inputs(opts: Options) -> None:
    """The cheap refusals (workload, --param, division, hosts, results dir), before anything touches the host."""
    from suite.storage import workloads
    from suite.training import datasize
    from suite.storage.backend.select import check_storage_type, storage_type_of

    if opts.results_dir:
        resultsdir.check(opts.results_dir)
    params = workloads.parse_params(opts.params)
    workload = workloads.resolve(opts.workload, opts.accelerator_type, params)
    from suite.storage.backend.select import OBJECT_TYPES, is_object_location

    kind = check_storage_type(storage_type_of(workload))
    object_data = False
    if opts.data_dir:       # any other URL scheme: one line, exit 2 (never a local directory named 'x:')
        object_data = is_object_location(opts.data_dir)
    if kind in OBJECT_TYPES and not object_data:       # refused before the cache-drop probe
        raise SuiteError(f"storage.storage_type {kind}: expected --data-dir s3://bucket/prefix, got "
                         f"{opts.data_dir or 'no --data-dir (the local miniature)'}")
    ruleset = opts.ruleset or datasize.default_ruleset(workload)
    if opts.division == "closed" and ruleset in workload.rulesets:
        check_closed_params(workload, params, ruleset)
    hosts = parse_hosts(opts)
    if opts.memory_limit is not None:      # refused before the results dir is claimed (each host's MemTotal: hosts.py)
        from suite.enforce.cgroup import check_limit
        check_limit(opts.memory_limit, None if len(hosts) <= 1 else 2**63)
    if opts.results_dir and opts.data_dir and not object_data:   # the dataset is evidence: results never inside it
        output.outside(opts.results_dir, "--results-dir", [opts.data_dir])


def prepare(opts: Options, cluster=None) -> Prepared:
    """Everything a run needs, checked: the workload, the rules, the hosts, the dataset on disk.
    Across hosts (`cluster`, probed by hosts.connect): the dataset rule uses the sum over the hosts
    of each host's memory (its cgroup limit, else its MemTotal), as `suite check` sums DLIO's
    host_memory_GB list. (Past 60 lines: one straight sequence of steps whose order the refusals
    depend on -- resolve, hosts, memory, sizing, dataset -- kept in one place on purpose.)"""
    from suite.training import datasize
    from suite.training.run.dlio_output import mem_total_bytes

    workload, params, ruleset, reasons = _resolve(opts)
    hosts = parse_hosts(opts)
    data_folder = opts.data_dir or params.get("dataset.data_folder")   # DLIO users pass data_folder
    if data_folder and "storage.storage_root" in params and not Path(data_folder).is_absolute():
        data_folder = str(Path(str(params["storage.storage_root"])) / data_folder)
    miniature = data_folder is None
    memory_limit, budget = opts.memory_limit, None
    if miniature and cluster is None:      # the cgroup: the cache budget the data is sized from + the ranks' own memory
        budget = miniature_budget(workload, opts)
        memory_limit = budget.cgroup_limit_bytes
    elif miniature and memory_limit is None:
        memory_limit = workload.miniature_cache_budget_bytes or MINIATURE_MEMORY_BYTES
    if cluster is not None:
        import dataclasses
        host_memory = cluster.total_memory_bytes
        required = dataclasses.replace(datasize.compute(workload, opts.accelerators, 1, host_memory, ruleset),
                                       client_hosts=len(hosts))
        counts = sorted({len(h.ranks) for h in cluster.hosts})
        if len(counts) > 1:
            reasons.append(f"ranks per host: expected the same count on every host, got {counts[0]} to "
                           f"{counts[-1]} (open division only)")
    else:
        host_memory = budget.cache_budget_bytes if budget else (memory_limit or mem_total_bytes())
        required = datasize.compute(workload, opts.accelerators, len(hosts), host_memory, ruleset)
    if miniature:
        required_files = miniature_files(workload, opts.accelerators, required, budget)
        reasons.append(f"miniature: the {required.steps}-step minimum of the dataset-size rule is not applied "
                       f"({required.num_files} files would be needed); not valid for submission")
        data_dir = miniature_data_dir(workload, required_files)
    else:
        required_files = required.num_files
        from suite.storage.backend.select import ObjectLocation, as_location, for_workload
        data_dir = as_location(data_folder)
        if isinstance(data_dir, ObjectLocation):       # credentials, bucket, endpoint: one line before any run
            from suite.storage.backend.s3stats import REQUESTS
            REQUESTS.reset()                           # this invocation's requests: its one listing
            for_workload(workload, data_dir).preflight()
        elif not data_dir.is_dir():
            raise SuiteError(f"--data-dir {data_dir}: expected a directory with the dataset, got "
                             f"{'nothing' if not data_dir.exists() else 'a file'}")
    results_dir = Path(opts.results_dir or resultsdir.default(results_name(workload, opts.accelerators)))
    resultsdir.check(results_dir)      # claimed (suite.harness.enforced) once every refusal is passed
    separation = _separation(opts, workload, ruleset, data_dir, results_dir, miniature, reasons)
    generated = None
    if miniature:
        generated = ensure_miniature_data(workload, data_dir, required_files, memory_limit if cluster is None else None)
    files_, fmt, total, dataset_evidence = _dataset_files(opts, workload, data_dir)
    _datasize_match(opts, workload, ruleset, data_dir, files_, required_files, reasons)
    if len(files_) < required_files:
        over = f" over {len(hosts)} hosts" if cluster else ""
        what = (f"{data_dir}: files: expected at least {required_files} for {opts.accelerators} accelerator(s) "
                f"and {host_memory / 1024**3:.1f} GiB host memory{over} ({required.dictated_by if not miniature else 'memory'}"
                f" rule, {ruleset}), got {len(files_)}")
        if opts.division == "closed":
            raise RuleError(what + " (suite datasize says how many; suite datagen writes them)")
        reasons.append(what)
    if opts.read_delay_s:
        reasons.append(f"a debug read delay of {opts.read_delay_s} s per file was applied (benchmarks only)")
    return Prepared(opts=opts, workload=workload, params=params, ruleset=ruleset, hosts=hosts,
                    host_memory_bytes=host_memory, memory_limit=memory_limit, miniature=miniature,
                    data_dir=data_dir, results_dir=results_dir, files=files_, format=fmt, total_bytes=total,
                    required=required, required_files=required_files, reasons=reasons,
                    dataset_evidence=dataset_evidence, cluster=cluster, fs_separation=separation,
                    generated=generated, memory_budget=budget, **_series(opts, ruleset))


def _series(opts: Options, ruleset: str) -> dict:
    """How many runs, and how many of them (the first) are warm-ups: --runs or the ruleset's
    runs.count measured runs, after the ruleset's warm-ups when suite run makes them (v3.0)."""
    runs = rulesets.get(ruleset).runs
    warmups = runs.warmup if runs.warmup_in_series else 0
    return {"runs": warmups + (opts.runs if opts.runs is not None else runs.count), "warmup_runs": warmups}


def _datasize_match(opts: Options, workload, ruleset: str, data_dir: Path, files_: list, required_files: int,
                    reasons: list) -> None:
    """Where the ruleset writes a datasize step (v3.0's leaves), the dataset must match it exactly:
    as many files as it sized and, for fixed-size records, their bytes (closed: refused; open: noted)."""
    from suite.training import leaf

    if not leaf.timestamped(ruleset) or len(files_) < required_files:
        return                                  # too few: the dataset-size rule's own refusal follows
    got_bytes = sum(s for _, s in files_)
    want_bytes = required_files * workload.num_samples_per_file * workload.record_length_bytes
    fixed = not workload.record_length_stdev_bytes and workload.format in ("jpeg",)
    problem = None
    if len(files_) != required_files:
        problem = f"files: expected exactly {required_files} (the datasize step), got {len(files_)}"
    elif fixed and got_bytes != want_bytes:
        problem = f"bytes: expected {want_bytes} ({required_files} files of {workload.record_length_bytes}), got {got_bytes}"
    if problem is None:
        return
    what = f"{data_dir}: {problem} ({ruleset}: the dataset of every run matches the datasize step)"
    if opts.division == "closed":
        raise RuleError(what + " (suite datasize says how many; use a data dir of exactly that size, or "
                               "--param dataset.num_files_train)")
    reasons.append(what)


def _separation(opts: Options, workload, ruleset: str, data_dir: Path, results_dir: Path, miniature: bool,
                reasons: list) -> dict | None:
    """Where the ruleset asks for it (v3.0): data and results probed before any data is touched;
    closed at full size refuses when they share a file system, else the run is not compliant."""
    from suite.storage import separation

    if not rulesets.get(ruleset).fs_separation:
        return None
    doc = separation.probe(workload, data_dir, results_dir)
    problem = separation.refuse(doc, opts.division, miniature)
    if problem:
        reasons.append(problem)
    return doc


def _resolve(opts: Options):
    """(workload, params, ruleset, reasons so far) from the options; refuses what no run may do."""
    from suite.storage import workloads
    from suite.training import datasize
    from suite.storage.backend.select import check_storage_type, storage_type_of

    params = workloads.parse_params(opts.params)
    workload = workloads.resolve(opts.workload, opts.accelerator_type, params)
    check_storage_type(storage_type_of(workload))      # object storage: refused before anything else
    ruleset = opts.ruleset or datasize.default_ruleset(workload)
    if ruleset not in workload.rulesets:
        raise SuiteError(f"--ruleset: expected one of {', '.join(workload.rulesets)} for {workload.name} on "
                         f"{workload.accelerator}, got {ruleset}")
    if opts.division not in ("closed", "open"):
        raise SuiteError(f"--division: expected closed or open, got {opts.division!r}")
    if opts.division == "closed":
        check_closed_params(workload, params, ruleset)
    open_allowed = division_params(workload, ruleset)[1]
    outside = sorted(k for k in params if k not in open_allowed)
    if opts.runs is not None and opts.runs <= 0:
        raise SuiteError(f"--runs: expected a positive integer, got {opts.runs}")
    reasons = []
    if outside:
        reasons.append(f"--param {', '.join(outside)}: outside the open division's allow-list too "
                       f"(a measurement run, not a submission)")
    return workload, params, ruleset, reasons


def miniature_budget(workload, opts: Options):
    """The miniature's cgroup on this host (suite.training.run.budget): the cache budget (the workload's
    miniature.cache_budget_bytes, else --memory-limit, else 1 GiB) plus the ranks' own memory."""
    from suite.training.run import budget

    cache = opts.memory_limit or workload.miniature_cache_budget_bytes or MINIATURE_MEMORY_BYTES
    return budget.miniature(workload, opts.accelerators, cache)


def miniature_files(workload, accelerators: int, required, memory_budget) -> int:
    """Every rule but the minimum-steps one: 5x the (small) cache budget (`required`, datasize's answer
    for it), a few steps per epoch, and (with a budget) more bytes than the whole cgroup limit."""
    from suite.training.run import budget

    spf, batch = workload.num_samples_per_file, workload.batch_size
    min_files = -(-MINIATURE_MIN_STEPS * batch * accelerators // spf)
    beyond = budget.files_beyond(memory_budget, workload) if memory_budget else 0
    return max(required.memory_rule_samples // spf, min_files, beyond)


def miniature_data_dir(workload, num_files: int) -> Path:
    """./results/data/<workload>-miniature-<N>files-<tag>: the tag changes with what --param may
    change in the records, so a miniature is reused only when its files are the same."""
    import hashlib
    shape = (workload.format, workload.num_samples_per_file, workload.record_length_bytes,
             workload.record_length_stdev_bytes, workload.seed)
    tag = hashlib.sha256(repr(shape).encode()).hexdigest()[:8]
    return Path("results") / "data" / f"{workload.name}-miniature-{num_files}files-{tag}"


def _dataset_files(opts: Options, workload, data_dir: Path) -> tuple[list, str, int, dict]:
    """The files a run reads ([(path, size)], format, bytes, evidence): scanned, cut to num_files_train."""
    files_, fmt, total, evidence = scanned(opts.scan_memo, data_dir, workload)
    if workload.num_files_train:
        if workload.num_files_train > len(files_):
            raise SuiteError(f"{data_dir}: files: expected at least dataset.num_files_train = "
                             f"{workload.num_files_train}, got {len(files_)}")
        files_ = files_[:workload.num_files_train]
        total = sum(s for _, s in files_)
    samples = len(files_) * workload.num_samples_per_file
    if samples < workload.batch_size * opts.accelerators:
        raise SuiteError(f"{data_dir}: samples: expected at least batch x accelerators = "
                         f"{workload.batch_size * opts.accelerators} for one step, got {samples}")
    return files_, fmt, total, evidence


def scanned(memo: dict | None, data_dir, workload) -> tuple[list, str, int, dict]:
    """scan_dataset's answer, from `memo` (a dict the caller keeps across runs: suite sweep's) when
    the same local dataset was scanned for the same records and its listing is unchanged since (every
    file's name, size, mtime and inode under train/, and the generation log's): the TFRecord framing
    check reads every record header (50,040 reads for 40 resnet50 files, 10-15 s here), once per
    sweep instead of once per run. Object storage and memo=None: scanned every time."""
    from suite.storage.backend.select import ObjectLocation

    if memo is None or isinstance(data_dir, ObjectLocation):
        return scan_dataset(data_dir, workload)
    key = (str(Path(data_dir).resolve()), workload.name, workload.format, workload.num_samples_per_file,
           workload.record_length_bytes, workload.record_length_stdev_bytes, workload.num_files_train)
    seen = memo.get(key)
    now = _listing_stamp(Path(data_dir))
    if seen is not None and now is not None and seen[0] == now:
        return copy.deepcopy(seen[1])
    out = scan_dataset(data_dir, workload)
    if now is not None and _listing_stamp(Path(data_dir)) == now:    # unchanged while it was scanned
        memo[key] = (now, copy.deepcopy(out))
    return out


def _listing_stamp(data_dir: Path) -> tuple | None:
    """The dataset's listing stamp (suite.storage.backend.posix.listing_stamp: its files' names, sizes,
    times and inodes, and the generation log's); None when unreadable or not a local directory."""
    from suite.storage.backend.posix import listing_stamp
    from suite.storage.datagen import LOG_NAME

    return listing_stamp(data_dir, "train", LOG_NAME)


def scan_dataset(data_dir: Path, workload) -> tuple[list, str, int, dict]:
    """The training files, checked against the workload: [(name a rank's backend reads, size)],
    format, bytes, evidence (with the storage's: suite.storage.backend's evidence())."""
    from suite.storage import datagen
    from suite.storage.backend.select import for_workload

    backend = for_workload(workload, data_dir)     # an s3:// data_dir: the S3 backend
    scan = datagen.scan(data_dir, workload)
    if scan.problems:
        more = f" (+{len(scan.problems) - 1} more)" if len(scan.problems) > 1 else ""
        first = scan.problems[0]
        where = "" if first.startswith(str(data_dir)) else f"{data_dir}: "
        raise SuiteError(f"{where}{first}{more} (the data does not match {workload.name}: suite datagen writes it; DLIO's own data is recognised "
                         f"by scanning)")
    if scan.num_files == 0:
        raise SuiteError(f"{data_dir}: files: expected {workload.format} training files under {data_dir}/train, got none")
    if scan.format != workload.format:
        raise SuiteError(f"{data_dir}: format: expected {workload.format} for {workload.name}, got {scan.format}")
    out = [(backend.locate(name), size) for name, size in zip(scan.names, scan.sizes)]
    try:
        storage = backend.evidence()
    except OSError as exc:
        raise SuiteError(f"{data_dir}: storage evidence: {exc.strerror or exc}") from None
    return out, scan.format, sum(s for _, s in out), {**scan.evidence, "storage": storage}


def ensure_miniature_data(workload, data_dir: Path, num_files: int, memory_limit: int | None = None) -> dict | None:
    """The miniature's dataset, generated on first use. Before writing gigabytes, the memory
    cgroup the runs need is checked (enforce.preflight): a host without one fails in a second."""
    from suite.storage import datagen

    if data_dir.is_dir():
        scan = datagen.scan(data_dir, workload)
        if scan.num_files >= num_files and not scan.problems and scan.format == workload.format:
            say(f"miniature dataset: reusing {data_dir} ({scan.num_files} files)")
            return None
    if memory_limit:
        from suite.enforce import cgroup
        cgroup.preflight(memory_limit)
    say(f"miniature dataset: generating {num_files} {workload.format} files into {data_dir} ...")
    t0 = time.time()
    datagen.generate(workload, data_dir, num_files, processes=os.cpu_count() or 1)
    duration = time.time() - t0
    say(f"miniature dataset: generated in {duration:.1f} s")
    return {"data_dir": str(data_dir), "num_files": num_files, "format": workload.format,
            "duration_s": round(duration, 3), "start": datetime_utc(t0)}


def datetime_utc(unix_s: float) -> str:
    from datetime import datetime, timezone

    return datetime.fromtimestamp(unix_s, timezone.utc).isoformat(timespec="seconds")
