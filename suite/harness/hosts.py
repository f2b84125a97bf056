"""`suite run --hosts h1,h2 | --hostfile F` across hosts: reach every host through a launcher,
place the ranks, and enforce the rules on every host, with evidence per host.

The launcher is called as ssh is: `LAUNCHER -x HOST "COMMAND"` (ssh by default; on one box the
namespace hosts' tools/netns-launcher), by mpiexec (hydra's `-launcher ssh -launcher-exec`) and
here, to run suite.enforce.hostagent on each host: a probe before anything starts (an unreachable
host is refused), the cache drop before each run, and a memory cgroup per host around that host's
ranks (each rank joins it before it execs python). The file system is shared, as the single-host
runner already assumes (the plan, the steps and the results are files).
"""

import json
import os
import shlex
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from suite import files
from suite.errors import RuleError, RunError, SuiteError

AGENT = "suite.enforce.hostagent"
PROBE_TIMEOUT_S = 60.0          # an ssh connection, a python start and a cgroup detection
CALL_TIMEOUT_S = 120.0          # a sync on a busy host can take long


MAX_HOSTFILE_BYTES = 1024 * 1024        # an MPI host file: one line a host


def parse_hosts(opts) -> list[str]:
    """The client hosts of --hosts or --hostfile (opts.hosts, opts.hostfile), in order, once each;
    this machine when neither is given."""
    if opts.hosts and opts.hostfile:
        raise SuiteError("--hosts and --hostfile: expected one of them, got both")
    if opts.hostfile:
        text = files.read_text(Path(opts.hostfile), limit=MAX_HOSTFILE_BYTES)   # bounded, one line
        hosts = [ln.split("#")[0].split(":")[0].strip() for ln in text.splitlines()]
        hosts = [h for h in hosts if h]
        if not hosts:
            raise SuiteError(f"{opts.hostfile}: hosts: expected at least one host name, got none")
        return list(dict.fromkeys(hosts))
    return list(dict.fromkeys(opts.hosts or [])) or [socket.gethostname()]


def is_multi(opts, hosts: list) -> bool:
    """Across hosts: more than one, one that is not this machine, or a launcher named."""
    return bool(opts.launcher) or len(hosts) > 1 or hosts[0] != socket.gethostname()


def placement(accelerators: int, hosts: list, division: str) -> list[int]:
    """Ranks per host, in host order (ranks 0..c0-1 on the first host, ...): the same count on
    every host, as the rules require; closed refuses otherwise, open spreads the remainder."""
    h = len(hosts)
    if accelerators < h:
        raise SuiteError(f"--accelerators: expected at least one per host ({h} hosts), got {accelerators}")
    if accelerators % h and division == "closed":
        raise RuleError(f"--accelerators: expected a multiple of the {h} hosts (the same number of ranks on "
                        f"every host, closed division), got {accelerators}")
    base, extra = divmod(accelerators, h)
    return [base + (1 if i < extra else 0) for i in range(h)]


@dataclass
class Launcher:
    exe: str = "ssh"

    def argv(self, host: str, command: list) -> list[str]:
        opts = ["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"] if Path(self.exe).name == "ssh" else []
        return [self.exe, "-x", *opts, host, command_line(command)]

    def mpiexec_args(self) -> list[str]:
        return ["-launcher", "ssh", "-launcher-exec", self.exe]

    def agent(self, host: str, args: list, timeout: float = CALL_TIMEOUT_S) -> dict:
        """Run the host agent on `host`; its JSON answer, or RunError naming the host and why."""
        argv = self.argv(host, [sys.executable, "-m", AGENT, *map(str, args)])
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise RunError(f"host {host}: expected an answer through {self.exe} within {timeout:g} s, got none "
                           f"(unreachable?)") from None
        except OSError as exc:
            raise RunError(f"host {host}: launcher {self.exe}: cannot start: {exc.strerror}") from None
        out = proc.stdout.decode("utf-8", "replace").strip().splitlines()
        try:
            doc = json.loads(out[-1]) if out else None
        except ValueError:
            doc = None
        if not isinstance(doc, dict):
            err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise RunError(f"host {host}: expected the host agent's answer through {self.exe}, got exit "
                           f"{proc.returncode}" + (f": {err[-1][:300]}" if err else ""))
        return doc


