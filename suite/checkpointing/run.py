"""`suite run --workload llama3-*`: one phase (write or read) of the checkpointing benchmark.

Refusals first (bad input exit 2, closed-division violations): a write and a read in one
invocation (a read must follow a cache drop: two invocations, separate results dirs), subset mode
for a model other than 8B, a closed process count other than TP x PP x DP, fewer than 4 processes
per host, a read without the write's manifest or into the write's results dir, a cache drop that
is not permitted. Then, in the enforced loop of suite.harness.enforced, per run (5 by default): drop
the page cache (a read also measures what of its files is still cached), `mpiexec -n N python -m
suite.checkpointing.rank PLAN` inside the memory cgroup (suite.harness.mpi), collect
(suite.checkpointing.results). Without --data-dir: the miniature, not valid for submission.

Across hosts (--hosts/--hostfile other than this host, or --launcher): suite.harness.hosts, as training
and kv_cache use it: every host probed through the launcher, the ranks placed in host order (the same
count on each), the checkpoint folder proven shared (a file written here read back on every host), each
host's cache dropped before every run, each host's ranks in that host's memory cgroup, every host
sampled, the per-host evidence in results.json's enforcement.hosts. The read's residency check
(resident_bytes_before_read) reads this host's page cache only: enforcement.resident_bytes_scope says so.
"""

from __future__ import annotations

import os
import socket
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from suite import files, output
from suite.errors import RuleError, SuiteError
from suite.harness import enforced, mpi, resultsdir
from suite.harness.enforced import Series
from suite.rules import rulesets
from suite.storage.backend.select import DataLocation, ObjectLocation, as_location, resolve
from suite.checkpointing import manifest
from suite.checkpointing import results
from suite.checkpointing.rank import PLAN_SCHEMA, checkpoint_dir
from suite.harness import hosts as hostmod
from suite.harness.hosts import parse_hosts
from suite.harness.storagerun import say

MIN_PROCESSES_PER_HOST = 4        # guidelines Table 3: --ppn minimal 4
CHUNK_BYTES = 16 << 20            # one write(2) / read(2) per 16 MiB (benchmarks/checkpoint_vs_fio.py: fio --bs)


@dataclass
class Options:
    workload: str
    accelerators: int
    mode: str = "default"
    checkpoints_write: int | None = None
    checkpoints_read: int | None = None
    data_dir: str | None = None
    results_dir: str | None = None
    runs: int | None = None
    memory_limit: int | None = None
    division: str = "closed"
    hosts: list | None = None
    hostfile: str | None = None
    launcher: str | None = None         # --launcher: how mpiexec and the host agents reach --hosts
    allow_no_cache_drop: bool = False
    no_cache_drop: bool = False
    miniature: bool | None = None       # None: the miniature exactly when no data_dir (the CLI's rule)
    ruleset: str | None = None       # --ruleset; None: see ruleset()
    data: DataLocation | None = None    # the checkpoint folder resolved once per command (location(); writeread)
    cluster: object = None              # hosts.Cluster across hosts, probed once per command (prepare; writeread)


@dataclass
class Prepared:
    opts: Options
    doc: dict
    ckpt: object                 # model.Checkpoint
    phase: str
    count: int                   # checkpoints written or read per run
    folder: Path
    results_dir: Path
    hosts: list
    runs: int
    written_by: dict | None      # the write phase's manifest (read phase)
    phase_id: str = ""           # this invocation's id (checkpoint_run_set.json; a write's manifest: write_id)
    data: DataLocation | None = None    # folder and its backend (select.DataLocation), resolved once
    cluster: object = None              # hosts.Cluster across hosts (connect_hosts), else None


def phase_counts(opts: Options, doc: dict) -> tuple[str, int]:
    """("write" | "read", checkpoints per run) from --checkpoints-write/--checkpoints-read."""
    w, r = opts.checkpoints_write, opts.checkpoints_read
    if w is None and r is None:
        raise SuiteError("--checkpoints-write/--checkpoints-read: expected one phase per invocation: "
                         "--checkpoints-read 0 (write) or --checkpoints-write 0 (read), got neither")
    w = doc["checkpoint"]["num_checkpoints_write"] if w is None else w
    r = doc["checkpoint"]["num_checkpoints_read"] if r is None else r
    if w and r:
        raise RuleError(f"--checkpoints-write {w} --checkpoints-read {r}: expected one of them 0: a read must follow "
                        f"a page-cache drop after the write, in its own invocation with its own results dir "
                        f"(guidelines 2.2.2)")
    if not (w or r):
        raise SuiteError("--checkpoints-write/--checkpoints-read: expected one of them above 0, got both 0")
    return ("write", w) if w else ("read", r)


