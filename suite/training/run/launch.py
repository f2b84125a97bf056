"""`suite run`: prepare, enforce, launch one MPI rank per simulated accelerator, collect.

The CLI side (this process) checks the inputs and the closed-division rules, sizes and
(for the miniature) generates the dataset (suite.training.run.prepare); in the enforced loop of
suite.harness (results dir claimed, cache dropped before each run) each run starts
`mpiexec -n N python -m suite.training.run.rank PLAN` inside the memory cgroup, relays the ranks'
progress lines and turns their step timings into summary.json, per_epoch_stats.json,
configs/, dlio.log and results.json. The rank side is suite.training.run.rank. Outputs are
written in dlio_output / results (records), the math is suite.training.figures.
"""

import time
from dataclasses import replace as dataclasses_replace
from pathlib import Path

from suite import files
from suite.errors import RuleError, SuiteError
from suite.harness import enforced, mpi
from suite.harness.enforced import CGROUP_PREFIX, Series  # noqa: F401 - CGROUP_PREFIX re-exported
from suite.storage.backend.select import storage_type_of
from suite.training.run.records import RunPlan
from suite.terminal import headed
from suite.training.run.prepare import Options, Prepared, check_inputs, prepare, results_name, say  # noqa: F401 - re-exported

# --------------------------------------------------------------------------- the runs


def run(opts: Options, judge=None) -> int:
    """The whole `suite run`: returns the exit code (0: all runs complete and compliant). `judge`
    (results dir -> (compliant, verdict line)), when given, is `suite check` itself: the run's final
    verdict is the checker's, so `run` and `check` cannot disagree."""
    import dataclasses

    from suite.rules.verdict import Voice

    refuse(opts)
    runner = run_once
    if opts.engine != "suite":      # the reference code under the same enforcement: storage/run/dlio.py
        from suite.training.run import dlio
        if _across_hosts(opts):
            raise SuiteError("--engine dlio: expected one host (the DLIO engine does not span hosts yet), "
                             "got --hosts/--hostfile with several")
        if opts.data_dir and "://" in str(opts.data_dir):
            raise SuiteError(f"--engine dlio: expected a local --data-dir (the DLIO engine reads files), "
                             f"got {opts.data_dir}")
        runner = dlio.runner(opts)
    cluster = connect_hosts(opts)       # across hosts: every host probed, or refused, before anything starts
    training = Training(opts, cluster, runner)
    _series, results = enforced.run(training)
    prep = training.prep
    compliant = all(r["compliance"]["compliant"] for r in results) and len(results) == prep.runs
    checked = judge(prep.results_dir) if judge is not None else None
    if checked is not None:
        compliant = compliant and checked[0]
    summarise(prep, results, compliant, checked[1] if checked else None)
    # the last line: suite check's verdict (the checker's voice), failed where a run was not
    voice = checked[2] if checked is not None and len(checked) > 2 and checked[2] is not None else \
        Voice("closed" if checked is None and compliant else "invalid", prep.miniature, opts.division)
    voice = dataclasses.replace(voice, failed=voice.failed or not compliant)
    say(voice.line())
    return voice.code


class Training:
    """The training kind on the enforced harness: prepare (suite.training.run.prepare) and run_once
    (`runner`: ours, or the DLIO engine's)."""

    def __init__(self, opts: Options, cluster, runner):
        self.opts, self.cluster, self.runner = opts, cluster, runner
        self.prep: Prepared | None = None

    def prepare(self) -> Series:
        from suite.training.run.results import write_run_set

        from suite.rules import rulesets

        prep = self.prep = prepare(self.opts, self.cluster)
        return Series(name=results_name(prep.workload, self.opts.accelerators), results_dir=self.opts.results_dir,
                      runs=prep.runs, clear_cache=cache_clear(self.opts, self.cluster, prep),
                      write_run_set=lambda results: write_run_set(prep, results), started=self.started,
                      run_dir=lambda k: evidence_dir(prep, k),
                      gap_shorter_than_run=rulesets.get(prep.ruleset).runs.gap_shorter_than_run,
                      closed=self.opts.division == "closed",
                      host_metrics_cluster=self.cluster,       # across hosts: every host sampled
                      planned=None if self.opts.results_dir else prep.results_dir)   # the dir fs_separation names

    def started(self, results_dir: Path) -> None:
        from suite.training import leaf

        self.prep.results_dir = results_dir
        announce(self.prep)
        leaf.write_steps(self.prep)
        if self.prep.workload.format == "parquet" and self.opts.engine == "suite":
            measure_ceiling(self.prep)

    def run_once(self, k: int, drop) -> dict:
        return self.runner(self.prep, k, self.prep.runs, drop)