def command_line(argv: list) -> str:
    """One shell line (what ssh hands the remote shell): PYTHONPATH so this `suite` is importable."""
    here = str(Path(__file__).resolve().parents[2])      # the directory holding the `suite` package
    return f"PYTHONPATH={shlex.quote(here)} " + shlex.join(str(a) for a in argv)


@dataclass
class Host:
    name: str                   # as given (--hosts / --hostfile)
    hostname: str               # what the host calls itself (DLIO's summary `hostname`)
    ranks: list                 # the MPI ranks placed on it
    mem_total_bytes: int
    cpu_count: int
    cgroup_version: str | None
    cgroup_reason: str
    drop_caches_writable: bool
    memory_bytes: int = 0       # for the dataset-size rule: the cgroup limit, else MemTotal


@dataclass
class Cluster:
    launcher: Launcher
    hosts: list                 # [Host] in rank order

    @property
    def total_memory_bytes(self) -> int:
        return sum(h.memory_bytes for h in self.hosts)

    def hosts_arg(self) -> str:
        return ",".join(f"{h.name}:{len(h.ranks)}" for h in self.hosts)

    def each(self, fn) -> list:
        """fn(host) on every host at once (ssh round trips add up over 32 hosts); results in host order."""
        with ThreadPoolExecutor(max_workers=min(32, len(self.hosts))) as pool:
            return list(pool.map(fn, self.hosts))

    def drop_caches(self) -> "HostsDrop":
        def one(h: Host) -> dict:
            try:
                return self.launcher.agent(h.name, ["drop"])
            except RunError as exc:
                return {"hostname": h.hostname, "attempted": False, "succeeded": False, "error": str(exc)}
        return HostsDrop([dict(d, host=h.name) for h, d in zip(self.hosts, self.each(one))])

    def refuse_unshared(self, folder: Path, option: str) -> None:
        """SuiteError (one line, exit 2) unless every host sees `folder` as this one does: a token file
        written here, read back on each host through the launcher, removed. (A folder that exists on each
        host but is each host's own would pass a mere existence test: the ranks' files would scatter.)"""
        import uuid

        token = uuid.uuid4().hex
        probe = Path(folder) / f".suite-shared-probe-{token}"
        try:
            files.write_atomic(probe, token + "\n")
        except (OSError, files.WriteError) as exc:
            raise SuiteError(f"{option} {folder}: expected a folder this host can write, got {exc}") from None
        try:
            def one(h: Host) -> dict:
                try:
                    return self.launcher.agent(h.name, ["visible", str(probe)])
                except RunError as exc:
                    return {"seen": None, "why": str(exc)}
            for h, doc in zip(self.hosts, self.each(one)):
                if str(doc.get("seen") or "").strip() != token:
                    got = "another file" if doc.get("seen") else doc.get("why") or doc.get("error")
                    raise SuiteError(f"{option} {folder}: expected a folder every host shares (a file written here "
                                     f"read back on each), got {got} on host {h.name}")
        finally:
            probe.unlink(missing_ok=True)

    def cgroups(self, limit_bytes: int, name: str, join_dir: Path) -> "HostCgroups":
        return HostCgroups(self, limit_bytes, name, join_dir)

    def evidence(self, drop, memory) -> list[dict]:
        """Per host: placement, memory for the rules, the drop and the cgroup (results.json)."""
        drops = {d.get("host"): d for d in getattr(drop, "per_host", [])}
        mems = {m.get("host"): m for m in (memory or {}).get("hosts", [])}
        return [{"host": h.name, "hostname": h.hostname, "ranks": h.ranks, "memory_bytes": h.memory_bytes,
                 "mem_total_bytes": h.mem_total_bytes, "cpu_count": h.cpu_count,
                 "cache_drop": drops.get(h.name, {"attempted": False, "succeeded": False,
                                                  "error": "not attempted: --no-cache-drop"}),
                 "memory_limit": mems.get(h.name)} for h in self.hosts]