def prepare(opts: Options) -> Prepared:
    """Every refusal that needs no cache drop, and the plan of the invocation."""
    from suite.checkpointing import workloads
    from suite.checkpointing import model

    doc = workloads.load(opts.workload)
    hosts = parse_hosts(opts)
    multi = hostmod.is_multi(opts, hosts)
    if opts.memory_limit is not None and not multi:     # refused before the results dir is claimed (across
        from suite.enforce.cgroup import check_limit    # hosts: hosts.connect asks every host)
        check_limit(opts.memory_limit)
    phase, count = phase_counts(opts, doc)
    miniature = opts.data_dir is None if opts.miniature is None else opts.miniature
    ckpt = model.from_workload(doc, opts.accelerators, opts.mode, miniature)
    need = closed_processes(doc)
    if opts.division == "closed" and opts.mode == "default" and opts.accelerators != need:
        raise RuleError(f"--accelerators: expected {need} (TP x PP x DP of {opts.workload}) in the closed "
                        f"division, got {opts.accelerators} (--division open allows multiples of "
                        f"{ckpt.parallelism.model_parallel})")
    if opts.mode == "subset" and len(hosts) != 1:
        raise RuleError(f"--mode subset: expected one host (node-local storage), got {len(hosts)}")
    if opts.accelerators < MIN_PROCESSES_PER_HOST * len(hosts):
        raise RuleError(f"--accelerators: expected at least {MIN_PROCESSES_PER_HOST} processes per host "
                        f"({MIN_PROCESSES_PER_HOST * len(hosts)} on {len(hosts)} hosts), got {opts.accelerators}")
    if opts.no_cache_drop and opts.division != "open":
        raise RuleError(f"--no-cache-drop: expected --division open, got --division {opts.division}")
    data = opts.data or location(opts)
    if multi and data.is_object:
        raise SuiteError(f"--hosts: expected one host for object storage ({data.root}: the ranks' credentials and "
                         f"request records are this host's; not built across hosts), got {','.join(hosts)}")
    folder, backend = data.root, data.backend
    results_dir = Path(opts.results_dir or resultsdir.default(results_name(opts, phase)))
    resultsdir.check(results_dir)       # claimed (suite.harness.enforced) once every refusal is passed
    if data.is_object:                  # credentials, bucket, endpoint: one line before any run
        backend.preflight()
    else:
        output.outside(results_dir, "--results-dir", [folder])     # never inside (or holding) the checkpoint data
    if phase == "write":
        refuse_folder(folder, backend)
        check_space(folder, backend, ckpt.total_bytes * count)
    written_by = None
    if phase == "read":
        written_by = manifest.reference(manifest.for_read(folder, layout(opts, ckpt), count, results_dir), results_dir)
    cluster = (opts.cluster or connect_hosts(opts, hosts)) if multi else None   # every refusal above first
    return Prepared(opts, doc, ckpt, phase, count, folder, results_dir.resolve(), hosts,
                    opts.runs or rulesets.run_count(ruleset(opts.ruleset)), written_by, uuid.uuid4().hex, data, cluster)


def connect_hosts(opts: Options, names: list):
    """hosts.Cluster of the ranks across `names`: each host probed through the launcher (refused:
    unreachable, uneven ranks in closed, no cache drop in closed, no cgroup for --memory-limit)."""
    cluster = hostmod.connect(opts, names, opts.launcher)
    say("hosts: " + ", ".join(f"{h.name} ({h.hostname}: ranks {h.ranks[0]}-{h.ranks[-1]})" for h in cluster.hosts)
        + f" through {cluster.launcher.exe}")
    return cluster


def cache_clear(prep: Prepared):
    """The clear before each run: every host's page cache across hosts, else the checkpoint storage's."""
    return prep.cluster.drop_caches if prep.cluster is not None else prep.data.backend.clear_cache


