"""`suite run`: prepare, enforce, launch one MPI rank per simulated accelerator, collect.

The CLI side (this process) checks the inputs and the closed-division rules, sizes and
(for the miniature) generates the dataset (suite.storage.run.prepare), and for each run drops the caches, starts
`mpiexec -n N python -m suite.storage.run.rank PLAN` inside the memory cgroup, relays the ranks'
progress lines and turns their step timings into summary.json, per_epoch_stats.json,
configs/, dlio.log and results.json. The rank side is suite.storage.run.rank. Outputs are
written in dlio_output / results (records), the math is suite.storage.metrics.
"""

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import RuleError, RunError, SuiteError
from suite.storage.backend.select import storage_type_of
from suite.storage.records import RunPlan
from suite.storage.run.prepare import Options, Prepared, check_inputs, prepare, say  # noqa: F401 - re-exported

CGROUP_PREFIX = "suite-run-"        # + <owner pid>-<run>: enforce.remove_stale finds a killed run's by it

# --------------------------------------------------------------------------- the runs


@dataclass(frozen=True)
class SkippedDrop:
    """--no-cache-drop: the evidence says no drop was attempted (the run is non-compliant)."""

    attempted: bool = False
    succeeded: bool = False
    duration_s: float = 0.0
    error: str = "not attempted: --no-cache-drop"
    method: str = "none"

    def to_dict(self) -> dict:
        from dataclasses import asdict
        return asdict(self)


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached the CLI while runs were under way."""

    def __init__(self, signame: str):
        super().__init__(signame)
        self.signame = signame


def run(opts: Options) -> int:
    """The whole `suite run`: returns the exit code (0: all runs complete and compliant)."""
    from suite import enforce
    from suite.errors import ExitCode

    refuse(opts)
    runner = run_once
    if opts.engine != "suite":      # the reference code under the same enforcement: storage/run/dlio.py
        from suite.storage.run import dlio
        if _across_hosts(opts):
            raise SuiteError("--engine dlio: expected one host (the DLIO engine does not span hosts yet), "
                             "got --hosts/--hostfile with several")
        runner = dlio.runner(opts)
    cluster = connect_hosts(opts)       # across hosts: every host probed, or refused, before anything starts
    # cgroups a killed earlier run left (its runs' and preflight's probes; owner pid dead)
    removed = [path for prefix in (CGROUP_PREFIX, "probe-") for path in enforce.remove_stale(prefix)]
    if removed:
        say(f"removed {len(removed)} stale memory cgroup(s) of a killed run: {', '.join(removed)}")
    prep = prepare(opts, cluster)
    prep.results_dir.mkdir(parents=True, exist_ok=True)
    announce(prep)
    results = []
    try:
        with _signals_interrupt():
            for k in range(1, prep.runs + 1):
                drop = SkippedDrop() if opts.no_cache_drop else (
                    cluster.drop_caches() if cluster else enforce.drop_caches())
                say(f"[run {k}/{prep.runs}] cache drop: "
                    + (f"done in {drop.duration_s:.2f} s" if drop.succeeded else f"NOT done ({drop.error})"))
                result = runner(prep, k, prep.runs, drop)
                results.append(result)
                if result["status"] == "interrupted":
                    raise RunError(f"{prep.results_dir / f'run-{k}'}: {result['error']}; "
                                   f"results.json marks the run interrupted")
                if result["status"] != "complete":
                    raise RunError(f"{prep.results_dir / f'run-{k}'}: {result['error']}")
    except Interrupted as exc:
        raise RunError(f"{prep.results_dir}: interrupted by {exc.signame} between runs "
                       f"({len(results)} of {prep.runs} complete)") from None
    finally:
        if results or prep.results_dir.exists():
            from suite.storage.run.results import write_run_set
            write_run_set(prep, results)
    compliant = all(r["compliance"]["compliant"] for r in results) and len(results) == prep.runs
    summarise(prep, results, compliant)
    return ExitCode.OK if compliant else ExitCode.FAILED


def refuse(opts: Options) -> None:
    """Bad input and closed-division violations, before any cache drop or cgroup."""
    from suite import enforce

    check_inputs(opts)
    if opts.no_cache_drop and opts.division != "open":
        raise RuleError("--no-cache-drop: expected --division open (the closed division drops the cache before "
                        f"every run), got --division {opts.division}")
    if opts.division == "closed" and not opts.allow_no_cache_drop and not _across_hosts(opts):
        probe = enforce.drop_caches()       # refuse before anything else when it is not permitted
        if not probe.succeeded:
            raise RuleError(f"cache drop: expected permission to drop the page cache before each run "
                            f"(closed division), got {probe.error} (use --allow-no-cache-drop or "
                            f"--division open; either makes the run non-compliant)")


def _across_hosts(opts: Options) -> bool:
    from suite.storage.run import hosts
    from suite.storage.run.prepare import parse_hosts
    return hosts.is_multi(opts, parse_hosts(opts))


def connect_hosts(opts: Options):
    """hosts.Cluster when the run spans hosts (each probed through the launcher; the per-host
    refusals: unreachable, uneven ranks in closed, no cache drop, no cgroup), else None."""
    from suite.storage.run import hosts
    from suite.storage.run.prepare import parse_hosts

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
        f" -> host memory {prep.host_memory_bytes / 1024**3:.2f} GiB for the dataset-size rule")
    say(f"  results: {prep.results_dir}")
    if prep.miniature:
        say("  MINIATURE: the embedded default (no --data-dir); every rule but the 500-step minimum applies; "
            "not valid for submission")


@contextlib.contextmanager
def _signals_interrupt():
    """SIGINT and SIGTERM raise Interrupted while the runs are under way (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_signal(signum, frame):
        raise Interrupted(signal.Signals(signum).name)

    old = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, h in old.items():
            signal.signal(sig, h)


def summarise(prep: Prepared, results: list, compliant: bool) -> None:
    """The end-of-run lines: AU per run, the overall numbers (metrics.overall), the verdict."""
    from suite.storage import metrics

    if len(results) != prep.runs:
        return
    aus = [r["metric"][metrics.AU_MEAN] for r in results]
    o = metrics.overall([r["metric"][metrics.SAMPLES_MEAN] for r in results],
                        [r["metric"][metrics.IO_MEAN] for r in results])
    say(f"summary: {prep.runs} run(s) of {prep.workload.dlio_name} x{prep.opts.accelerators}: AU per run "
        f"{', '.join(f'{a:.2f}%' for a in aus)}; throughput "
        f"{o[metrics.SAMPLES_MEAN]:.4f} ({o[metrics.SAMPLES_STDEV]:.4f}) "
        f"samples/s, {o[metrics.REPORT_MB_MEAN]:.4f} ({o[metrics.REPORT_MB_STDEV]:.4f}) "
        f"MB/s over the runs"
        + ("; MINIATURE, not valid for submission" if prep.miniature else ""))
    verdict = 'compliant' if compliant else 'NOT compliant: ' + '; '.join(
        sorted({x for r in results for x in r['compliance']['reasons']}))
    say(f"results: {prep.results_dir} ({prep.runs} run(s)); {verdict}")


def run_cgroup(prep: Prepared, k: int, run_dir: Path):
    """Run k's memory cgroup (None without --memory-limit): across hosts one on every host around
    its ranks (mpiexec itself stays outside), else one around mpiexec and its ranks."""
    from suite import enforce

    name = f"{CGROUP_PREFIX}{os.getpid()}-{k}"
    if not prep.memory_limit:
        return None
    if prep.cluster:
        return prep.cluster.cgroups(prep.memory_limit, name, run_dir / "cgroups")
    return enforce.MemoryCgroup(prep.memory_limit, name)


def run_once(prep: Prepared, k: int, runs: int, drop) -> dict:
    from suite.storage.run.accelerator import ComputeModel

    wl, opts = prep.workload, prep.opts
    run_dir = (prep.results_dir / f"run-{k}").resolve()
    if prep.cluster:       # DLIO's multi-host shape: run-<k>/<rank-0 host>/ has the outputs, each host its configs/
        run_dir = run_dir / prep.cluster.hosts[0].hostname
    (run_dir / "steps").mkdir(parents=True, exist_ok=True)
    n = opts.accelerators
    model = ComputeModel(wl.computation_time_s, wl.batch_size, n)
    steps = model.steps_per_epoch(len(prep.files) * wl.num_samples_per_file, wl.total_training_steps)
    ckpt_dir = None
    if wl.checkpoint_model_size_bytes:
        folder = Path(wl.config.get("checkpoint", {}).get("checkpoint_folder", "checkpoints"))
        ckpt_dir = str(folder if folder.is_absolute() else (prep.results_dir / folder).resolve())
    plan = RunPlan(
        run_dir=str(run_dir), workload=wl.name, accelerator=wl.accelerator, num_accelerators=n,
        epochs=wl.epochs, steps_per_epoch=steps, batch_size=wl.batch_size,
        computation_time_s=wl.computation_time_s, samples_per_file=wl.num_samples_per_file,
        record_length_bytes=wl.record_length_bytes, format=wl.format, read_threads=wl.read_threads,
        prefetch_size=wl.prefetch_size, transfer_size_bytes=wl.transfer_size_bytes, odirect=wl.odirect,
        seed=wl.seed + 1000 * (k - 1), file_shuffle=wl.file_shuffle != "off", sample_shuffle=wl.sample_shuffle != "off",
        files=[list(f) for f in prep.files], checkpoint_bytes=wl.checkpoint_model_size_bytes or 0,
        checkpoint_dir=ckpt_dir, delay_per_file_s=prep.opts.read_delay_s, storage_type=storage_type_of(wl))
    plan_path = run_dir / "plan.json"
    plan.check_files()
    files.write_json(plan_path, plan.to_dict(), schema="plan", indent=None)
    from suite.storage.dlio_output import write_configs
    write_configs(run_dir, wl, prep.params, len(prep.files), str(prep.data_dir))
    for h in (prep.cluster.hosts[1:] if prep.cluster else []):     # DLIO: every host's configs/
        write_configs(run_dir.parent / h.hostname, wl, prep.params, len(prep.files), str(prep.data_dir))
    argv = [sys.executable, "-m", "suite.storage.run.rank", str(plan_path)]
    start = time.time()
    say(f"[run {k}/{runs}] {n} rank(s), {wl.epochs} epoch(s) of {steps} step(s), "
        f"computation_time {wl.computation_time_s} s -> {run_dir}")
    cgroup = run_cgroup(prep, k, run_dir)
    if cgroup is not None and prep.cluster:      # across hosts each rank joins its host's cgroup itself
        status, error, evidence = enforced(cgroup, lambda: launch(mpiexec_argv(prep) + cgroup.wrap(argv), run_dir, None),
                                           lambda rc: rank_failure(run_dir, rc), join=False)
    else:
        status, error, evidence = enforced(cgroup, lambda start: launch(mpiexec_argv(prep) + argv, run_dir, start),
                                           lambda rc: rank_failure(run_dir, rc))
    from suite.storage.run.results import collect

    return collect(prep, k, run_dir, start, time.time(), status, error, drop, evidence)


def enforced(cgroup, go, failure, join: bool = True) -> tuple[str, str | None, dict | None]:
    """Run the ranks inside `cgroup` (None: no limit) and say how it went: (status, error, the
    cgroup's evidence). `go(start)` starts mpiexec and returns its exit status; `start` is what
    puts the child into the cgroup (None without one; go() takes no argument when join=False:
    the ranks join themselves). The evidence is read even when the ranks failed or were stopped."""
    status, error, evidence = "complete", None, None
    try:
        if cgroup is None:
            rc = go(None) if join else go()
        else:
            with cgroup:
                rc = go(cgroup.start) if join else go()
        if rc != 0:
            status, error = "failed", failure(rc)
    except Interrupted as exc:
        status, error = "interrupted", f"interrupted by {exc.signame}"
    finally:
        try:
            evidence = cgroup.evidence() if cgroup is not None else None
        except Exception as exc:  # noqa: BLE001 - evidence must not hide the run's own error
            evidence = {"error": str(exc)}
    if status == "failed" and evidence and evidence.get("oom_kills"):
        error += (f"; the memory cgroup OOM-killed {evidence['oom_kills']} process(es) at "
                  f"{evidence.get('applied_bytes')} bytes: raise --memory-limit")
    return status, error, evidence


def mpiexec_argv(prep: Prepared) -> list[str]:
    exe = Path(sys.executable).parent / "mpiexec"
    import shutil
    mpiexec = str(exe) if exe.exists() else shutil.which("mpiexec")
    if not mpiexec:
        raise SuiteError("mpiexec: expected the mpich wheel's mpiexec beside python, got none (pip install mpich)")
    argv = [mpiexec, "-n", str(prep.opts.accelerators)]
    if prep.cluster:      # ranks placed by us (the same count per host), hosts reached through the launcher
        return argv + prep.cluster.launcher.mpiexec_args() + ["-hosts", prep.cluster.hosts_arg()]
    if prep.opts.hostfile:
        argv += ["-f", prep.opts.hostfile]
    elif prep.opts.hosts:
        argv += ["-hosts", ",".join(prep.hosts)]
    return argv


def rank_environment() -> dict:
    """Our environment, with this `suite` package importable by the ranks whatever their
    working directory (also when suite runs from a checkout that is not installed)."""
    env = dict(os.environ)
    here = str(Path(__file__).resolve().parent.parent)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([here, *[p for p in paths if p != here]])
    return env


def launch(argv, run_dir: Path, start_in_cgroup, *, log_name: str = "mpiexec.log", relay=None, env=None,
           cwd=None, merge_stderr: bool = False) -> int:
    """Start mpiexec (in the cgroup when given), relay its stdout, wait; on SIGINT/SIGTERM
    stop the ranks (mpiexec forwards the signal; stragglers are killed by pid). The DLIO engine
    passes its own log name, relay, environment and working directory, stderr merged into stdout."""
    log = open(run_dir / log_name, "wb")
    kwargs = dict(stdout=subprocess.PIPE, stderr=subprocess.STDOUT if merge_stderr else log,
                  stdin=subprocess.DEVNULL, start_new_session=True, env=env or rank_environment(),
                  cwd=None if cwd is None else str(cwd))
    try:
        proc = start_in_cgroup(argv, **kwargs) if start_in_cgroup else subprocess.Popen(argv, **kwargs)
    except OSError as exc:
        log.close()
        raise RunError(f"{argv[0]}: cannot start: {exc.strerror}") from None
    relay = threading.Thread(target=relay or _relay, args=(proc.stdout, log), daemon=True)
    relay.start()
    try:
        rc = proc.wait()
    except Interrupted:
        stop(proc, run_dir)
        raise
    finally:
        relay.join(timeout=10)
        log.close()
    return rc


def _relay(stream, log) -> None:
    """Ranks' stdout to ours; mpiexec's own banners (a rank's bad termination) to mpiexec.log."""
    for raw in iter(stream.readline, b""):
        if raw.startswith((b"=", b"YOUR APPLICATION", b"This typically refers", b"Please see the FAQ")) \
                or b"TERMINATION" in raw:
            log.write(raw)
            log.flush()
            continue
        sys.stdout.write(raw.decode("utf-8", "replace"))
        sys.stdout.flush()
    stream.close()


def stop(proc, run_dir: Path) -> None:
    for sig, wait in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        if proc.poll() is not None:
            break
        try:
            proc.send_signal(sig)
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        except ProcessLookupError:
            break
    for pid in rank_pids(run_dir).values():      # ranks we started, if mpiexec left any behind
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def rank_pids(run_dir: Path) -> dict[int, int]:
    """{rank: pid} of the ranks that ran on this machine."""
    here = socket.gethostname()
    return {r: pid for r, (host, pid) in rank_places(run_dir).items() if host == here}


def rank_places(run_dir: Path) -> dict[int, tuple[str, int]]:
    """{rank: (host, pid)} from ranks/rank-<r>.pid (each rank writes its own)."""
    out = {}
    for p in (run_dir / "ranks").glob("rank-*.pid"):
        try:
            host, pid = p.read_text().split()
            out[int(p.stem.split("-")[1])] = (host, int(pid))
        except (OSError, ValueError):
            pass
    return out


def rank_failure(run_dir: Path, rc: int) -> str:
    """One line: what failed and where, from the ranks' error files or mpiexec's report."""
    errs = sorted((run_dir / "errors").glob("rank-*.txt"))
    if errs:
        first = errs[0]
        return f"{first.stem}: {first.read_text().strip().splitlines()[0]}"
    import re
    text = (run_dir / "mpiexec.log").read_text(errors="replace") if (run_dir / "mpiexec.log").exists() else ""
    pid = re.search(r"PID (\d+) RUNNING AT (\S+)", text)
    code = re.search(r"EXIT CODE: (\d+)", text)
    places = {v: k for k, v in rank_places(run_dir).items()}
    if pid:
        rank = places.get((pid.group(2), int(pid.group(1))))
        if rank is None:    # mpiexec names the host as given to it; the rank wrote its own hostname
            rank = next((r for (h, p), r in places.items() if p == int(pid.group(1))), None)
        who = f"rank {rank}" if rank is not None else "a rank"
        how = f"exit code {code.group(1)}" if code else "abnormal exit"
        if code and int(code.group(1)) in (9, 15, 6, 11):
            how += f" ({signal.Signals(int(code.group(1))).name})"
        return f"{who} (pid {pid.group(1)} on {pid.group(2)}) died: {how}; see {run_dir / 'mpiexec.log'}"
    how = f"exit code {rc}" + (f" ({signal.Signals(rc).name})" if rc in (6, 9, 11, 15) else "")
    return f"a rank or mpiexec died: {how}; see {run_dir / 'mpiexec.log'}"
