"""The rank side of a checkpointing run: `mpiexec -n N python -m suite.storage.checkpoint.rank PLAN`.

Each rank takes its files of the layout from the plan (suite.storage.checkpoint.model computes
them once, in the launcher), then per
checkpoint: meets the others at a barrier, writes its files (each fsync'd before close) or reads
them back whole, and times that. It writes ranks/rank-<r>.json (its per-checkpoint bytes and
times); the launcher (suite.storage.checkpoint.run) turns those into the run's results. Errors
follow suite.storage.run.rank: one line in errors/rank-<r>.txt, then MPI Abort.
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


def checkpoint_dir(root: Path, index: int) -> Path:
    """The directory of checkpoint `index` (1-based), named as the reference names it."""
    return Path(root) / f"global_epoch1_step{index}"


def write_shard(path: Path, nbytes: int, chunk: memoryview, fsync: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        left = nbytes
        while left > 0:
            left -= os.write(fd, chunk[:min(left, len(chunk))])
        if fsync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read_shard(path: Path, nbytes: int, buf: memoryview) -> int:
    """Read the file whole into `buf` piece by piece; its size must be what the layout says."""
    got = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(buf)
            if not n:
                break
            got += n
    if got != nbytes:
        raise RunError(f"{path}: size: expected {nbytes} bytes (the layout's), got {got}: a checkpoint written "
                       f"with another layout, or truncated")
    return got


def worker(plan_path: str) -> int:
    from mpi4py import MPI

    from suite.storage.run.rank import _barrier, _fail

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    plan = files.load_json(Path(plan_path), schema=PLAN_SCHEMA)
    run_dir = Path(plan["run_dir"])
    host = socket.gethostname()
    (run_dir / "ranks").mkdir(parents=True, exist_ok=True)
    files.write_atomic(run_dir / "ranks" / f"rank-{rank}.pid", f"{host} {os.getpid()}\n")
    try:
        if comm.Get_size() != plan["processes"]:
            raise RunError(f"mpiexec: expected {plan['processes']} ranks, got {comm.Get_size()}")
        record = _run(comm, plan, rank, host, _barrier)
        files.write_json(run_dir / "ranks" / f"rank-{rank}.json", record, schema=RANK_SCHEMA, indent=None)
        _barrier(comm)
    except Exception as exc:  # noqa: BLE001 - one line for the CLI, a bug's traceback to mpiexec.log
        _fail(comm, run_dir, rank, exc)
        return 1
    return 0


def _run(comm, plan: dict, rank: int, host: str, barrier) -> dict:
    shards = [(str(name), int(nbytes)) for name, nbytes in plan["rank_shards"][rank]]
    if any(Path(name).name != name or name in (".", "..") for name, _ in shards):
        raise RunError(f"{plan['run_dir']}/plan.json: rank_shards: expected plain file names, got {shards[0][0]!r}")
    chunk = memoryview(bytearray(os.urandom(plan["chunk_bytes"])))
    root = Path(plan["checkpoint_dir"])
    steps = [("write", k) for k in range(1, plan["num_checkpoints_write"] + 1)]
    steps += [("read", k) for k in range(1, plan["num_checkpoints_read"] + 1)]
    out = []
    for i, (phase, k) in enumerate(steps):
        folder = checkpoint_dir(root, k)
        if phase == "write":
            folder.mkdir(parents=True, exist_ok=True)
        barrier(comm)
        t0 = time.time()
        try:
            for name, size in shards:
                if phase == "write":
                    write_shard(folder / name, size, chunk, plan["fsync"])
                else:
                    read_shard(folder / name, size, chunk)
        except OSError as exc:
            raise RunError(f"{folder}: checkpoint {phase}: {exc.strerror or exc}") from None
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