def location(opts: Options) -> DataLocation:
    """--data-dir (or the miniature's folder) resolved: a local directory (absolute) or object storage
    for s3://, with its backend. Once per command: writeread passes it to every phase (Options.data)."""
    folder = as_location(opts.data_dir or Path("results") / "checkpoint-data" / f"{opts.workload}-miniature")
    return resolve(folder if isinstance(folder, ObjectLocation) else folder.resolve(), storage_type="local_fs")


def refuse_folder(folder: Path, backend) -> None:
    """Before anything is written: never the root, a file, a device or kernel path, nor a directory
    holding anything but what a write phase leaves (global_epoch1_step<k>/, the manifest)."""
    real = Path(os.path.realpath(folder)) if not isinstance(folder, ObjectLocation) else None
    if real is not None and (real == Path(os.sep) or any(real == Path(d) or Path(d) in real.parents
                                                           for d in ("/dev", "/proc", "/sys"))):
        raise SuiteError(f"--data-dir {folder}: expected a checkpoint directory, got {real}")
    try:
        top = backend.list("", recursive=False)
    except FileNotFoundError:
        top = []
    except NotADirectoryError:
        raise SuiteError(f"--data-dir {folder}: expected a directory, got a file") from None
    if top:
        other = sorted(e.name for e in top if e.name != manifest.NAME and not e.name.startswith("global_epoch1_step"))
        if other:
            raise SuiteError(f"--data-dir {folder}: expected a new or empty directory, or one a checkpoint write "
                             f"made (global_epoch1_step<k>/, {manifest.NAME}), got {len(other)} other entries, "
                             f"e.g. {other[0]!r}")


def check_space(folder: Path, backend, need: int) -> None:
    """Refuse a write phase the file system cannot hold (each run rewrites the same checkpoints)."""
    free = backend.free_bytes()
    if free is None:            # object storage: no bound known
        return
    try:
        old = sum(e.size_bytes for e in backend.list("") if e.name.startswith("global_epoch1_step")
                  and e.name.count("/") == 1 and e.size_bytes > 0)
    except (FileNotFoundError, NotADirectoryError):
        old = 0
    if need > free + old:
        raise SuiteError(f"--data-dir {folder}: expected room for {need:,} bytes of checkpoints, got {free + old:,} "
                         f"free (without --data-dir: the miniature)")


def closed_processes(doc: dict) -> int:
    """The closed division's MPI process count: TP x PP x DP of Table 2 (8, 64, 512, 1024)."""
    p = doc["parallelism"]
    return p["tensor"] * p["pipeline"] * p["data"]


def layout(opts: Options, ckpt) -> dict:
    return {"workload": opts.workload, "mode": opts.mode, "processes": opts.accelerators, "miniature": ckpt.miniature,
            "checkpoint_bytes": ckpt.total_bytes, "files_per_checkpoint": ckpt.files_per_checkpoint}


def results_name(opts: Options, phase: str) -> str:
    """The default results dir's name (suite.harness.resultsdir adds the UTC time)."""
    return f"{opts.workload}-{phase}-{opts.accelerators}p"


def run(opts: Options, made: list | None = None) -> int:
    """The whole invocation; the exit code (0: every run complete); its results dir appended to `made`."""
    from suite.errors import ExitCode

    kind = Checkpointing(opts)
    _series, done = enforced.run(kind)
    prep = kind.prep
    made.append(prep.results_dir) if made is not None else None
    if prep.phase == "write":
        manifest.write(prep.folder, {**layout(opts, prep.ckpt), "checkpoints": prep.count, "fsync": fsync(prep),
                                     "results_dir": str(prep.results_dir), "end_unix_s": time.time(),
                                     "write_id": prep.phase_id})
    summarise(prep, done)
    return ExitCode.OK


