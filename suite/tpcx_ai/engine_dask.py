"""The Dask engine (`suite run --workload tpcx-ai --engine dask [--scheduler ADDRESS]`).

The same pipeline as the local engine, its work placed on a dask.distributed cluster:
- generation: every chunk task (generate.chunk_task) is a future; the chunks' bytes depend only on
  (group, sf, split, seed, chunk), so any placement gives the local engine's files;
- load: each (table, chunk) CSV is read and schema-checked on a worker (a future); the client writes
  one parquet file per table with ONE ROW GROUP PER CHUNK in chunk order (an order's line items and
  returns come from the same chunk, so the row groups of the joined tables line up partition by
  partition); the jobs read the file as the local engine's;
- each timed job (a use case's train / serve / score stage) opens its own client session, is one
  future, and runs `python -m suite.tpcx_ai.job` on the worker that took it (the stage fits on one
  worker; UC08 and UC10 are NOT yet on xgboost.dask / dask-ml: docs/tpcx-ai.md says so);
- the result records the engine, the scheduler, each worker's host, threads and memory, the host
  each job ran on and each loaded table's partitions (row groups).
Without --scheduler a LocalCluster of two single-threaded worker processes is started and closed.
The workers must see the data and results directories at the same paths (a shared file system).
"""

import os
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

from suite import files
from suite.errors import RunError, SuiteError
from suite.tpcx_ai.launch import Outcome, _error_line, _suite_root

ENGINES = ("local", "dask")
LOCAL_WORKERS = 2
CONNECT_TIMEOUT_S = 30     # bounds the connection and the scheduler's handshake (suite.tpcx_ai.engine_dask.probe)
CALL_TIMEOUT_S = 30        # bounds every other call that waits on the scheduler (Cluster.call): one that greets and stalls
WORKERLESS_S = 10.0        # a cluster with no worker for this long has lost the run's work: the run fails
POLL_S = 0.5               # how often a wait on the cluster looks at its workers
MAX_HANDSHAKE_BYTES = 1 << 20      # a dask handshake is a few dozen bytes; more is not a dask scheduler
# what a dask nanny sets in its worker's environment (distributed.nanny.pre-spawn-environ: one BLAS /
# OpenMP thread); a job gets the CLIENT's values instead, as on the local engine, or its floating-point
# sums (and so UC08's model) differ: measured, UC08 accuracy 0.7910 vs 0.7907 at SF 0.1 before this
JOB_ENV = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MALLOC_TRIM_THRESHOLD_")
_JOBS: dict = {}          # on a worker: {job key: Popen} of the running jobs (stop_all interrupts them)
_JOBS_LOCK = threading.Lock()


def require():
    try:
        import distributed
    except ImportError:
        raise SuiteError("--engine dask: expected dask.distributed installed (pip install '.[dask]' in the checkout, "
                         "README's set-up), "
                         "got no module 'distributed'") from None
    return distributed


def _refused(given, why: str) -> SuiteError:
    return SuiteError(f"--scheduler: expected a reachable dask scheduler address (tcp://HOST:PORT or HOST:PORT), "
                      f"got {given!r}: {why}")


def scheduler_address(given: str) -> tuple[str, str, int]:
    """`tcp://HOST:PORT` or `HOST:PORT` as (tcp://HOST:PORT, HOST, PORT); any other protocol (ucx://, tls://,
    inproc://, http://: what this engine does not speak) or form is refused in one line."""
    scheme, sep, rest = str(given).strip().partition("://")
    if not sep:
        scheme, rest = "tcp", scheme
    if scheme.lower() != "tcp":
        raise _refused(given, f"the {scheme}:// protocol is not supported (only tcp)")
    host, colon, port = rest.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not colon or not host or "/" in host or not port.isdigit() or not 0 < int(port) < 65536:
        raise _refused(given, "not HOST:PORT")
    return f"tcp://{rest}", host, int(port)