def connect(opts, names: list, launcher_exe: str | None) -> Cluster:
    """Probe every host before anything starts; refuse an unreachable one, two hosts that are one,
    a host that cannot drop its cache (closed) or make the memory cgroup (--memory-limit)."""
    exe = launcher_exe or "ssh"
    if "/" in exe:        # a path: absolute, so mpiexec's proxies and every call find the same file
        if not os.access(exe, os.X_OK):
            raise SuiteError(f"--launcher {exe}: expected an executable file, got "
                             f"{'a file that is not executable' if os.path.exists(exe) else 'nothing'}")
        exe = os.path.abspath(exe)
    launcher = Launcher(exe)
    counts = placement(opts.accelerators, names, opts.division)

    def probe(name):
        try:
            return launcher.agent(name, ["probe"], timeout=PROBE_TIMEOUT_S)
        except RunError as exc:
            raise SuiteError(f"{exc} (refused before anything started)") from None

    with ThreadPoolExecutor(max_workers=min(32, len(names))) as pool:
        docs = list(pool.map(probe, names))
    hosts, first = [], 0
    for name, doc, count in zip(names, docs, counts):
        if "error" in doc or not isinstance(doc.get("mem_total_bytes"), int):
            raise SuiteError(f"host {name}: probe: expected host facts, got {doc.get('error', doc)}")
        hosts.append(Host(name=name, hostname=str(doc["hostname"]), ranks=list(range(first, first + count)),
                          mem_total_bytes=doc["mem_total_bytes"], cpu_count=int(doc.get("cpu_count") or 0),
                          cgroup_version=doc["cgroup"]["version"], cgroup_reason=doc["cgroup"]["reason"],
                          drop_caches_writable=bool(doc["drop_caches_writable"])))
        first += count
    seen = {}
    for h in hosts:
        if h.hostname in seen:
            raise SuiteError(f"--hosts: expected distinct hosts, got {seen[h.hostname]} and {h.name} both "
                             f"answering as {h.hostname}")
        seen[h.hostname] = h.name
        h.memory_bytes = opts.memory_limit or h.mem_total_bytes
    _refuse(opts, hosts)
    return Cluster(launcher, hosts)


def _refuse(opts, hosts: list) -> None:
    if opts.division == "closed" and not opts.allow_no_cache_drop and not opts.no_cache_drop:
        bad = [h.name for h in hosts if not h.drop_caches_writable]
        if bad:
            raise RuleError(f"cache drop: expected permission to drop the page cache on every host (closed "
                            f"division), got none on {', '.join(bad)} (use --allow-no-cache-drop or --division "
                            f"open; either makes the run non-compliant)")
    if opts.memory_limit:
        bad = [h for h in hosts if h.cgroup_version not in ("v1", "v2")]
        if bad:
            raise SuiteError(f"--memory-limit: expected a writable memory cgroup (v1 or v2) on every host, got "
                             f"none on {bad[0].name}: {bad[0].cgroup_reason}")
        small = [h for h in hosts if opts.memory_limit > h.mem_total_bytes]
        if small:
            raise SuiteError(f"--memory-limit: expected at most every host's MemTotal, got {opts.memory_limit} "
                             f"bytes > {small[0].mem_total_bytes} on {small[0].name}")


class HostsDrop:
    """The cache drop of every host before a run: succeeded only when every host's did."""

    def __init__(self, per_host: list):
        self.per_host = per_host
        self.succeeded = all(d.get("succeeded") is True for d in per_host)
        self.attempted = all(d.get("attempted") is True for d in per_host)
        self.duration_s = max((d.get("duration_s") or 0.0 for d in per_host), default=0.0)
        bad = [d for d in per_host if d.get("succeeded") is not True]
        self.error = "; ".join(f"host {d['host']}: {d.get('error')}" for d in bad) or None

    def to_dict(self) -> dict:
        return {"attempted": self.attempted, "succeeded": self.succeeded, "duration_s": self.duration_s,
                "error": self.error, "method": "sync; echo 3 > /proc/sys/vm/drop_caches, on every host",
                "hosts": self.per_host}