class Checkpointing:
    """The checkpointing kind on the enforced harness: prepare (every refusal, then the closed
    division's cache-drop probe) and run_once."""

    def __init__(self, opts: Options):
        self.opts = opts
        self.prep: Prepared | None = None

    def prepare(self) -> Series:
        opts = self.opts
        self.prep = prepare(opts)
        clear = cache_clear(self.prep)
        if self.prep.cluster is None:           # across hosts hosts.connect asked every host already
            enforced.refuse_without_clear(clear, opts.division, opts.allow_no_cache_drop)
        return Series(name=results_name(opts, self.prep.phase), results_dir=opts.results_dir, runs=self.prep.runs,
                      clear_cache=None if opts.no_cache_drop else clear,
                      write_run_set=self.write_run_set, started=self.started,
                      host_metrics_cluster=self.prep.cluster)       # across hosts: every host sampled

    def started(self, results_dir: Path) -> None:
        prep = self.prep
        prep.results_dir = Path(results_dir).resolve()
        if prep.phase == "write":
            prep.data.backend.make_prefix("")
        if prep.cluster is not None:               # before the manifest goes: a refusal leaves the folder as it was
            prep.cluster.refuse_unshared(prep.folder, "--data-dir")
        if prep.phase == "write":
            manifest.remove(prep.folder)           # a read finds one only after this write completes
        announce(prep)

    def run_once(self, k: int, drop) -> dict:
        return run_once(self.prep, k, drop)

    def write_run_set(self, done: list) -> None:
        if done:
            opts, prep = self.opts, self.prep
            head = {"workload": opts.workload, "phase": prep.phase, "mode": opts.mode, "division": opts.division,
                    "miniature": prep.ckpt.miniature, "processes": opts.accelerators, "phase_id": prep.phase_id}
            results.write_run_set(prep.results_dir, head, done, prep.runs, list(sys.argv))


def fsync(prep: Prepared) -> bool:
    return bool(prep.doc["checkpoint"]["fsync"])


def ruleset(name: str | None = None) -> str:
    """The round a checkpointing run is held to: --ruleset when given, else the default round when it
    covers checkpointing, else the first round that does (v2.0: one phase per invocation, 5 runs)."""
    if name:
        return name
    default = rulesets.default()
    return default.name if "checkpointing" in default.covers else rulesets.covering("checkpointing")[0]


def announce(prep: Prepared) -> None:
    c = prep.ckpt
    p = c.parallelism
    say(f"suite run: {prep.opts.workload} checkpoint {prep.phase}, {prep.opts.accelerators} processes on "
        f"{len(prep.hosts)} host(s), mode {prep.opts.mode}, {prep.opts.division} division, ruleset {ruleset(prep.opts.ruleset)}"
        + (", MINIATURE (not valid for submission)" if c.miniature else ""))
    say(f"  layout: TP {p.tensor} x PP {p.pipeline} x DP {p.data}, ZeRO {p.zero_stage}; {c.total_bytes / 2**30:.3f} GiB "
        f"in {c.files_per_checkpoint} files per checkpoint; {prep.count} checkpoint(s) per run, {prep.runs} run(s)")
    say(f"  checkpoints: {prep.folder}")
    say(f"  results: {prep.results_dir}")


def resident_bytes(prep: Prepared) -> int:
    """What of the files this read will read is in the page cache now (mincore)."""
    from suite.enforce.cache import page_cache_residency

    total = 0
    for k in range(1, prep.count + 1):
        for r in range(prep.opts.accelerators):
            for s in prep.ckpt.rank_shards(r):
                try:
                    total += page_cache_residency(checkpoint_dir(prep.folder, k) / s.name)[0]
                except OSError as exc:
                    raise SuiteError(f"{checkpoint_dir(prep.folder, k) / s.name}: expected the write phase's "
                                     f"file, got {exc.strerror or exc}") from None
    return total


