"""Every host of a TPCx-AI run on a dask cluster sampled (host_metrics.json, suite.harness.hostmetrics).

The launcher (this process's host) is sampled here, by a Sampler thread. Every other host of the
cluster is sampled by ONE of its workers: a Sampler thread started in that worker's process by
`client.run` at the run's start, its series collected by `client.run` at the end. A host is told
apart by what it is, not by its name: (host name, the kernel's boot id, the network namespace), so
two workers on one machine give one series, the launcher's machine is not sampled twice (a
LocalCluster's workers run here), and the namespace test hosts, which share a kernel, are each
their own host. Each worker sampler is keyed by a token of its run: runs sharing a cluster do not
stop each other's.

Every wait is bounded (engine_dask.Cluster.call). A worker whose sampler could not start, that was
lost during the run, or that gave no valid series leaves its host in the file with no samples and a
warning, never a failed run. A sampler whose run never collected it (the launcher killed) keeps at
most its point bound (it thins itself) until its worker ends.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import uuid
from pathlib import Path

from suite.harness import hostmetrics, hostsampling

BOUND_S = 20.0                # a client.run of the samplers: one round trip to each worker and a line of JSON back
_SAMPLERS: dict = {}          # on a worker: {run token: the Sampler it runs for its host}
_LOCK = threading.Lock()


def host_identity() -> tuple[str, str, int]:
    """(host name, boot id, network namespace inode): one value per host, whoever asks on it."""
    boot = ""
    with contextlib.suppress(OSError):
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    netns = 0
    with contextlib.suppress(OSError):
        netns = os.stat("/proc/self/ns/net").st_ino
    return socket.gethostname(), boot, netns


def start_sampler(token: str, interval_s: float, max_points: int) -> bool:
    """On a worker: start sampling its host for the run `token` (a second start of one token: no-op)."""
    with _LOCK:
        if token not in _SAMPLERS:
            _SAMPLERS[token] = hostmetrics.Sampler(interval_s, max_points=max_points).__enter__()
    return True


def stop_sampler(token: str) -> dict | None:
    """On a worker: the run's series of its host (the sampler ended); None where none ran for it."""
    with _LOCK:
        sampler = _SAMPLERS.pop(token, None)
    if sampler is None:
        return None
    sampler.__exit__(None, None, None)
    return sampler.host_doc()


def _nothing() -> None:
    """On a worker: nothing (client.run of it answers for the workers the scheduler has now)."""


def scope(hosts: int) -> str:
    if hosts == 1:
        return "this host: the launcher, and every worker of the dask cluster runs on it"
    return (f"every host of the run ({hosts}): the launcher here, each other host of the dask cluster by one of "
            f"its workers")


class DaskHosts(hostsampling.Gathered):
    """The sampling of hostsampling.sampling (`with` it; write() after) for a run on `cluster`
    (engine_dask.Cluster): one series per host, the launcher's first."""

    def __init__(self, cluster, interval_s: float):
        self.cluster, self.interval_s = cluster, interval_s
        self.token = uuid.uuid4().hex
        self.here = host_identity()            # the launcher's host: sampled here, by no worker
        self.local: hostmetrics.Sampler | None = None
        self.picked: dict[str, str] = {}       # worker address -> the name its host's series takes
        self.docs: list[dict] = []
        self.warnings: list[str] = []

    def _run(self, what: str, fn, *args, workers=None) -> dict:
        """`client.run(fn, *args)` on `workers`, bounded by BOUND_S (a worker's host may be gone: not the
        scheduler's fault, so not fatal to the cluster): {address: value or the exception}; {} and a
        warning where the cluster gave nothing."""
        client = self.cluster.client
        try:
            return self.cluster.call(what, client.run, fn, *args, workers=workers, on_error="return",
                                     bound_s=BOUND_S, fatal=False) or {}
        except Exception as exc:     # the scheduler stalled or gone, the client closed: the run goes on unsampled there
            self.warn(f"{what}: the dask cluster at {self.cluster.address} gave none: "
                       f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}")
            return {}

    def _pick(self) -> None:
        """One worker per host other than this one; each host named by its host name (its worker's
        address beside it where that name is taken)."""
        seen, names = {self.here}, {self.here[0]}
        for address, ident in sorted(self._run("the workers' hosts", host_identity).items()):
            if isinstance(ident, BaseException) or not isinstance(ident, (tuple, list)) or len(ident) != 3:
                self.warn(f"worker {address}: its host not told: {str(ident)[:300]}")
                continue
            ident = (str(ident[0]), str(ident[1]), ident[2])
            if ident in seen:
                continue
            seen.add(ident)
            name = ident[0] if ident[0] not in names else f"{ident[0]} ({address})"
            names.add(name)
            self.picked[address] = name

    def __enter__(self):
        self._pick()
        keep = hostmetrics.points_per_host(1 + len(self.picked))     # the hosts' series together stay loadable
        self.local = hostmetrics.Sampler(self.interval_s, max_points=keep).__enter__()
        if self.picked:
            started = self._run("the workers' samplers", start_sampler, self.token, self.interval_s, keep,
                                workers=list(self.picked))
            for address in self.picked:
                if started.get(address) is not True and started:
                    self.warn(f"host {self.picked[address]}: its sampler on worker {address} did not start: "
                               f"{str(started.get(address, 'no answer'))[:300]}")
        return self

    def __exit__(self, *exc) -> None:
        self.local.__exit__(*exc)
        self.docs = [dict(self.local.host_doc(), host=self.here[0])]
        present = set(self._run("the workers' addresses", _nothing)) if self.picked else set()
        asked = [a for a in self.picked if a in present]      # a worker lost: asking it would wait on its host
        got = self._run("the workers' series", stop_sampler, self.token, workers=asked) if asked else {}
        for address, name in self.picked.items():
            doc = got.get(address) if address in present else "its worker was lost during the run"
            why = (hostmetrics.series_problem(doc, f"worker {address}'s sampler") if isinstance(doc, dict)
                   else "no series" if doc is None else str(doc)[:300])
            self.add(name, doc if why is None else None,
                     None if why is None else f"host {name}: not sampled by worker {address}: {why}", self.interval_s)

    def scope_text(self) -> str:
        return scope(len(self.docs))