def probe(given: str, host: str, port: int, timeout_s: float) -> None:
    """A dask scheduler greets a new connection with its handshake (8 bytes of total length, 8 of frame
    count, then msgpack): a server that sends nothing within `timeout_s`, closes, or sends something else
    is not one, said in one line (distributed would wait on it without end, or read its first bytes as a
    length and allocate exabytes)."""
    deadline = time.monotonic() + timeout_s
    head = b""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as sock:
            while len(head) < 16:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                got = sock.recv(16 - len(head))
                if not got:
                    break
                head += got
    except (TimeoutError, socket.timeout):
        raise _refused(given, f"no dask handshake within {timeout_s:g} s (not a dask scheduler?)") from None
    except OSError as exc:
        raise _refused(given, exc.strerror or type(exc).__name__) from None
    if len(head) < 16:
        raise _refused(given, f"the server closed the connection after {len(head)} byte(s) (not a dask scheduler)")
    total, frames = struct.unpack("<QQ", head)
    if not (0 < frames <= 16 and 16 < total <= MAX_HANDSHAKE_BYTES):
        raise _refused(given, f"not a dask scheduler (it began with {head[:16]!r})")


class Stalled(RunError):
    """The scheduler did not answer a call within CALL_TIMEOUT_S (it accepted the connection, then stalled)."""