def run_once(prep: Prepared, k: int, drop) -> dict:
    """One run after the cache drop (`drop`: its evidence): launch the ranks in the memory cgroup,
    collect; the run's results.json doc."""
    opts = prep.opts
    run_dir = prep.results_dir / f"run-{k}"
    run_dir.mkdir(parents=True, exist_ok=True)
    resident = resident_bytes(prep) if prep.phase == "read" and not isinstance(prep.folder, ObjectLocation) else None
    plan = _plan(prep, run_dir)
    files.write_json(run_dir / "plan.json", plan, schema=PLAN_SCHEMA, indent=None)
    say(f"[run {k}/{prep.runs}] {opts.accelerators} rank(s): {prep.phase} {prep.count} checkpoint(s) -> {run_dir}")
    start = time.time()
    status, error, evidence = _launch(prep, k, run_dir)
    ranks = results.load_ranks(run_dir, opts.accelerators) if status == "complete" else []
    doc = _doc(prep, k, plan, ranks, status, error, start, time.time())
    doc["enforcement"] = {"cache_drop": drop.to_dict(), "memory_limit": evidence, "resident_bytes_before_read": resident}
    if prep.cluster is not None:        # per host: placement, memory, its drop, its cgroup (as training records it)
        doc["enforcement"]["hosts"] = prep.cluster.evidence(drop, evidence)
        if resident is not None:
            doc["enforcement"]["resident_bytes_scope"] = residency_scope(prep)
    if isinstance(prep.folder, ObjectLocation):
        from suite.storage.objectstore import record
        where = prep.data.backend.evidence()
        doc["object_storage"] = record(where, run_dir, opts.accelerators, drop, part_size_bytes=where["part_size_bytes"])
    if evidence and evidence.get("applied_bytes"):
        doc["host_memory_bytes"] = evidence["applied_bytes"]
    results.write_run(run_dir, doc, ranks)
    rs = rulesets.get(doc["ruleset"])
    if doc["status"] == "complete" and rs.reference_tool == "mlpstorage" and rs.leaves != "timestamped":
        from suite.checkpointing import leaf

        leaf.reference_files(run_dir, doc, list(sys.argv))   # a numbered run as mlpstorage's reportgen reads it
    if doc["metric"]:
        m, c = doc["metric"][prep.phase], doc["checkpoints"]
        say(f"[run {k}/{prep.runs}] {prep.phase}: {m['duration_mean_s']:.3f} s per checkpoint (max over ranks), "
            f"{m['throughput_mean_gib_s']:.3f} GiB/s; per rank {min(x['rank_min_gib_s'] for x in c):.3f}.."
            f"{max(x['rank_max_gib_s'] for x in c):.3f} GiB/s")
    return doc


def _launch(prep: Prepared, k: int, run_dir: Path) -> tuple[str, str | None, dict | None]:
    """mpiexec and the ranks in the memory cgroup: (status, error, the cgroup's evidence). Across hosts
    the ranks placed by us (-hosts h1:n,h2:n through the launcher), each joining its host's cgroup, and
    a rank that ran elsewhere than placed fails the run."""
    opts, cluster = prep.opts, prep.cluster
    rank = mpi.python_module("suite.checkpointing.rank", run_dir / "plan.json")
    failure = lambda rc: mpi.rank_failure(run_dir, rc)      # noqa: E731 - what enforced() calls on a failure
    if cluster is None:
        argv = mpi.mpiexec_argv(opts.accelerators, hostfile=opts.hostfile, hosts=prep.hosts if opts.hosts else None)
        return enforced.enforced(enforced.memory_cgroup(opts.memory_limit, k),
                                 lambda start_child: mpi.launch(argv + rank, run_dir, start_child), failure)
    mpiexec = mpi.mpiexec_argv(opts.accelerators, host_args=cluster.launcher.mpiexec_args() + ["-hosts", cluster.hosts_arg()])
    if opts.memory_limit:
        cgroup = cluster.cgroups(opts.memory_limit, enforced.cgroup_name(k), run_dir / "cgroups")
        status, error, evidence = enforced.enforced(cgroup, lambda: mpi.launch(mpiexec + cgroup.wrap(rank), run_dir, None),
                                                    failure, join=False)
    else:
        status, error, evidence = enforced.enforced(None, lambda: mpi.launch(mpiexec + rank, run_dir, None), failure,
                                                    join=False)
    misplaced = hostmod.check_ranks_hosts(run_dir, cluster) if status == "complete" else None
    return ("failed", f"placement: {misplaced}", evidence) if misplaced else (status, error, evidence)


def residency_scope(prep: Prepared) -> str:
    """What resident_bytes_before_read measured: this host's page cache (mincore here), not the others'."""
    here = socket.gethostname()
    ran = [h.hostname for h in prep.cluster.hosts]
    return (f"this host ({here}) only" + (", one of the run's hosts" if here in ran else ", not one of the run's hosts")
            + f"; the page caches of {', '.join(h for h in ran if h != here)} were dropped (enforcement.hosts[].cache_drop), "
            f"not measured")


