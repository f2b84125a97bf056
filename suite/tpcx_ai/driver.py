"""The TPCx-AI run: generation, load (TLD), power training, power serving x2, scoring, throughput.

Each phase and each job is timed with time.perf_counter (seconds since the run started, rounded
to ms) and printed as one progress line. Each use-case stage runs in its own process (launch.py).
A use case that fails (raises, is killed) is named in one line, marks the run invalid, and the
others go on. Ctrl-C / SIGTERM stop the running jobs and write the result marked interrupted (as
the storage kinds mark theirs), also while the dask cluster is being reached (Driver.connect).
AIUCpm@SF (metric.py) only when all ten use cases ran, S >= 2 and every threshold passed.
"""

import math
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from suite.errors import SuiteError, WorkloadError, expected_got
from suite.harness import hostsampling
from suite.report import progress as live_progress
from suite.tpcx_ai import dask_hosts
from suite.tpcx_ai import extra
from suite.tpcx_ai import generate
from suite.tpcx_ai import load
from suite.tpcx_ai import quality
from suite.tpcx_ai import usecase
from suite.tpcx_ai.launch import Launcher
from suite.tpcx_ai.registry import Registry

POWER = ("training", "serving_1", "serving_2")
PHASE_ORDER = ("generation", "load", "training", "serving_1", "serving_2", "scoring", "throughput")
LIVE_EVERY_S = 15.0      # off a TTY, a live progress line at most this often (suite.report.progress.Live)
STAGE = {"training": "train", "serving_1": "serve", "serving_2": "serve", "scoring": "score", "throughput": "serve"}


def _plain(value):
    """A constant prediction as JSON has it (numpy scalars to Python)."""
    return value.item() if hasattr(value, "item") else value


def _shown(prediction) -> str:
    """A constant prediction for people: a float rounded (294.78, not 294.7827183479132), else as it is."""
    from suite.report.rounding import generic

    return generic(prediction) if isinstance(prediction, float) else repr(prediction)


def say_now(text: str) -> None:
    """A progress line on stdout, flushed (a pipe would hold it back until the run ends)."""
    print(text, flush=True)


@dataclass
class Options:
    scale_factor: float
    data_dir: Path
    results_dir: Path
    streams: int = 2
    use_cases: tuple[int, ...] | None = None      # None: all ten
    processes: int = 1
    seed: int = 0
    registry: Registry = field(default_factory=Registry)
    launcher: str = "exec"
    out: object = say_now
    engine: str = "local"                          # local | dask (engine_dask.py)
    scheduler: str | None = None                   # dask: an existing scheduler; None: a LocalCluster


@dataclass
class JobRecord:
    phase: str
    use_case: int | None
    start_s: float
    end_s: float
    status: str                      # ok | failed
    stream: int | None = None
    error: str | None = None
    cpu_s: float | None = None       # shown in the progress lines, not written to the result

    @property
    def duration_s(self) -> float:
        return round(self.end_s - self.start_s, 3)


@dataclass
class Run:
    options: Options
    use_cases: dict                  # {n: usecase.UseCase}
    thresholds: dict                 # {n: usecase.Threshold}
    permutations: list
    started_at: str = ""
    status: str = "running"          # running | complete | incomplete | interrupted (Ctrl-C, SIGTERM)
    phases: list = field(default_factory=list)     # [{name, start_s, end_s, duration_s, complete}]
    jobs: list = field(default_factory=list)       # [JobRecord]
    errors: list = field(default_factory=list)     # one-line errors of failed jobs
    quality: dict = field(default_factory=dict)    # {n: {metric, value, threshold, op, passed, rule_id}}
    generation: dict = field(default_factory=dict)
    loads: list = field(default_factory=list)
    streams: list = field(default_factory=list)    # [{stream, permutation, start_s, end_s}]
    failed: set = field(default_factory=set)       # use cases with a failed stage
    metric: dict | None = None
    reasons: list = field(default_factory=list)    # why there is no (publishable) AIUCpm
    fatal: Exception | None = None                 # a SuiteError that stopped the run (bad data)
    engine: dict = field(default_factory=lambda: {"name": "local"})   # dask: scheduler, workers


