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
CONNECT_TIMEOUT_S = 30
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
        raise SuiteError("--engine dask: expected dask.distributed installed (pip install 'suite[dask]'), "
                         "got no module 'distributed'") from None
    return distributed


class Cluster:
    """A client of an existing scheduler, or of a LocalCluster started (and closed) here."""

    def __init__(self, scheduler: str | None = None, local_workers: int = LOCAL_WORKERS):
        distributed = require()
        self._local = None
        self.partitions: dict = {}      # {split: {table: parquet row groups = generated chunks}}
        if scheduler:
            self.address = scheduler
        else:
            self._local = distributed.LocalCluster(n_workers=local_workers, threads_per_worker=1, processes=True,
                                                   dashboard_address=None, silence_logs=40)
            self.address = self._local.scheduler_address
        try:
            self.client = distributed.Client(self.address, timeout=CONNECT_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError) as exc:
            self.close()
            raise SuiteError(f"--scheduler: expected a reachable dask scheduler address, got {scheduler!r}: "
                             f"{str(exc).splitlines()[0] if str(exc) else type(exc).__name__}") from None
        if not self.client.scheduler_info(n_workers=-1)["workers"]:
            self.close()
            raise SuiteError(f"--scheduler: expected a dask scheduler with at least one worker, got none at {self.address}")

    def workers(self) -> list[dict]:
        """Each worker: address, host name (as the worker's host says it), threads, memory limit."""
        info = self.client.scheduler_info(n_workers=-1)["workers"]
        names = self.client.run(socket.gethostname)
        cpus = self.client.run(os.cpu_count)
        return [{"address": a, "hostname": names.get(a), "threads": w.get("nthreads"),
                 "memory_limit_bytes": w.get("memory_limit"), "host_cpus": cpus.get(a)}
                for a, w in sorted(info.items())]

    def record(self) -> dict:
        import dask

        return {"name": "dask", "scheduler": self.address, "local_cluster": self._local is not None,
                "dask_version": dask.__version__, "workers": self.workers()}

    def close(self) -> None:
        client, self.client = getattr(self, "client", None), None
        if client is not None:
            client.close()
        if self._local is not None:
            self._local.close()
            self._local = None


# --------------------------------------------------------------------------- generation


def generate_on(cluster: Cluster):
    """An executor for generate.generate: the chunk tasks as futures, results as they complete."""
    def execute(tasks):
        from distributed import as_completed

        from suite.tpcx_ai import generate

        futures = cluster.client.map(generate.chunk_task, tasks, pure=False)
        for f in as_completed(futures):
            yield f.result()
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
                table = f.result()
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
        try:
            with Client(self.cluster.address, timeout=CONNECT_TIMEOUT_S) as client:
                fut = client.submit(_job_on_worker, key, list(argv), str(errfile), _suite_root(),
                                    {k: os.environ.get(k) for k in JOB_ENV}, key=key, pure=False)
                rc, host = fut.result()
        except KeyboardInterrupt:
            self.stop_all()
            raise
        except (OSError, TimeoutError) as exc:
            raise RunError(f"{label}: the dask cluster at {self.cluster.address} is unreachable: {exc}") from None
        end = time.perf_counter()
        with self._lock:
            self.placements.append({"job": label, "hostname": host})
        error = None if rc == 0 else _error_line(errfile, rc, label)
        return Outcome(round(start - self.epoch, 3), round(end - self.epoch, 3), rc, error)

    def stop_all(self, grace_s: float = 5.0) -> None:
        self.stopping.set()
        client = self.cluster.client
        if client is not None:
            try:
                client.run(_interrupt_jobs, grace_s)
            except (OSError, TimeoutError):
                pass