class HostCgroups:
    """A memory cgroup on every host, named <name>-<hostname>, around that host's ranks.

    Created on all hosts on entry (a failure removes those made and raises); on exit -- also
    after a failure or an interrupt -- closed on every host (leftovers killed, peak and OOM
    kills recorded, removed). join_dir/<hostname> names each host's join file for `wrap`."""

    def __init__(self, cluster: Cluster, limit_bytes: int, name: str, join_dir: Path):
        self.cluster, self.limit_bytes, self.name, self.join_dir = cluster, limit_bytes, name, Path(join_dir)
        self.created: dict = {}
        self.closed: dict = {}

    def name_on(self, h: Host) -> str:
        safe = "".join(c if c.isalnum() or c in "_.-" else "_" for c in h.hostname)
        return f"{self.name}-{safe}"[:100]

    def __enter__(self):
        self.join_dir.mkdir(parents=True, exist_ok=True)

        def make(h: Host):
            try:
                return self.cluster.launcher.agent(
                    h.name, ["cgroup-create", self.name_on(h), self.limit_bytes, str(self.join_dir)])
            except RunError as exc:
                return {"error": str(exc)}
        failed = []
        for h, doc in zip(self.cluster.hosts, self.cluster.each(make)):
            if "error" in doc:
                failed.append((h, doc["error"]))
            else:
                self.created[h.name] = doc
        if failed:
            self.close()
            from suite.enforce.detect import CgroupError
            h, why = failed[0]
            raise CgroupError(f"host {h.name}: memory cgroup {self.name_on(h)}: {why}")
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def close(self) -> None:
        todo = [h for h in self.cluster.hosts if h.name in self.created and h.name not in self.closed]

        def shut(h: Host):
            try:
                return self.cluster.launcher.agent(h.name, ["cgroup-close", self.name_on(h)])
            except RunError as exc:
                return {"removed": False, "cleanup_error": str(exc)}
        with ThreadPoolExecutor(max_workers=max(1, min(32, len(todo)))) as pool:
            for h, doc in zip(todo, pool.map(shut, todo)):
                self.closed[h.name] = doc

    def wrap(self, argv: list) -> list:
        """A rank's argv that first joins its host's cgroup, then execs argv."""
        return [sys.executable, "-m", AGENT, "join", str(self.join_dir), *argv]

    def evidence(self) -> dict:
        """Per host (hosts), and the combined figures the single-host rules read: the smallest
        limit applied, the highest peak, all OOM kills, removed only when removed everywhere."""
        per = []
        for h in self.cluster.hosts:
            made, shut = self.created.get(h.name, {}), self.closed.get(h.name, {})
            per.append({"host": h.name, "hostname": h.hostname, "path": made.get("path"),
                        "version": made.get("version"), "requested_bytes": self.limit_bytes,
                        "applied_bytes": made.get("applied_bytes"), "swap_limit_bytes": made.get("swap_limit_bytes"),
                        "create_s": made.get("create_s"), "peak_bytes": shut.get("peak_bytes"),
                        "oom_kills": shut.get("oom_kills"), "killed_pids": shut.get("killed_pids", []),
                        "removed": shut.get("removed") is True, "remove_s": shut.get("remove_s"),
                        "cleanup_error": shut.get("cleanup_error")})
        applied = [p["applied_bytes"] for p in per if p["applied_bytes"] is not None]
        peaks = [p["peak_bytes"] for p in per if p["peak_bytes"] is not None]
        errors = [f"host {p['host']}: {p['cleanup_error']}" for p in per if p["cleanup_error"]]
        return {"version": per[0]["version"], "path": per[0]["path"], "requested_bytes": self.limit_bytes,
                "applied_bytes": min(applied) if len(applied) == len(per) else None,
                "swap_limit_bytes": per[0]["swap_limit_bytes"],
                "peak_bytes": max(peaks) if peaks else None,
                "oom_kills": sum(p["oom_kills"] or 0 for p in per),
                "removed": all(p["removed"] for p in per), "create_s": per[0]["create_s"],
                "remove_s": per[0]["remove_s"], "killed_pids": [x for p in per for x in p["killed_pids"]],
                "cleanup_error": "; ".join(errors) or None, "hosts": per}


def check_ranks_hosts(run_dir: Path, cluster: Cluster) -> str | None:
    """Where the ranks really ran (ranks/rank-<r>.pid says host and pid) against the placement."""
    want = {r: h.hostname for h in cluster.hosts for r in h.ranks}
    for r, host in sorted(want.items()):
        p = run_dir / "ranks" / f"rank-{r}.pid"
        try:
            got = p.read_text().split()[0]
        except (OSError, IndexError):
            continue
        if got != host:
            return f"rank {r}: expected to run on {host}, ran on {got}"
    return None