def evidence_dir(prep: Prepared, k: int) -> Path | None:
    """Where run k's results.json is (its provenance goes beside it): the run's directory, across
    hosts its rank-0 host's (DLIO's multi-host shape keeps the run directory to the hosts' dirs)."""
    where = prep.leaves.get(k)
    return where / prep.cluster.hosts[0].hostname if where is not None and prep.cluster else where


def cache_clear(opts: Options, cluster, prep: Prepared):
    """The cache clear before each run: every host's across hosts, else the dataset storage's
    (suite.storage.backend: POSIX drops this host's page cache); None with --no-cache-drop."""
    if opts.no_cache_drop:
        return None
    if cluster:      # the dataset's residency sampled on this host (the first; one kernel's view)
        return lambda: ResidencyChecked(cluster.drop_caches(), prep.files)
    clear = prep.data.backend.clear_cache     # the command's data location (prepare resolved it)
    from suite.storage.objectstore import is_object
    if is_object(prep):         # no page cache of the objects on the client to measure (mincore)
        return clear
    return lambda: ResidencyChecked(clear(), prep.files)


RESIDENCY_SAMPLE_FILES = 32


class ResidencyChecked:
    """A cache drop with the residency evidence beside it: how much of (a sample of) the dataset is
    still in the page cache right after it (mincore: measuring does not read). `suite check` refuses
    a drop recorded as succeeded while the dataset stayed resident (ours-cache-drop-consistent)."""

    def __init__(self, drop, files: list):
        self.drop = drop
        self.residency = _residency(files) if getattr(drop, "succeeded", False) else {}

    def __getattr__(self, name):
        return getattr(self.drop, name)

    def to_dict(self) -> dict:
        return {**self.drop.to_dict(), **self.residency}


