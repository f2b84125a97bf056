"""The rank side's shared pieces: every MPI rank program of a storage kind (training's
suite.training.run.rank, checkpointing's suite.checkpointing.rank) meets its peers and fails
the same way."""

import os
import socket
import sys
import time
from pathlib import Path

from suite import files
from suite.errors import SuiteError


def barrier(comm) -> None:
    """comm.Barrier() without spinning the CPU: MPICH's blocking barrier busy-polls, which on a
    host with more ranks than cores steals the readers' CPU. Poll a non-blocking one, sleeping."""
    req = comm.Ibarrier()
    nap = 0.00002
    while not req.Test():
        time.sleep(nap)
        nap = min(nap * 2, 0.0005)


def fail(comm, run_dir: Path, rank: int, exc: Exception) -> None:
    """A rank's error: one line in errors/rank-<r>.txt and on stderr (a bug's traceback too); abort all."""
    message = str(exc) if isinstance(exc, SuiteError) else f"{type(exc).__name__}: {exc} (a bug: see mpiexec.log)"
    (run_dir / "errors").mkdir(parents=True, exist_ok=True)
    files.write_atomic(run_dir / "errors" / f"rank-{rank}.txt", f"{message}\n")
    if not isinstance(exc, SuiteError):
        import traceback
        traceback.print_exc()
    print(f"rank {rank}: error: {message}", file=sys.stderr, flush=True)
    comm.Abort(1)


def started(run_dir: Path, rank: int) -> None:
    """ranks/rank-<r>.pid: this rank's host and pid (stop() kills stragglers by it; the launcher's
    death watch learns from it which rank died first)."""
    (run_dir / "ranks").mkdir(parents=True, exist_ok=True)
    files.write_atomic(run_dir / "ranks" / f"rank-{rank}.pid", f"{socket.gethostname()} {os.getpid()}\n")


def finished(run_dir: Path, rank: int) -> None:
    """ranks/rank-<r>.done: this rank got to its end; a rank that exits without it died."""
    files.write_atomic(run_dir / "ranks" / f"rank-{rank}.done", "")