def check_options(opts: Options) -> tuple[dict, dict, list]:
    """Bad input -> one-line SuiteError (exit 2), before anything is written."""
    extra.require()
    sf = opts.scale_factor
    if isinstance(sf, bool) or not isinstance(sf, (int, float)) or not math.isfinite(sf) or sf <= 0:
        raise SuiteError(expected_got("--scale-factor", "value", "a finite number > 0", sf))
    numbers = tuple(opts.use_cases) if opts.use_cases else tuple(range(1, 11))
    bad = [n for n in numbers if n not in range(1, 11)]
    if bad or len(set(numbers)) != len(numbers):
        raise SuiteError(expected_got("--use-cases", "value", "distinct use cases among 1..10", ",".join(map(str, numbers))))
    if opts.streams < 1 or (len(numbers) == 10 and opts.streams < 2):
        raise SuiteError(expected_got("--streams", "value", "at least 2 for a metric run (all ten use cases)", opts.streams))
    if opts.processes < 1:
        raise SuiteError(expected_got("--processes", "value", "at least 1", opts.processes))
    installed = opts.registry.available_use_cases()
    absent = [n for n in numbers if n not in installed]
    if absent:
        raise WorkloadError(expected_got("--use-cases", f"use case {absent[0]}", "an installed use case "
                                         f"(installed: {', '.join(map(str, installed)) or 'none'})", "not installed"))
    ucs = usecase.load_all(opts.registry, sorted(numbers))
    ths = usecase.thresholds(opts.registry)
    usecase.check_against(ucs, ths)
    perms = usecase.permutations(opts.registry)
    if opts.streams > len(perms):
        raise SuiteError(expected_got("--streams", "value", f"at most {len(perms)} (the orders in streams.yaml)", opts.streams))
    tables = {t for g in opts.registry.groups() for t in g.schemas()}
    for n, uc in ucs.items():
        lacking = [t for t in uc.tables if t not in tables]
        if lacking:
            raise WorkloadError(expected_got(uc.path, "tables", f"tables of installed groups ({', '.join(sorted(tables))})",
                                             f"{lacking[0]} (its table group is not installed)"))
    return ucs, ths, perms


