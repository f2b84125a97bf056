"""`suite run --workload kv-cache --cache-dir D`: options 1-3 (or one), N trials each, on the
enforced harness (suite.harness.enforced: results dir claimed, cache dropped before each trial,
memory cgroup, signals). Each trial is `mpiexec -n <accelerators> python -m suite.kv_cache.rank ...`
(one client per rank); its stdout and stderr go to kvcache_opt<O>_trial<T>_<ts>.{stdout,stderr}.log.

Refusals first: the closed division runs Table KVCache-1's parameters (--kv-* only in open; seed
42); cache dir and results dir on one file system (Rule 6.4.1) in closed. A duration, trial count or
inter-option delay other than the closed one runs, and is recorded as reduced (suite check says the
run is not valid for submission). Without --cache-dir: the MINIATURE (small entries, few users).

The leaf: <results>/kv_cache/<model>/run/<ts>/ with summary.json, kv_cache_<ts>_metadata.json (the
commands that ran), fs_separation.json, option_<O>/trial_<T>/rank_<R>/kvcache_results_<ts>.json.
"""

from __future__ import annotations

import datetime as dt
import shlex
import socket
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

from suite import files, redact
from suite.errors import RuleError, SuiteError
from suite.harness import enforced, hostfacts, leafstamp, mpi
from suite.harness.enforced import Series
from suite.kv_cache import model
from suite.storage import separation
from suite.rules import rulesets

METADATA_SCHEMA = None


@dataclass
class Options:
    cache_dir: str | None
    results_dir: str | None
    option: str = "all"
    trials: int | None = None
    duration_s: float | None = None
    inter_option_delay_s: float | None = None
    division: str = "closed"
    ranks: int = 1
    hosts: list | None = None
    seed: int | None = None
    memory_limit: int | None = None
    allow_no_cache_drop: bool = False
    no_cache_drop: bool = False
    open_params: dict | None = None            # --kv-model, --kv-users, ... (open division)
    launcher: str | None = None                # --launcher: how mpiexec and the host agents reach --hosts
    io_trace: str | None = None                # --io-trace FILE: every cache operation, CSV (suite.kv_cache.trace)


def plan(opts: Options, doc: dict) -> tuple[list, bool, list]:
    """[(option, trial, Params)], miniature, [what differs from the closed run]. Refusals raise."""
    closed = doc["closed"]
    miniature = opts.cache_dir is None
    given = {k: v for k, v in (opts.open_params or {}).items() if v is not None}
    if opts.division == "closed" and given:
        raise RuleError(f"--kv-{next(iter(given)).replace('_', '-')}: expected only in the open division (closed "
                        f"runs Table KVCache-1's parameters; Rules 6.6.1), got it with --division closed")
    seed = closed["seed"] if opts.seed is None else opts.seed
    if opts.division == "closed" and seed != closed["seed"]:
        raise RuleError(f"--seed: expected {closed['seed']} in the closed division (Rules 6.3.2.1), got {seed}")
    chosen = [1, 2, 3] if opts.option == "all" else [int(opts.option)]
    trials = opts.trials or (doc["miniature"]["trials"] if miniature else closed["trials"])
    out = []
    for o in chosen:
        p = replace(model.closed_params(doc, o), seed_base=seed)
        if miniature:
            p = model.miniature(doc, p)
        if opts.duration_s is not None:
            p = replace(p, duration_s=float(opts.duration_s))
        p = replace(p, **{("users" if k == "users" else k): v for k, v in given.items()})
        model.bytes_per_token(doc, p.model)          # an unknown --kv-model refused here
        out += [(o, t, p) for t in range(trials)]
    reduced = []
    if opts.option != "all":
        reduced.append(f"option {opts.option} only (closed runs all three)")
    if trials != closed["trials"]:
        reduced.append(f"{trials} trials (closed: {closed['trials']})")
    if out and out[0][2].duration_s != closed["duration_s"]:
        reduced.append(f"duration {out[0][2].duration_s:g} s (closed: {closed['duration_s']:g} s)")
    if delay(opts, doc, miniature) != closed["inter_option_delay_s"] and len(chosen) > 1:
        reduced.append(f"inter-option delay {delay(opts, doc, miniature):g} s (closed: {closed['inter_option_delay_s']:g} s)")
    return out, miniature, reduced