def _residency(files: list) -> dict:
    from suite.enforce import cache

    step = max(1, len(files) // RESIDENCY_SAMPLE_FILES)
    resident = size = n = 0
    for path, _ in files[::step][:RESIDENCY_SAMPLE_FILES]:
        try:
            r, s = cache.page_cache_residency(path)
        except (OSError, AttributeError, TypeError, ValueError):
            return {}           # not a local file (object storage), or no mincore: no evidence, not a claim
        resident, size, n = resident + r, size + s, n + 1
    if not size:
        return {}
    return {"dataset_resident_fraction_after": resident / size, "dataset_residency_sample_files": n}


def refuse(opts: Options) -> None:
    """Bad input and closed-division violations, before any cache drop or cgroup."""
    check_inputs(opts)
    if opts.no_cache_drop and opts.division != "open":
        raise RuleError("--no-cache-drop: expected --division open (the closed division drops the cache before "
                        f"every run), got --division {opts.division}")
    if not _across_hosts(opts):     # across hosts, hosts.connect probes every host
        enforced.refuse_without_clear(enforced.drop_page_cache, opts.division, opts.allow_no_cache_drop)


def _across_hosts(opts: Options) -> bool:
    from suite.harness import hosts
    from suite.training.run.prepare import parse_hosts
    return hosts.is_multi(opts, parse_hosts(opts))


def connect_hosts(opts: Options):
    """hosts.Cluster when the run spans hosts (each probed through the launcher; the per-host
    refusals: unreachable, uneven ranks in closed, no cache drop, no cgroup), else None."""
    from suite.harness import hosts
    from suite.training.run.prepare import parse_hosts

    names = parse_hosts(opts)
    if not hosts.is_multi(opts, names):
        return None
    cluster = hosts.connect(opts, names, opts.launcher)
    each = [f"{h.name} ({h.hostname}: ranks {h.ranks[0]}-{h.ranks[-1]}, {h.memory_bytes / 1024**3:.2f} GiB)"
            for h in cluster.hosts]
    say(f"hosts: {', '.join(each)} through {cluster.launcher.exe}")
    return cluster


def announce(prep: Prepared) -> None:
    wl, opts = prep.workload, prep.opts
    say(f"suite run: {wl.name} ({wl.dlio_name}), {opts.accelerators} accelerator(s) on {len(prep.hosts)} host(s), "
        f"{opts.division} division, ruleset {prep.ruleset}{', MINIATURE' if prep.miniature else ''}")
    say(f"  dataset: {prep.data_dir} ({len(prep.files)} files, {prep.total_bytes / 1024**3:.2f} GiB, "
        f"{prep.required_files} required)")
    say(f"  memory: {'cgroup limit ' + str(prep.memory_limit) + ' bytes' if prep.memory_limit else 'MemTotal'}"
        f" -> host memory {prep.host_memory_bytes / 1024**3:.2f} GiB ({prep.host_memory_bytes} B) for the dataset-size rule")
    if prep.memory_budget is not None:
        b = prep.memory_budget
        say(f"  memory budget: {b.cache_budget_bytes / 1024**2:.0f} MiB page cache (sizes the dataset) + "
            f"{b.own_memory_bytes / 1024**2:.0f} MiB the processes' own (mpiexec; {b.ranks} rank(s) of "
            f"{b.rank_base_bytes / 1024**2:.0f} MiB + {b.rank_buffers_bytes / 1024**2:.1f} MiB read buffers)")
    say(f"  results: {prep.results_dir}")
    if prep.miniature:
        say("  MINIATURE: " + ("a scaled-down workload" if prep.workload.scaled_down else "the embedded default "
            "(no --data-dir)") + "; every rule but the 500-step minimum applies; not valid for submission")


def summarise(prep: Prepared, results: list, compliant: bool, checked: str | None = None) -> None:
    """The end-of-run lines: AU per run, the overall numbers (metrics.overall), the verdict (the
    checker's, `checked`, when it ran: the last line is what `suite check` says)."""
    from suite.training import figures as metrics
    from suite.training.run.results import measured

    if len(results) != prep.runs:
        if checked:
            say("\n".join(headed(f"results: {prep.results_dir}: NOT compliant",
                                  [f"{len(results)} of {prep.runs} run(s) done", checked])))
        return
    warm = f" after {prep.warmup_runs} warm-up run(s) left out" if prep.warmup_runs else ""
    results = measured(prep, results)
    aus = [r["metric"][metrics.AU_MEAN] for r in results]
    o = metrics.overall([r["metric"][metrics.SAMPLES_MEAN] for r in results],
                        [r["metric"][metrics.IO_MEAN] for r in results])
    say(f"summary: {len(results)} run(s){warm} of {prep.workload.dlio_name} x{prep.opts.accelerators}: AU per run "
        f"{', '.join(f'{a:.2f}%' for a in aus)}; throughput "
        f"{o[metrics.SAMPLES_MEAN]:.4f} ({o[metrics.SAMPLES_STDEV]:.4f}) "
        f"samples/s, {o[metrics.REPORT_MB_MEAN]:.4f} ({o[metrics.REPORT_MB_STDEV]:.4f}) "
        f"MB/s over the runs"
        + ("; MINIATURE, not valid for submission" if prep.miniature else ""))
    # a short headline, then one indented line per reason (issue 38: no 700-column line)
    reasons = sorted({x for r in results for x in r['compliance']['reasons']}) if not compliant else []
    head = f"results: {prep.results_dir} ({prep.runs} run(s)): {'compliant' if compliant else 'NOT compliant'}"
    say("\n".join(headed(head, reasons + ([checked] if checked else []))))


def run_cgroup(prep: Prepared, k: int, run_dir: Path):
    """Run k's memory cgroup (None without --memory-limit): across hosts one on every host around
    its ranks (mpiexec itself stays outside), else one around mpiexec and its ranks."""
    if prep.memory_limit and prep.cluster:
        return prep.cluster.cgroups(prep.memory_limit, enforced.cgroup_name(k), run_dir / "cgroups")
    return enforced.memory_cgroup(prep.memory_limit, k)


def _parquet_columns(wl) -> list[str] | None:
    """The columns a Parquet workload reads (suite.training.data.parquet.layout), else None."""
    if wl.format != "parquet":
        return None
    from suite.training.data import parquet

    return list(parquet.layout(wl).read_columns)


def _rank_storage_type(prep: Prepared) -> str:
    """What the ranks' backend is: object storage for s3:// data, else the workload's."""
    from suite.storage.objectstore import is_object

    return "object" if is_object(prep) else storage_type_of(prep.workload)


def run_once(prep: Prepared, k: int, runs: int, drop) -> dict:
    wl, opts = prep.workload, prep.opts
    from suite.training import leaf

    run_dir = leaf.run_dir(prep, k)
    if prep.cluster:       # DLIO's multi-host shape: run-<k>/<rank-0 host>/ has the outputs, each host its configs/
        run_dir = run_dir / prep.cluster.hosts[0].hostname
    (run_dir / "steps").mkdir(parents=True, exist_ok=True)
    n = opts.accelerators
    plan = run_plan(prep, k, run_dir)
    steps = plan.steps_per_epoch
    plan_path = run_dir / "plan.json"
    plan.check_files()
    files.write_json(plan_path, plan.to_dict(), schema="plan", indent=None)
    from suite.training.run.dlio_output import write_configs
    cdir = leaf.config_dir_name(prep)
    tool = leaf.reference_tool(prep)
    write_configs(run_dir, wl, prep.params, len(prep.files), str(prep.data_dir), cdir, tool)
    for h in (prep.cluster.hosts[1:] if prep.cluster else []):     # DLIO: every host's configs/
        write_configs(run_dir.parent / h.hostname, wl, prep.params, len(prep.files), str(prep.data_dir), cdir, tool)
    argv = mpi.python_module("suite.training.run.rank", plan_path)
    prep.commands[k] = mpiexec_argv(prep) + argv
    start = time.time()
    say(f"[run {k}/{runs}] {n} rank(s), {wl.epochs} epoch(s) of {steps} step(s), "
        f"computation_time {wl.computation_time_s} s -> {run_dir}")
    cgroup = run_cgroup(prep, k, run_dir)
    if cgroup is not None and prep.cluster:      # across hosts each rank joins its host's cgroup itself
        status, error, evidence = enforced.enforced(
            cgroup, lambda: mpi.launch(mpiexec_argv(prep) + cgroup.wrap(argv), run_dir, None),
            lambda rc: mpi.rank_failure(run_dir, rc), join=False)
    else:
        status, error, evidence = enforced.enforced(
            cgroup, lambda start: mpi.launch(mpiexec_argv(prep) + argv, run_dir, start),
            lambda rc: mpi.rank_failure(run_dir, rc))
    from suite.training.run.results import collect

    return collect(prep, k, run_dir, start, time.time(), status, error, drop, evidence)


def run_plan(prep: Prepared, k: int, run_dir: Path) -> RunPlan:
    """What run k hands every rank (its seed is the workload's + 1000 x (k - 1))."""
    from suite.training.run.accelerator import ComputeModel

    wl, n = prep.workload, prep.opts.accelerators
    model = ComputeModel(wl.computation_time_s, wl.batch_size, n)
    steps = model.steps_per_epoch(len(prep.files) * wl.num_samples_per_file, wl.total_training_steps)
    ckpt_dir = None
    if wl.checkpoint_model_size_bytes:
        folder = Path(wl.config.get("checkpoint", {}).get("checkpoint_folder", "checkpoints"))
        ckpt_dir = str(folder if folder.is_absolute() else (prep.results_dir / folder).resolve())
    return RunPlan(
        run_dir=str(run_dir), workload=wl.name, accelerator=wl.accelerator, num_accelerators=n,
        epochs=wl.epochs, steps_per_epoch=steps, batch_size=wl.batch_size,
        computation_time_s=wl.computation_time_s, samples_per_file=wl.num_samples_per_file,
        record_length_bytes=wl.record_length_bytes, format=wl.format, read_threads=wl.read_threads,
        prefetch_size=wl.prefetch_size, transfer_size_bytes=wl.transfer_size_bytes, odirect=wl.odirect,
        seed=wl.seed + 1000 * (k - 1), file_shuffle=wl.file_shuffle != "off", sample_shuffle=wl.sample_shuffle != "off",
        files=[list(f) for f in prep.files], checkpoint_bytes=wl.checkpoint_model_size_bytes or 0,
        checkpoint_dir=ckpt_dir, delay_per_file_s=prep.opts.read_delay_s,
        storage_type=_rank_storage_type(prep), stop_when_clear=prep.opts.stop_when_clear,
        parquet_columns=_parquet_columns(wl), decode_delay_s=prep.opts.decode_delay_s)


def measure_ceiling(prep: Prepared) -> None:
    """Parquet: the page-cache ceiling before the series (suite.training.run.storagebound), on prep."""
    from suite.training.run import storagebound

    def launch_ranks(plan: RunPlan, run_dir: Path) -> tuple[str, str | None]:
        argv = mpi.python_module("suite.training.run.rank", run_dir / "plan.json")
        rc = mpi.launch(mpiexec_argv(prep) + argv, run_dir, None)
        return ("complete", None) if rc == 0 else ("failed", f"mpiexec exit {rc}")

    def plan(run_dir: Path) -> RunPlan:        # run 1's plan, without the checkpoint or a sweep's early stop
        return dataclasses_replace(run_plan(prep, 1, run_dir), checkpoint_bytes=0, stop_when_clear=None)

    prep.ceiling = storagebound.ceiling(prep, plan, launch_ranks, say)
    c = prep.ceiling
    if c.get("au_percentage") is not None:
        say(f"ceiling: AU {c['au_percentage']:.2f}% from the page cache, decode "
            f"{c.get('decode_share_percent') or 0:.0f}% of the reader's time")


def mpiexec_argv(prep: Prepared) -> list[str]:
    """`mpiexec -n N` and the hosts: the ranks we place across hosts (through the launcher), else
    the user's --hostfile or --hosts."""
    if prep.cluster:      # ranks placed by us (the same count per host), hosts reached through the launcher
        return mpi.mpiexec_argv(prep.opts.accelerators, host_args=prep.cluster.launcher.mpiexec_args()
                                + ["-hosts", prep.cluster.hosts_arg()])
    return mpi.mpiexec_argv(prep.opts.accelerators, hostfile=prep.opts.hostfile,
                            hosts=prep.hosts if prep.opts.hosts else None)