class Cluster:
    """A client of an existing scheduler, or of a LocalCluster started (and closed) here. Every call that
    waits on the scheduler goes through `call` (a watchdog: CALL_TIMEOUT_S), or has its own bound
    (futures: POLL_S, the connection: CONNECT_TIMEOUT_S)."""

    def __init__(self, scheduler: str | None = None, local_workers: int = LOCAL_WORKERS):
        distributed = require()
        self._local = None
        self.stalled: Stalled | None = None      # once the scheduler stalled, no call waits on it again
        self.partitions: dict = {}      # {split: {table: parquet row groups = generated chunks}}
        if scheduler:
            self.address, host, port = scheduler_address(scheduler)
            probe(scheduler, host, port, CONNECT_TIMEOUT_S)
        else:
            self._local = distributed.LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                                   dashboard_address=None, silence_logs=40)
            self.address = self._local.scheduler_address
        try:
            self.client = distributed.Client(self.address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            self.close()
            said = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if isinstance(exc, TimeoutError) and not str(exc):
                said = f"no answer to the client's registration within {CONNECT_TIMEOUT_S:g} s (it greeted, then stalled)"
            raise SuiteError(f"--scheduler: expected a reachable dask scheduler address, got {scheduler!r}: "
                             f"{said}") from None
        try:
            workers = self.call("the list of workers", self.client.scheduler_info, n_workers=-1)["workers"]
        except Stalled as exc:          # before the run: the scheduler given is not one that works (exit 2)
            self.close()
            raise SuiteError(f"--scheduler: expected a dask scheduler that answers, got {scheduler!r}: {exc}") from None
        if not workers:
            self.close()
            raise SuiteError(f"--scheduler: expected a dask scheduler with at least one worker, got none at {self.address}")

    def call(self, what: str, fn, /, *args, bound_s: float | None = None, fatal: bool = True, **kwargs):
        """`fn(*args, **kwargs)` (a call that waits on the scheduler), watched: no answer within
        `bound_s` (None: CALL_TIMEOUT_S) raises Stalled (one line naming the scheduler and what it waited for), and, where
        `fatal`, no call waits on that scheduler again (a call that may wait on a WORKER, whose host
        may be gone, is not fatal: the scheduler is not at fault). The call goes on in a daemon
        thread that is left behind."""
        if self.stalled is not None:
            raise self.stalled
        box: dict = {}

        def go():
            try:
                box["value"] = fn(*args, **kwargs)
            except BaseException as exc:      # handed to the caller as it is
                box["error"] = exc

        t = threading.Thread(target=go, name=f"dask-call: {what}", daemon=True)
        t.start()
        bound_s = CALL_TIMEOUT_S if bound_s is None else bound_s
        t.join(bound_s)
        if t.is_alive():
            stalled = Stalled(f"the dask scheduler at {self.address} did not answer within {bound_s:g} s "
                              f"(waiting for {what}): it accepted the connection and stalled; the run stops")
            if fatal:
                self.stalled = stalled
            raise stalled
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def result(self, fut, what: str):
        """`fut.result()`, bounded: a cluster left with no worker for WORKERLESS_S (the worker killed, its
        host gone: the future waits for a worker without end) ends the wait with a RunError (one line),
        and so does a task distributed gave up on (KilledWorker, cancelled)."""
        lost_since = None
        while True:
            try:
                return fut.result(timeout=POLL_S)
            except TimeoutError:
                pass
            except SuiteError:
                raise
            except Exception as exc:      # distributed.KilledWorker, CancelledError, FutureCancelledError
                if type(exc).__module__.split(".")[0] not in ("distributed", "concurrent", "asyncio"):
                    raise
                raise RunError(f"{what}: the dask cluster at {self.address} lost the task: "
                               f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
            lost_since = self._watch(lost_since, what)

    def completed(self, futures, what: str):
        """The futures' results as they complete, bounded as `result` is."""
        from distributed import wait

        pending, lost_since = set(futures), None
        while pending:
            try:
                done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                done = set()
            for f in done:
                yield self.result(f, what)
            lost_since = None if done else self._watch(lost_since, what)

    def _watch(self, lost_since, what: str):
        """When the cluster first had no worker (None while it has one); past WORKERLESS_S a RunError."""
        if self.n_workers() > 0:
            return None
        if lost_since is None:
            return time.monotonic()
        if time.monotonic() - lost_since > WORKERLESS_S:
            raise RunError(f"{what}: the dask cluster at {self.address} has had no worker for "
                           f"{WORKERLESS_S:g} s (a worker killed or its host gone): the run stops")
        return lost_since

    def n_workers(self) -> int:
        """The workers the scheduler has now (0 when it is gone; Stalled when it does not answer)."""
        try:
            return len(self.call("the list of workers", self.client.scheduler_info, n_workers=-1)["workers"])
        except Stalled:
            raise
        except Exception:          # the scheduler gone too (CommClosedError, a closed client): no worker to wait on
            return 0

    def workers(self) -> list[dict]:
        """Each worker: address, host name (as the worker's host says it), threads, memory limit."""
        info = self.call("the list of workers", self.client.scheduler_info, n_workers=-1)["workers"]
        names = self.call("the workers' host names", self.client.run, socket.gethostname)
        cpus = self.call("the workers' CPU counts", self.client.run, os.cpu_count)
        return [{"address": a, "hostname": names.get(a), "threads": w.get("nthreads"),
                 "memory_limit_bytes": w.get("memory_limit"), "host_cpus": cpus.get(a)}
                for a, w in sorted(info.items())]

    def record(self) -> dict:
        import dask

        return {"name": "dask", "scheduler": self.address, "local_cluster": self._local is not None,
                "dask_version": dask.__version__, "workers": self.workers()}

    def close_client(self, client) -> None:
        """`client.close()`, bounded; a stalled scheduler's client is left to the process's exit."""
        if self.stalled is not None:
            return
        try:
            self.call("the client's close", client.close, timeout=max(CALL_TIMEOUT_S / 2, 1))
        except (Stalled, OSError, TimeoutError):
            pass

    def close(self) -> None:
        client, self.client = getattr(self, "client", None), None
        if client is not None:
            self.close_client(client)
        if self._local is not None:
            self._local.close()
            self._local = None


# --------------------------------------------------------------------------- generation


def generate_on(cluster: Cluster):
    """An executor for generate.generate: the chunk tasks as futures, results as they complete."""
    def execute(tasks):
        from suite.tpcx_ai import generate

        futures = cluster.client.map(generate.chunk_task, tasks, pure=False)
        yield from cluster.completed(futures, "generation")
    return execute


# --------------------------------------------------------------------------- load


def _read_chunk(path: str, schema):
    from suite.tpcx_ai import load

    return load.read_part(Path(path), schema)


def load_split(cluster: Cluster, data_dir: Path, split: str, schemas: dict):
    """load.load_split on the cluster: chunks read on the workers, one row group per chunk."""
    import pyarrow.parquet as pq

    from suite.tpcx_ai import generate

    from suite.tpcx_ai import load

    manifest = generate.read_manifest(data_dir)
    chunks = manifest["chunks"].get(split, {})
    stats = load.LoadStats(split)
    start = time.perf_counter()
    for name, schema in sorted(schemas.items()):
        schema = generate.raw_schema(schema, split)
        order = chunks.get(name, {}).get("chunks", [])
        paths = [generate.raw_table_dir(data_dir, split, name) / generate.part_name(c) for c in order]
        for p in paths:
            if not p.is_file():
                raise load.DataError(f"{p}: data: expected a generated chunk file, got no such file")
        futures = cluster.client.map(_read_chunk, [str(p) for p in paths], [schema] * len(paths), pure=False)
        cluster.partitions.setdefault(split, {})[name] = max(len(order), 1)
        path = load.parquet_path(data_dir, split, name)
        with files.into_place(path) as tmp, pq.ParquetWriter(tmp, schema) as writer:
            if not futures:
                writer.write_table(schema.empty_table())
            for f in futures:                      # chunk order: row group i is chunk order[i]
                table = cluster.result(f, f"load {split} {name}")
                writer.write_table(table, row_group_size=max(table.num_rows, 1))
                stats.rows += table.num_rows
        stats.raw_bytes += sum(p.stat().st_size for p in paths)
        stats.parquet_bytes += path.stat().st_size
    if (Path(data_dir) / split).is_dir():
        load._fsync_dir(Path(data_dir) / split)
    stats.duration_s = time.perf_counter() - start
    return stats


# --------------------------------------------------------------------------- jobs


def _job_on_worker(key: str, argv: list, errfile: str, root: str, client_env: dict) -> tuple[int, str]:
    """On a worker: one job process on this worker's host, with the client's JOB_ENV; (exit status, host)."""
    env = {k: v for k, v in os.environ.items() if k not in JOB_ENV}
    env.update({k: v for k, v in client_env.items() if v is not None})
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    Path(errfile).parent.mkdir(parents=True, exist_ok=True)
    with open(errfile, "wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "suite.tpcx_ai.job", *argv], stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=err, env=env)
    with _JOBS_LOCK:
        _JOBS[key] = proc
    try:
        return proc.wait(), socket.gethostname()
    finally:
        with _JOBS_LOCK:
            _JOBS.pop(key, None)


def _interrupt_jobs(grace_s: float = 5.0) -> int:
    """On a worker: SIGINT every running job (they remove their temporary files), then SIGKILL."""
    import signal

    with _JOBS_LOCK:
        procs = list(_JOBS.values())
    for p in procs:
        p.send_signal(signal.SIGINT)
    deadline = time.monotonic() + grace_s
    for p in procs:
        while p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if p.poll() is None:
            p.kill()
    return len(procs)


class DaskLauncher:
    """launch.Launcher's interface (now, run, stop_all, stopping) with each job a future on the cluster."""

    kind = "dask"

    def __init__(self, cluster: Cluster, epoch: float | None = None):
        self.cluster = cluster
        self.epoch = time.perf_counter() if epoch is None else epoch
        self.stopping = threading.Event()
        self.placements: list = []            # [{label, hostname}] where each job ran
        self.lost: RunError | None = None     # the cluster lost the run's work (no worker, unreachable)
        self._count = 0
        self._lock = threading.Lock()

    def now(self) -> float:
        return time.perf_counter() - self.epoch

    def run(self, argv, errfile: Path, label: str) -> Outcome:
        """One job: its own client session, one future, its start and end on the run's clock."""
        from distributed import Client

        with self._lock:
            self._count += 1
            key = f"tpcxai-job-{self._count}-{label.replace(' ', '-')}"
        start = time.perf_counter()
        if self.lost is not None:                 # the cluster lost its workers: no job waits on it again
            return Outcome(round(start - self.epoch, 3), round(start - self.epoch, 3), 1, str(self.lost))
        client = None
        try:
            if self.cluster.stalled is not None:
                raise self.cluster.stalled
            client = Client(self.cluster.address, timeout=CONNECT_TIMEOUT_S)     # bounded by its timeout
            fut = client.submit(_job_on_worker, key, list(argv), str(errfile), _suite_root(),
                                {k: os.environ.get(k) for k in JOB_ENV}, key=key, pure=False)
            rc, host = self.cluster.result(fut, label)
        except KeyboardInterrupt:
            self.stop_all()
            raise
        except (OSError, TimeoutError) as exc:
            self.lost = RunError(f"{label}: the dask cluster at {self.cluster.address} is unreachable: "
                                 f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")
        except RunError as exc:                   # the driver's phase raises it (a stream thread cannot)
            self.lost = exc
        finally:
            if client is not None:
                self.cluster.close_client(client)
        end = time.perf_counter()
        if self.lost is not None:
            return Outcome(round(start - self.epoch, 3), round(end - self.epoch, 3), 1, str(self.lost))
        with self._lock:
            self.placements.append({"job": label, "hostname": host})
        error = None if rc == 0 else _error_line(errfile, rc, label)
        return Outcome(round(start - self.epoch, 3), round(end - self.epoch, 3), rc, error)

    def stop_all(self, grace_s: float = 5.0) -> None:
        self.stopping.set()
        client = self.cluster.client
        if client is not None:
            try:
                self.cluster.call("the jobs' interruption", client.run, _interrupt_jobs, grace_s)
            except (OSError, TimeoutError, RunError):
                pass