class Driver:
    def __init__(self, opts: Options):
        ucs, ths, perms = check_options(opts)
        self.opts = opts
        self.run = Run(opts, ucs, ths, perms, started_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.launcher = Launcher(opts.launcher)
        self.cluster = None
        if opts.engine == "dask":            # the address checked here (bad input); reached in connect()
            from suite.tpcx_ai import engine_dask

            engine_dask.require()
            address = engine_dask.scheduler_address(opts.scheduler)[0] if opts.scheduler else None
            self.run.engine = {"name": "dask", "scheduler": address, "local_cluster": address is None}
        self.data = Path(opts.data_dir)
        self.res = Path(opts.results_dir)
        # the live line (suite.report.progress): on a TTY rewritten in place, else a line every 15 s at most
        self.live = live_progress.Live(every_s=LIVE_EVERY_S, tty=opts.out is say_now and sys.stdout.isatty(),
                                      plain=opts.out)
        self._phase: tuple | None = None           # (name, start) of the phase under way (time.monotonic)
        self._waits: dict = {}                     # {key: (what the run waits for, since)}
        self._rate = ""                            # the phase's rate, where it has one (generation)
        self._lock = threading.Lock()

    def status(self) -> str | None:
        """The live line: elapsed time, the phase, what it waits for (use case, stage, stream), the rate."""
        with self._lock:
            if self._phase is None:
                return None
            now, (name, since) = time.monotonic(), self._phase
            waits = [f"{what} ({live_progress.elapsed(now - t)})" for what, t in self._waits.values()]
            rate = self._rate
        where = " on the dask cluster" if self.cluster is not None else ""
        said = f"tpcx-ai: {name} {live_progress.elapsed(now - since)}"
        if waits:
            said += f": waiting for {', '.join(waits)}{where}"
        total = len(self.run.use_cases) * (self.opts.streams if name == "throughput" else 1)
        if name in STAGE:                        # the jobs' phases: how many of their jobs are done
            done = sum(1 for j in list(self.run.jobs) if j.phase == name)
            rate = f"{done}/{total} {'servings' if name == 'throughput' else 'use cases'} done"
        return said + (f"; {rate}" if rate else "")

    def waiting(self, key, what: str | None) -> None:
        """The run now waits for `what` (None: no longer)."""
        with self._lock:
            if what is None:
                self._waits.pop(key, None)
            else:
                self._waits[key] = (what, time.monotonic())

    def connect(self) -> None:
        """--engine dask: the cluster reached (every wait bounded: engine_dask), its workers recorded.
        A refusal is a SuiteError (nothing of the run begun); Ctrl-C / SIGTERM: see interrupted()."""
        if self.opts.engine != "dask" or self.cluster is not None:
            return
        from suite.tpcx_ai import engine_dask

        self.say(f"connecting to the dask scheduler at {self.run.engine['scheduler'] or 'a new LocalCluster'}")
        self.cluster = engine_dask.Cluster(self.opts.scheduler)
        self.launcher = engine_dask.DaskLauncher(self.cluster)
        self.run.engine = self.cluster.record()

    def interrupted(self, where: str) -> Run:
        """The run stopped by Ctrl-C / SIGTERM before its phases began (`where`): marked interrupted."""
        self.run.status = "interrupted"
        self.run.reasons.append(f"interrupted (Ctrl-C or SIGTERM) {where}: the run is incomplete")
        self.say(f"interrupted {where}; the result is marked interrupted")
        from suite.tpcx_ai import leaf as result

        result.conclude(self.run)
        return self.run

    def say(self, text: str) -> None:
        self.live.say(f"tpcx-ai: {text}")

    # ----------------------------------------------------------------------- phases

    def phase(self, name: str, body) -> None:
        start = self.launcher.now()
        cpu0 = _cpu_s()
        self.say(f"{name}: start")
        with self._lock:
            self._phase, self._rate = (name, time.monotonic()), ""
        entry = {"name": name, "start_s": round(start, 3), "end_s": None, "duration_s": None, "complete": False}
        self.run.phases.append(entry)
        body()
        if getattr(self.launcher, "lost", None) is not None:   # the dask cluster lost its workers: the run stops
            raise self.launcher.lost
        end = self.launcher.now()
        entry.update(end_s=round(end, 3), duration_s=round(end - start, 3), complete=True)
        cpu = "" if cpu0 is None else f" (CPU {_cpu_s() - cpu0:.3f} s: the driver and its finished local processes)"
        self.say(f"{name}: done in {entry['duration_s']:.3f} s{cpu}")

    def do_generation(self) -> None:
        last = [0.0]

        def progress(done, total, rows, nbytes, elapsed):
            if done == total or elapsed - last[0] >= 1.0:
                last[0] = elapsed
                said = (f"{done}/{total} chunks, {rows:,} rows, {nbytes / 1e6:.1f} MB, "
                        f"{rows / max(elapsed, 1e-9):,.0f} rows/s, {nbytes / 1e6 / max(elapsed, 1e-9):.1f} MB/s")
                if done == total:
                    self.say(f"generation: {said}")
                else:                        # the live line's rate (suite.report.progress.Live)
                    with self._lock:
                        self._rate = said

        reg = self.opts.registry
        executor = None
        if self.cluster is not None:
            from suite.tpcx_ai import engine_dask

            executor = engine_dask.generate_on(self.cluster)
        stats = generate.generate(reg, self.opts.scale_factor, self.opts.seed, self.data, self.opts.processes, progress,
                                  executor=executor)
        # what a checker re-derives the scale factor from: the groups' sizing and each table's rows
        self.run.generation = {**stats.to_dict(), "scale_factor": self.opts.scale_factor, "seed": self.opts.seed,
                               "groups": [m for m in reg.group_modules if m not in reg.missing_groups()],
                               "tables": generate.per_table(stats.tables)}

    def _load(self, split: str, phase: str | None) -> None:
        schemas = {}
        for g in self.opts.registry.groups():
            schemas.update(g.schemas())
        start = self.launcher.now()
        self.waiting("load", f"the {split} split's load into parquet")
        try:
            if self.cluster is not None:
                from suite.tpcx_ai import engine_dask

                stats = engine_dask.load_split(self.cluster, self.data, split, schemas)
            else:
                stats = load.load_split(self.data, split, schemas)
        finally:
            self.waiting("load", None)
        end = self.launcher.now()
        if phase:
            self.run.jobs.append(JobRecord(phase, None, round(start, 3), round(end, 3), "ok"))
        self.run.loads.append({**stats.to_dict(), "timed": bool(phase)})
        self.say(f"load {split}: {stats.rows:,} rows, {stats.raw_bytes / 1e6:.1f} MB raw in {stats.duration_s:.3f} s "
                 f"({stats.mb_per_s:.1f} MB/s)")

    def do_load(self) -> None:
        self._load("training", "load")
        self._load("serving", "load")

    def job_argv(self, n: int, phase: str, out: Path | None) -> list[str]:
        reg = self.opts.registry
        split = {"training": "training", "scoring": "scoring"}.get(phase, "serving")
        argv = ["--stage", STAGE[phase], "--use-case", str(n), "--module", reg.usecase_module(n),
                "--workload", str(reg.workload_file(n)), "--data", str(self.data / split),
                "--model", str(self.res / "models" / f"uc{n:02d}.model"), "--seed", str(self.opts.seed)]
        if out is not None:
            argv += ["--output", str(out)]
        return argv + [f"--path={p}" for p in reg.paths]

    def job(self, n: int, phase: str, stream: int | None = None) -> JobRecord | None:
        if n in self.run.failed or self.launcher.stopping.is_set():
            return None
        tag = f"{phase}" + (f"-stream{stream}" if stream else "")
        out = None if phase == "training" else self.res / "output" / tag / f"uc{n:02d}"
        label = f"uc{n:02d} {STAGE[phase]}"
        logs = self.res / "logs" / f"uc{n:02d}-{tag}"
        argv = self.job_argv(n, phase, out) + [f"--log={logs}.traceback"]
        self.waiting(tag, f"{label}" + (f" (stream {stream})" if stream else ""))
        try:
            o = self.launcher.run(argv, logs.with_suffix(".err"), label)
        finally:
            self.waiting(tag, None)
        if (self.launcher.stopping.is_set() or getattr(self.launcher, "lost", None) is not None) and not o.ok:
            return None                          # stopped by Ctrl-C, or the cluster lost: not a use-case failure
        rec = JobRecord(phase, n, o.start_s, o.end_s, "ok" if o.ok else "failed", stream, o.error,
                        getattr(o, "cpu_s", None))
        self.run.jobs.append(rec)
        where = f" stream {stream}" if stream else ""
        if o.ok:
            cpu = "" if rec.cpu_s is None else f" (CPU {rec.cpu_s:.3f} s)"
            self.say(f"{phase}{where}: uc{n:02d} ok in {rec.duration_s:.3f} s{cpu}")
        else:
            self.run.failed.add(n)
            self.run.errors.append(o.error)
            self.say(f"{phase}{where}: uc{n:02d} FAILED in {rec.duration_s:.3f} s: {o.error}")
        return rec

    def do_power(self, phase: str) -> None:
        for n in sorted(self.run.use_cases):
            self.job(n, phase)

    def do_scoring(self) -> None:
        self._load("scoring", None)
        for n in sorted(self.run.use_cases):
            rec = self.job(n, "scoring")
            if rec is not None and rec.status == "ok":
                self.score(n)

    def score(self, n: int) -> None:
        import pandas as pd

        uc, th = self.run.use_cases[n], self.run.thresholds[n]
        entry = {"metric": uc.metric, "value": None, "threshold": th.value, "op": th.op, "passed": True,
                 "rule_id": th.id}
        if uc.metric != "none":
            out = self.res / "output" / "scoring" / f"uc{n:02d}"
            where = f"uc{n:02d} scoring"
            try:
                truth = pd.read_parquet(out / "truth.parquet")
                pred = pd.read_parquet(out / "predictions.parquet")
                entry["value"], const_value, const = quality.score_with_constant(uc.metric, truth, pred, uc.keys, where)
                entry["passed"] = th.passes(entry["value"])
                entry["constant"] = {"value": const_value, "prediction": _plain(const)}
                entry["beats_constant"] = quality.beats(uc.metric, entry["value"], const_value)
            except (SuiteError, OSError, ValueError) as exc:
                entry["passed"] = False
                self.run.errors.append(f"{where}: {str(exc).splitlines()[0]}")
            shown = "no value" if entry["value"] is None else f"{entry['value']:.4f}"
            const = entry.get("constant")
            versus = "" if const is None else (
                f"; {'beats' if entry['beats_constant'] else 'does NOT beat'} the best constant "
                f"{_shown(const['prediction'])} ({const['value']:.4f})")
            self.say(f"scoring: uc{n:02d} {uc.metric} = {shown} ({th.describe()}): "
                     f"{'pass' if entry['passed'] else 'FAIL'} ({th.id}){versus}")
        self.run.quality[n] = entry

    def do_throughput(self) -> None:
        order = sorted(self.run.use_cases)
        threads = []
        for s in range(1, self.opts.streams + 1):
            perm = [n for n in self.run.permutations[s - 1] if n in order]
            entry = {"stream": s, "permutation": perm, "start_s": None, "end_s": None}
            self.run.streams.append(entry)
            threads.append(threading.Thread(target=self._stream, args=(s, perm, entry), name=f"stream-{s}"))
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.1)
        except BaseException:          # Ctrl-C: stop the streams' jobs, let the threads end, then report
            self.launcher.stop_all()
            for t in threads:
                t.join()
            raise

    def _stream(self, s: int, perm: list, entry: dict) -> None:
        entry["start_s"] = round(self.launcher.now(), 3)
        for n in perm:
            if self.launcher.stopping.is_set():
                return
            self.job(n, "throughput", stream=s)
        entry["end_s"] = round(self.launcher.now(), 3)

    # ----------------------------------------------------------------------- the run

    def execute(self) -> Run:
        self.connect()                       # a no-op when run.py connected first (or the engine is local)
        steps = [("generation", self.do_generation), ("load", self.do_load)]
        steps += [(p, lambda p=p: self.do_power(p)) for p in POWER]
        steps += [("scoring", self.do_scoring), ("throughput", self.do_throughput)]
        self.res.mkdir(parents=True, exist_ok=True)
        previous = _on_sigterm()
        try:
            fleet = (lambda interval_s: dask_hosts.DaskHosts(self.cluster, interval_s)) if self.cluster else None
            with hostsampling.sampling(lambda: self.res, fleet=fleet), \
                    live_progress.Ticker(self.live, self.status):
                for name, body in steps:     # the run sampled: host_metrics.json beside tpcxai-result.json
                    self.phase(name, body)
            self.run.status = "complete"
        except KeyboardInterrupt:
            self.launcher.stop_all()
            self.run.status = "interrupted"
            self.run.reasons.append("interrupted (Ctrl-C or SIGTERM): the run is incomplete")
            self.say("interrupted: stopping the running jobs; the result is marked interrupted")
        except SuiteError as exc:            # missing or corrupt data: stop, report, exit 2
            self.launcher.stop_all()
            self.run.status = "incomplete"
            self.run.fatal = exc
            self.run.reasons.append(f"stopped: {exc}")
        finally:
            _restore_sigterm(previous)
            if self.cluster is not None:
                self.run.engine["placements"] = list(self.launcher.placements)
                self.run.engine["partitions"] = self.cluster.partitions
                self.cluster.close()
            for root in (self.res, self.data / generate.RAW, *(self.data / s for s in ("training", "serving", "scoring"))):
                _sweep_temporaries(root)
        from suite.tpcx_ai import leaf as result

        result.conclude(self.run)
        return self.run


def _cpu_s() -> float | None:
    """User + system CPU seconds of this process and its reaped children (None off Unix)."""
    try:
        import resource
    except ImportError:
        return None
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _on_sigterm():
    """Ctrl-C and SIGTERM raise KeyboardInterrupt in the main thread (even where SIGINT was ignored)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        raise KeyboardInterrupt

    return signal.signal(signal.SIGTERM, handler), signal.signal(signal.SIGINT, handler)


def _restore_sigterm(previous) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous[0])
        signal.signal(signal.SIGINT, previous[1])


def _sweep_temporaries(root: Path) -> None:
    """Remove what stopped jobs left half-written (always under a .<name>.tmp name)."""
    if root.is_dir():
        for p in root.rglob(".*.tmp"):
            if p.is_file() and not p.is_symlink():
                p.unlink(missing_ok=True)
