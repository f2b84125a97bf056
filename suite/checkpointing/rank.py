"""The rank side of a checkpointing run: `mpiexec -n N python -m suite.checkpointing.rank PLAN`.

Each rank takes its files of the layout from the plan (suite.checkpointing.model computes
them once, in the launcher), then per checkpoint: meets the others at a barrier, writes its files
(each fsync'd before close) or reads them back whole, through the storage backend
(suite.storage.backend), and times that. It writes ranks/rank-<r>.json (its per-checkpoint bytes and
times); the launcher (suite.checkpointing.run) turns those into the run's results. Errors
follow suite.training.run.rank: one line in errors/rank-<r>.txt, then MPI Abort.
"""

import os
import socket
import sys
import time
from pathlib import Path

from suite import files
from suite.errors import RunError

PLAN_SCHEMA = "checkpoint-plan"
RANK_SCHEMA = "checkpoint-rank"


def checkpoint_name(index: int) -> str:
    """The prefix of checkpoint `index` (1-based) under the checkpoint root, named as the reference names it."""
    return f"global_epoch1_step{index}"


def checkpoint_dir(root: Path, index: int) -> Path:
    """The directory of checkpoint `index` (1-based)."""
    return Path(root) / checkpoint_name(index)


def write_shard(backend, name: str, nbytes: int, chunk: memoryview, fsync: bool) -> None:
    """Write `name` in place (as the reference writes a shard), fsync'd before close when asked."""
    with backend.create(name, fsync=fsync, atomic=False) as writer:
        writev, left = writer.writev, nbytes
        while left > 0:
            left -= writev([chunk[:min(left, len(chunk))]])
        writer.commit()


def read_shard(backend, name: str, nbytes: int, buf: memoryview) -> int:
    """Read the file whole into `buf` piece by piece; its size must be what the layout says."""
    got = 0
    with backend.open_read(name, sequential=False) as handle:      # a plain open, as the reference reads
        read, key, bufs = handle.readinto_at, handle.key, [buf]
        while True:
            n = read(key, bufs, got)
            if not n:
                break
            got += n
    if got != nbytes:
        raise RunError(f"{backend.locate(name)}: size: expected {nbytes} bytes (the layout's), got {got}: a "
                       f"checkpoint written with another layout, or truncated")
    return got


def io_buffer(chunk_bytes: int, sizes: list[int], write: bool) -> memoryview:
    """The one buffer a rank writes from or reads into: chunk_bytes (one write(2) / read(2) each), or
    this rank's largest file where that is smaller (a miniature's files are ~1 MiB: the same calls, and
    not 16 MiB of random bytes made per rank). Random bytes to write (nothing compresses or dedups
    them, as the reference's); zeros to read into."""
    n = max(1, min(chunk_bytes, max(sizes, default=1)))
    return memoryview(bytearray(os.urandom(n)) if write else bytearray(n))


def worker(plan_path: str) -> int:
    from mpi4py import MPI

    from suite.harness.ranks import barrier, fail, finished, started

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    plan = files.load_json(Path(plan_path), schema=PLAN_SCHEMA)
    run_dir = Path(plan["run_dir"])
    host = socket.gethostname()
    started(run_dir, rank)
    try:
        if comm.Get_size() != plan["processes"]:
            raise RunError(f"mpiexec: expected {plan['processes']} ranks, got {comm.Get_size()}")
        record = _run(comm, plan, rank, host, barrier)
        files.write_json(run_dir / "ranks" / f"rank-{rank}.json", record, schema=RANK_SCHEMA, indent=None)
        if str(plan["checkpoint_dir"]).startswith("s3://"):       # object storage: this rank's requests
            from suite.storage.objectstore import write_rank
            write_rank(run_dir, rank)
        barrier(comm)
        finished(run_dir, rank)
    except Exception as exc:  # noqa: BLE001 - one line for the CLI, a bug's traceback to mpiexec.log
        fail(comm, run_dir, rank, exc)
        return 1
    return 0


def _run(comm, plan: dict, rank: int, host: str, barrier) -> dict:
    shards = [(str(name), int(nbytes)) for name, nbytes in plan["rank_shards"][rank]]
    if any(Path(name).name != name or name in (".", "..") for name, _ in shards):
        raise RunError(f"{plan['run_dir']}/plan.json: rank_shards: expected plain file names, got {shards[0][0]!r}")
    from suite.storage.backend.select import backend_for

    chunk = io_buffer(plan["chunk_bytes"], [size for _, size in shards], plan["num_checkpoints_write"] > 0)
    backend = backend_for(plan.get("storage_type"), plan["checkpoint_dir"])
    steps = [("write", k) for k in range(1, plan["num_checkpoints_write"] + 1)]
    steps += [("read", k) for k in range(1, plan["num_checkpoints_read"] + 1)]
    out = []
    for i, (phase, k) in enumerate(steps):
        folder = checkpoint_name(k)
        try:
            if phase == "write":
                backend.make_prefix(folder)
        except OSError as exc:
            raise RunError(f"{backend.locate(folder)}: checkpoint {phase}: {exc.strerror or exc}") from None
        barrier(comm)
        t0 = time.time()
        try:
            for name, size in shards:
                if phase == "write":
                    write_shard(backend, f"{folder}/{name}", size, chunk, plan["fsync"])
                else:
                    read_shard(backend, f"{folder}/{name}", size, chunk)
        except OSError as exc:
            where = backend.locate(folder)
            raise RunError(f"{where}: checkpoint {phase}: {exc.strerror or exc}") from None
        t1 = time.time()
        nbytes = sum(size for _, size in shards)
        out.append({"phase": phase, "index": k, "bytes": nbytes, "files": len(shards),
                    "start_unix_s": t0, "end_unix_s": t1, "duration_s": t1 - t0})
        if rank == 0:
            print(f"rank 0: {phase} checkpoint {k}: {nbytes} bytes in {len(shards)} file(s), {t1 - t0:.3f} s", flush=True)
        between = plan["time_between_checkpoints_s"]
        if phase == "write" and between and i + 1 < len(steps) and steps[i + 1][0] == "write":
            time.sleep(between)      # the simulated training between two checkpoints
    return {"schema_version": 1, "rank": rank, "hostname": host, "pid": os.getpid(), "checkpoints": out}


if __name__ == "__main__":
    sys.exit(worker(sys.argv[1]))