def _plan(prep: Prepared, run_dir: Path) -> dict:
    """What every rank gets: the phase, the counts, fsync, and each rank's files of the layout."""
    opts = prep.opts
    return {"schema_version": 1, "run_dir": str(run_dir), "workload": opts.workload, "processes": opts.accelerators,
            "mode": opts.mode, "miniature": prep.ckpt.miniature, "checkpoint_dir": str(prep.folder),
            "num_checkpoints_write": prep.count if prep.phase == "write" else 0,
            "num_checkpoints_read": prep.count if prep.phase == "read" else 0, "fsync": fsync(prep),
            "time_between_checkpoints_s": _between(prep), "chunk_bytes": CHUNK_BYTES,
            "rank_shards": [[[s.name, s.nbytes] for s in prep.ckpt.rank_shards(r)] for r in range(opts.accelerators)]}


def _doc(prep: Prepared, k: int, plan: dict, ranks: list, status: str, error, start: float, end: float) -> dict:
    """The run's results.json facts (results.write_run adds the figures)."""
    from suite.enforce.cache import meminfo_bytes
    from suite.harness import hostfacts

    opts, p = prep.opts, prep.ckpt.parallelism
    return {"schema_version": 1, "kind": "checkpointing", "workload": opts.workload, "phase": prep.phase,
            "mode": opts.mode, "division": opts.division, "ruleset": ruleset(opts.ruleset), "miniature": prep.ckpt.miniature,
            "run": k, "processes": opts.accelerators, "hosts": prep.hosts,
            "processes_per_host": _per_host(ranks, prep.hosts),
            "parallelism": {"tensor": p.tensor, "pipeline": p.pipeline, "data": p.data, "zero_stage": p.zero_stage},
            "checkpoint_dir": str(prep.folder), "checkpoint_bytes": prep.ckpt.total_bytes,
            "files_per_checkpoint": prep.ckpt.files_per_checkpoint,
            "num_checkpoints_write": plan["num_checkpoints_write"], "num_checkpoints_read": plan["num_checkpoints_read"],
            "fsync": plan["fsync"], "time_between_checkpoints_s": plan["time_between_checkpoints_s"],
            "host_memory_bytes": _host_memory(prep) or meminfo_bytes("MemTotal") or 0, "status": status, "error": error,
            "complete": status == "complete", "start_unix_s": start, "end_unix_s": end, "written_by": prep.written_by,
            "host": hostfacts.host(), "versions": hostfacts.versions()}     # as every kind records them


def _host_memory(prep: Prepared) -> int | None:
    """Across hosts: the smallest host's MemTotal (the figures are per host); else None (this host's)."""
    return min(h.mem_total_bytes for h in prep.cluster.hosts) if prep.cluster is not None else None


def _between(prep: Prepared) -> float:
    ck = dict(prep.doc["checkpoint"])
    if prep.ckpt.miniature:
        ck.update((prep.doc.get("miniature") or {}).get("checkpoint", {}))
    return float(ck["time_between_checkpoints"])


def _per_host(ranks: list[dict], hosts: list) -> dict:
    if not ranks:
        return {h: 0 for h in hosts}
    out: dict = {}
    for r in ranks:
        out[r["hostname"]] = out.get(r["hostname"], 0) + 1
    return out


def summarise(prep: Prepared, done: list[dict]) -> None:
    o = results.overall(done)
    ph = prep.phase
    say(f"summary: {len(done)} run(s) of {prep.opts.workload} checkpoint {ph} x{prep.opts.accelerators}: "
        f"{o.get(f'{ph}_duration_mean_s', 0):.3f} s per checkpoint, {o.get(f'{ph}_throughput_mean_gib_s', 0):.3f} GiB/s "
        f"(mean over runs)" + ("; MINIATURE, not valid for submission" if prep.ckpt.miniature else ""))
    say(f"results: {prep.results_dir}" + ("; next: the read phase, --checkpoints-write 0 with another "
                                          "--results-dir (it drops the page cache before each run)"
                                          if ph == "write" else ""))