def delay(opts: Options, doc: dict, miniature: bool) -> float:
    if opts.inter_option_delay_s is not None:
        return opts.inter_option_delay_s
    return doc["miniature"]["inter_option_delay_s"] if miniature else doc["closed"]["inter_option_delay_s"]


def trial_argv(opts: Options, leaf: Path, cache: Path, suite_dir: Path, o: int, t: int, p, stamp: str,
               cluster=None) -> list[str]:
    """mpiexec ... python -m suite.kv_cache.rank ... (what the metadata records as the command); across
    hosts (`cluster`, suite.harness.hosts) the ranks placed by us, reached through the launcher."""
    return mpiexec_part(opts, cluster) + rank_argv(leaf, cache, suite_dir, o, t, p, stamp)


def mpiexec_part(opts: Options, cluster=None) -> list[str]:
    if cluster is not None:
        return mpi.mpiexec_argv(opts.ranks, host_args=cluster.launcher.mpiexec_args() + ["-hosts", cluster.hosts_arg()])
    return mpi.mpiexec_argv(opts.ranks, hosts=opts.hosts)


def rank_argv(leaf: Path, cache: Path, suite_dir: Path, o: int, t: int, p, stamp: str, trace_dir=None) -> list[str]:
    traced = ["--io-trace-dir", trace_dir] if trace_dir is not None else []
    return mpi.python_module(
        "suite.kv_cache.rank", "--rank-output-base", leaf / f"option_{o}" / f"trial_{t}", "--rank-cache-base", cache,
        "--suite-dir", suite_dir / f"option_{o}_trial_{t}", "--seed-base", p.seed_base, "--option", o,
        "--model", p.model, "--num-users", p.users, "--duration", f"{p.duration_s:g}", "--gpu-mem-gb",
        f"{p.gpu_mem_gb:g}", "--cpu-mem-gb", f"{p.cpu_mem_gb:g}", "--max-concurrent-allocs", p.max_concurrent_allocs,
        "--generation-mode", p.generation_mode, "--storage-capacity-gb", f"{p.storage_capacity_gb:g}",
        "--token-bytes-divisor", p.token_bytes_divisor, "--timestamp", stamp, "--trial", t, *traced)


class KvCache:
    """The kv_cache kind on the enforced harness: prepare (refusals, the plan) and run_once (one trial)."""

    def __init__(self, opts: Options):
        self.opts = opts
        self.doc = model.load()
        self.trials, self.miniature, self.reduced = plan(opts, self.doc)
        self.stamp = leafstamp.now()          # the leaf name (the rules' clock), as the run starts
        self.cache = Path(opts.cache_dir or Path("results") / "kvcache-data" / "miniature").resolve()
        self.leaf: Path | None = None
        self.done: list[dict] = []
        self.started_s = time.time()
        self.cluster = None                      # suite.harness.hosts.Cluster across hosts

    def prepare(self) -> Series:
        from suite.storage.backend.select import backend_for

        opts = self.opts
        if opts.io_trace:
            from suite.kv_cache import trace

            trace.writable(opts.io_trace)
        if opts.no_cache_drop and opts.division != "open":
            raise RuleError(f"--no-cache-drop: expected --division open, got --division {opts.division}")
        self.separation = separation.probe(None, self.cache, Path(opts.results_dir or "results"))
        self.shared_fs = separation.refuse(self.separation, opts.division, self.miniature, "--cache-dir")
        self.cluster = connect_hosts(opts)
        if self.cluster is not None:           # probed: each host's cache drop and cgroup refusals are done
            clear = self.cluster.drop_caches
        else:
            if opts.memory_limit is not None:
                from suite.enforce.cgroup import check_limit
                check_limit(opts.memory_limit)
            clear = backend_for("local_fs", self.cache).clear_cache
            enforced.refuse_without_clear(clear, opts.division, opts.allow_no_cache_drop)
        return Series(name="kv-cache", results_dir=opts.results_dir, runs=len(self.trials),
                      clear_cache=None if opts.no_cache_drop else clear, write_run_set=self.write_leaf,
                      started=self.started, host_metrics_dir=self.trial_dir,
                      host_metrics_cluster=self.cluster)       # across hosts: every host sampled

    def trial_dir(self, k: int) -> Path:
        """Trial k's directory (option_<O>/trial_<T>/: its ranks' and its host_metrics.json)."""
        o, t, _ = self.trials[k - 1]
        where = self.leaf / f"option_{o}" / f"trial_{t}"
        where.mkdir(parents=True, exist_ok=True)
        return where

    def started(self, results_dir: Path) -> None:
        model_name = self.trials[0][2].model
        self.leaf = Path(results_dir).resolve() / "kv_cache" / model_name / "run" / self.stamp
        self.leaf.mkdir(parents=True)
        self.cache.mkdir(parents=True, exist_ok=True)
        separation.write(self.leaf, self.separation)
        o = self.opts
        enforced.say(f"suite run: kv-cache, {len(self.trials)} trial(s) of options "
                     f"{','.join(str(x) for x in dict.fromkeys(t[0] for t in self.trials))}, {o.ranks} rank(s), "
                     f"{o.division} division" + (", MINIATURE (not valid for submission)" if self.miniature else "")
                     + (f"; reduced: {'; '.join(self.reduced)}" if self.reduced else ""))
        enforced.say(f"  cache: {self.cache}\n  results: {self.leaf}")

    def run_once(self, k: int, drop) -> dict:
        o, t, p = self.trials[k - 1]
        prev = self.trials[k - 2][0] if k > 1 else o
        if o != prev and (wait := delay(self.opts, self.doc, self.miniature)) > 0:
            enforced.say(f"  inter-option delay {wait:g} s")
            time.sleep(wait)
        ranks = rank_argv(self.leaf, self.cache, self.leaf / ".suite", o, t, p, self.stamp, self.trace_dir())
        argv = mpiexec_part(self.opts, self.cluster) + ranks
        base = f"kvcache_opt{o}_trial{t}_{self.stamp}"
        enforced.say(f"[option {o} trial {t + 1}/{sum(1 for x in self.trials if x[0] == o)}] {p.model}, "
                     f"{p.users} users/rank, {p.duration_s:g} s, CPU {p.cpu_mem_gb:g} GB, GPU {p.gpu_mem_gb:g} GB, "
                     f"{p.max_concurrent_allocs} concurrent allocations")
        suite_dir = self.leaf / ".suite" / f"option_{o}_trial_{t}"
        suite_dir.mkdir(parents=True, exist_ok=True)
        out_log = open(self.leaf / f"{base}.stdout.log", "wb")

        def relay(stream, _log):
            for raw in iter(stream.readline, b""):
                out_log.write(raw)
                out_log.flush()
                sys.stdout.write(raw.decode("utf-8", "replace"))
                sys.stdout.flush()
            stream.close()

        started = time.time()
        log = str(self.leaf / f"{base}.stderr.log")
        try:
            if self.cluster is not None and self.opts.memory_limit:     # each rank joins its host's cgroup
                cgroup = self.cluster.cgroups(self.opts.memory_limit, enforced.cgroup_name(k), suite_dir / "cgroups")
                argv = mpiexec_part(self.opts, self.cluster) + cgroup.wrap(ranks)
                status, error, evidence = enforced.enforced(
                    cgroup, lambda: mpi.launch(argv, suite_dir, None, log_name=log, relay=relay),
                    lambda rc: mpi.rank_failure(suite_dir, rc), join=False)
            else:
                status, error, evidence = enforced.enforced(
                    enforced.memory_cgroup(self.opts.memory_limit, k),
                    lambda start: mpi.launch(argv, suite_dir, start, log_name=log, relay=relay),
                    lambda rc: mpi.rank_failure(suite_dir, rc))
        finally:
            out_log.close()
        if status == "complete" and (why := self.served_nothing(o, t, p)):
            status, error = "failed", why
        doc = {"option": o, "trial": t, "status": status, "error": error, "cgroup": evidence,
               "cache_drop": drop.to_dict(), "command": shlex.join(map(str, argv)), "params": p.to_dict(),
               "stdout": f"{base}.stdout.log", "stderr": f"{base}.stderr.log", "start_unix_s": started,
               "end_unix_s": time.time()}
        if self.cluster is not None:
            doc["hosts"] = self.cluster.evidence(drop, evidence)
        self.done.append(doc)
        return doc

    def served_nothing(self, o: int, t: int, p) -> str | None:
        """Why a trial whose ranks all exited 0 is still no result (no request or token over its ranks), or None."""
        from suite.errors import ResultError
        from suite.kv_cache import evidence

        found = sorted((self.leaf / f"option_{o}" / f"trial_{t}").glob("rank_*/kvcache_results_*.json"))
        why = evidence.trial_served_nothing([files.load_json(f, error=ResultError, root=self.leaf) for f in found])
        return None if why is None else (f"option {o} trial {t}: {why[0]} {why[2]} over {len(found)} rank(s) in "
                                         f"{p.duration_s:g} s (expected {why[1]}): a trial that served nothing is no result")

    def write_leaf(self, done: list) -> None:
        """summary.json (from the rank files: suite.kv_cache.figures) and the metadata, however it ended."""
        from suite.kv_cache import figures
        from suite.kv_cache import leaf as kvleaf

        from suite.kv_cache import check, evidence

        if self.leaf is None or not done:
            return
        if self.opts.io_trace:
            from suite.kv_cache import trace

            n = trace.merge(self.trace_dir(), Path(self.opts.io_trace), [(d["option"], d["trial"]) for d in done])
            enforced.say(f"  io trace: {n} cache operations in {self.opts.io_trace}")
        hosts = self.opts.hosts or [socket.gethostname()]
        trials = max(t for _o, t, _p in self.trials) + 1
        files.write_atomic(self.leaf / f"kv_cache_{self.stamp}_metadata.json",
                           files.dump_json(self.metadata(done, hosts, trials), indent=2))
        if any(self.leaf.glob("option_*")):       # after the metadata: a failed trial shows no figure
            lf = kvleaf.load(self.leaf)
            failures = evidence.trial_failures(lf)
            summary = figures.summary(lf, self.opts.ranks, len(hosts), max(1, self.opts.ranks // len(hosts)), trials,
                                      self.stamp, {f"option_{o}/trial_{t}": f"{i.field}: {str(i.value)[:80]}"
                                                   + (f" ({i.note})" if i.note else "") for o, t, i in failures})
            check.failed_options(summary["options"], failures)
            files.write_atomic(self.leaf / "summary.json", files.dump_json(summary, indent=2))

    def trace_dir(self) -> Path | None:
        """Where the ranks write their parts of --io-trace (the run's .suite dir), None without it."""
        return None if not self.opts.io_trace or self.leaf is None else self.leaf / ".suite" / "io_trace"

    def metadata(self, done: list, hosts: list, trials: int) -> dict:
        """kv_cache_<ts>_metadata.json: the keys the reference's leaf has (its parameters, args and the
        trial's own values at the top level), then ours under `suite`."""
        o, first = self.opts, self.trials[0][2]
        params = {"model": first.model, "num_users": first.users, "duration": first.duration_s,
                  "gpu_mem_gb": first.gpu_mem_gb, "cpu_mem_gb": first.cpu_mem_gb, "cache_dir": str(self.cache),
                  "generation_mode": first.generation_mode, "performance_profile": "throughput"}
        return {
            "benchmark_type": "kv_cache", "model": first.model, "run_datetime": self.stamp, "command": "run",
            "executed_command": shlex.join(redact.command(sys.argv)), "num_processes": o.ranks, "hosts": hosts,
            "result_dir": str(self.leaf), "accelerator": None, "verification": None,
            "parameters": params, "override_parameters": dict(o.open_params or {}),
            "invocation_start_time": dt.datetime.fromtimestamp(self.started_s).isoformat(),
            "kvcache_model": first.model, **{k: v for k, v in params.items() if k != "model"},
            "exec_type": "mpi", "runtime": time.time() - self.started_s,
            "command_output_files": [{"command": d["command"], "stdout": d["stdout"], "stderr": d["stderr"]}
                                     for d in done],
            "args": {"mode": o.division, "benchmark": "kvcache", "command": "run", "division": o.division,
                     "option": o.option, "trials": trials, "num_processes": o.ranks, "seed": first.seed_base,
                     "inter_option_delay": delay(o, self.doc, self.miniature), "cache_dir": str(self.cache),
                     "results_dir": str(self.leaf), "hosts": hosts, "systemname": socket.gethostname(),
                     **{k: v for k, v in params.items() if k != "cache_dir"},
                     "max_concurrent_allocs": first.max_concurrent_allocs, "npernode": max(1, o.ranks // len(hosts)),
                     "config": None, "enable_rag": False, "enable_autoscaling": False, "exec_type": "mpi",
                     "mpi_bin": "mpiexec", "num_client_hosts": len(hosts)},
            "suite": {"schema_version": 1, "ruleset": rulesets.for_kind("kv_cache").name, "division": o.division, "miniature": self.miniature, "reduced": self.reduced,
                      "workload": "kv-cache", "fs_separation": self.separation, "shared_fs": self.shared_fs,
                      "trials": done, "planned_trials": len(self.trials),
                      "host": hostfacts.host(), "versions": hostfacts.versions()},    # as every kind records them
        }


def connect_hosts(opts: Options):
    """hosts.Cluster when the ranks span hosts (--hosts other than this one, or --launcher): each host
    probed through the launcher (refused: unreachable, uneven ranks in closed, no cache drop, no
    cgroup for --memory-limit), the ranks placed in host order; else None."""
    from types import SimpleNamespace

    from suite.harness import hosts as hostmod

    names = opts.hosts or [socket.gethostname()]
    if not hostmod.is_multi(opts, names):
        return None
    cluster = hostmod.connect(SimpleNamespace(accelerators=opts.ranks, division=opts.division,
                                              memory_limit=opts.memory_limit, no_cache_drop=opts.no_cache_drop,
                                              allow_no_cache_drop=opts.allow_no_cache_drop), names, opts.launcher)
    enforced.say("hosts: " + ", ".join(f"{h.name} ({h.hostname}: ranks {h.ranks[0]}-{h.ranks[-1]})"
                                       for h in cluster.hosts) + f" through {cluster.launcher.exe}")
    return cluster


def run(opts: Options) -> int:
    """The trials, then suite check's verdict of the leaf. A trial that failed (a rank's error: ENOSPC in
    the cache dir, a rank that served nothing) fails the run: the leaf records it failed with the reason,
    the run says so and exits 1 with the check's verdict line (INVALID: kvcache-trials-complete)."""
    from dataclasses import replace as replaced

    from suite.errors import RunError
    from suite.kv_cache import check

    kind = KvCache(opts)
    failed = None
    try:
        enforced.run(kind)
    except RunError as exc:
        if kind.leaf is None or not any(kind.leaf.glob("kv_cache_*_metadata.json")):
            raise                             # nothing ran: the one-line error alone
        failed = str(exc)
    if failed:
        enforced.say(f"suite run: kv-cache FAILED: {failed}\n  the leaf records the failed trial: {kind.leaf}")
    else:
        enforced.say(f"suite run: kv-cache complete: {kind.leaf}")
    a = check.assess(kind.leaf)
    for o, f in sorted(a["derived"].items()):
        if f.get("valid") is False:
            enforced.say(f"  option {o}: FAILED, no figure ({f['failed_trials'][0][:200]})")
            continue
        enforced.say(f"  option {o}: {f['aggregated_avg_throughput_tokens_per_sec']:.1f} tokens/s, read "
                     f"{f['aggregated_read_bandwidth_gbps']:.3f} GiB/s, write {f['aggregated_write_bandwidth_gbps']:.3f} "
                     f"GiB/s, P95 {f['aggregated_p95_latency_ms'] or 0:.1f} ms")
    why = "; ".join(dict.fromkeys(f.rule_id for f in a["findings"]))
    enforced.say(f"suite check: {a['verdict'].upper()}" + (f" ({why})" if why else ""))
    said = replaced(check.voice(a), failed=failed is not None)
    enforced.say(said.line())                 # the last line: suite check's verdict line (suite.rules.verdict)
    return said.code


def check_ranks(n: int) -> None:
    if n < 1:
        raise SuiteError(f"--accelerators: expected at least 1 client rank, got {n}")
