"""The rank side of `suite run`: `mpiexec -n N python -m suite.training.run.rank PLAN`.

The only importer of mpi4py. Each rank reads its shard of the epoch's file order through
suite.training.run.loader, simulates compute through suite.training.run.accelerator, meets the
other ranks at a barrier each step and writes steps/rank-<r>.json (suite.training.run.records).
The launcher (suite.training.run.launch) turns those into the run's results.
"""

import os
import random
import socket
import sys
import time
from pathlib import Path

from suite import files
from suite.errors import RunError
from suite.harness.ranks import barrier, fail, finished, started
from suite.training.run.records import PLAN_MAX_BYTES, RankEpoch, RankSteps, RunPlan


def _epoch_order(plan: RunPlan, epoch: int) -> list[int]:
    order = list(range(len(plan.files)))
    if plan.file_shuffle:
        random.Random(plan.seed * 100003 + epoch).shuffle(order)
    return order


def rank_shard(plan: RunPlan, epoch: int, rank: int, size: int):
    """This rank's files for `epoch`: the contiguous slice [rank x S, (rank+1) x S) of the
    epoch's (shuffled) sample stream, S = steps x batch; returns [FileSpec], samples."""
    from suite.training.run.loader import FileSpec

    need = plan.steps_per_epoch * plan.batch_size
    lo, hi = rank * need, (rank + 1) * need
    spf = plan.samples_per_file
    out = []
    for pos, idx in enumerate(_epoch_order(plan, epoch)):
        f_lo, f_hi = pos * spf, (pos + 1) * spf
        if f_hi <= lo:
            continue
        if f_lo >= hi:
            break
        path, size_bytes = plan.files[idx]
        out.append(FileSpec(path, int(size_bytes), spf, take=min(f_hi, hi) - max(f_lo, lo)))
    return out, need


def write_checkpoint(plan: RunPlan, run_start: float, run_index_name: str) -> dict:
    """Rank 0's checkpoint: one fsync'd file of checkpoint_bytes through the storage backend, timed,
    then removed (the evidence is the timed write; do not fill the disk run after run)."""
    from suite.storage.backend.select import backend_for

    from suite.storage.backend.select import OBJECT_TYPES, is_object_location

    local = plan.storage_type in OBJECT_TYPES and not is_object_location(plan.checkpoint_dir)
    backend = backend_for("local_fs" if local else plan.storage_type, plan.checkpoint_dir)
    try:
        backend.make_prefix("")
    except OSError as exc:
        raise RunError(f"{plan.checkpoint_dir}: checkpoint folder: {exc.strerror}") from None
    name = f"model-{run_index_name}.pt"
    path = str(Path(plan.checkpoint_dir) / name)
    chunk = memoryview(os.urandom(4 * 1024 * 1024))
    t0 = time.time()
    left = plan.checkpoint_bytes
    try:
        with backend.create(name, fsync=True, atomic=False) as writer:
            writev = writer.writev
            while left > 0:
                left -= writev([chunk[:min(left, len(chunk))]])
            writer.commit()
        t1 = time.time()
        backend.remove(name)
    except OSError as exc:
        raise RunError(f"{path}: checkpoint write of {plan.checkpoint_bytes} bytes: {exc.strerror}") from None
    return {"bytes_written": plan.checkpoint_bytes, "duration_s": t1 - t0, "path": path,
            "start_s": t0 - run_start, "end_s": t1 - run_start, "fsync": True, "removed_after": True}


def proc_field(path: str, key: str, unit_bytes: int) -> int | None:
    """One figure of this process from /proc (None where /proc does not say): its peak resident memory
    (status VmHWM, kB: Python, mpi4py, the read buffers) and what its reads fetched from storage rather
    than the page cache (io read_bytes): the miniature's record sets both beside the cgroup's budget."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1]) * unit_bytes
    except (OSError, ValueError, IndexError):
        return None
    return None


def worker(plan_path: str) -> int:
    """One rank: read the shard, simulate compute, barrier each step, write steps/rank-<r>.json."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    plan = RunPlan.from_dict(files.load_json(Path(plan_path), schema="plan", limit=PLAN_MAX_BYTES))
    run_dir = Path(plan.run_dir)
    host = socket.gethostname()
    started(run_dir, rank)
    log = open(run_dir / "dlio.log", "a", encoding="utf-8") if rank == 0 else None

    def out(line: str) -> None:
        from suite.training.run.dlio_output import timestamp
        print(line, flush=True)
        log.write(f"{timestamp(time.time())} {line}\n")
        log.flush()

    try:
        record = _run(comm, plan, host, out)
        record.peak_rss_bytes = proc_field("/proc/self/status", "VmHWM:", 1024)
        record.storage_read_bytes = proc_field("/proc/self/io", "read_bytes:", 1)
        files.write_json(run_dir / "steps" / f"rank-{rank}.json", record.to_dict(), schema="steps")
        if plan.storage_type in ("object", "s3"):
            from suite.storage.objectstore import write_rank
            write_rank(run_dir, rank)
        barrier(comm)
        finished(run_dir, rank)
    except Exception as exc:  # noqa: BLE001 - one line for the CLI, the traceback (bugs) to mpiexec.log
        fail(comm, run_dir, rank, exc)
        return 1
    finally:
        if log:
            log.close()
    return 0


def _run(comm, plan: RunPlan, host: str, out) -> RankSteps:
    """Every epoch of this rank, then (rank 0) the checkpoint: the rank's step record."""
    from suite.storage.backend.select import backend_for
    from suite.training.run.accelerator import ComputeModel
    from suite.training.run.loader import Reader, ReaderConfig

    rank, size = comm.Get_rank(), comm.Get_size()
    model = ComputeModel(plan.computation_time_s, plan.batch_size, size)
    reader = Reader(ReaderConfig(
        read_threads=plan.read_threads, prefetch_size=plan.prefetch_size,
        transfer_size_bytes=plan.transfer_size_bytes, odirect=plan.odirect, format=plan.format,
        samples_per_file=plan.samples_per_file, batch_size=plan.batch_size,
        delay_per_file_s=plan.delay_per_file_s, max_file_bytes=max((int(s) for _, s in plan.files), default=0),
        parquet_columns=tuple(plan.parquet_columns or ()), decode_delay_s=plan.decode_delay_s),
        backend_for(plan.storage_type, ""))
    barrier(comm)
    run_start = comm.bcast(time.time() if rank == 0 else None, root=0)
    record = RankSteps(rank=rank, hostname=host, run_start_unix_s=run_start)
    aus: list[float] = []
    for epoch in range(1, plan.epochs + 1):
        record.epochs.append(_epoch(comm, plan, reader, model, epoch, run_start, out))
        if plan.stop_when_clear and epoch < plan.epochs and _clear(comm, plan, record.epochs[-1], aus, out):
            break
    barrier(comm)
    if rank == 0 and plan.checkpoint_bytes and plan.checkpoint_dir:
        out(f"Starting checkpoint: {plan.checkpoint_bytes} bytes to {plan.checkpoint_dir}")
        record.checkpoint = write_checkpoint(plan, run_start, Path(plan.run_dir).name)
        out(f"Ending checkpoint: {record.checkpoint['duration_s']:.2f} s")
    return record


def _clear(comm, plan: RunPlan, e: RankEpoch, aus: list, out) -> bool:
    """suite sweep's sequential test after an epoch: the epoch's per-interval AU (its steps after the
    first in up to 8 runs, compute and wall time summed over ranks) joins `aus`; rank 0 decides
    whether AU against the threshold is clear yet (suite.stats.sequential_verdict) and every rank
    follows its answer."""
    from suite import stats

    mine = stats.interval_au(e.step_end_s, e.step_compute_s)
    every = comm.gather(mine, root=0)
    stop = None
    if comm.Get_rank() == 0:
        s = plan.stop_when_clear
        k = min(len(x) for x in every)
        aus += [100.0 * sum(x[i][0] for x in every) / max(sum(x[i][1] for x in every), 1e-12) for i in range(k)]
        verdict = stats.sequential_verdict(aus, s["threshold_percentage"], s["level"], looks=plan.epochs - 1,
                                           epochs=e.epoch, min_epochs=s["min_epochs"])
        stop = verdict is not None
        if stop:
            out(f"Stopping after epoch {e.epoch} of {plan.epochs}: AU over {len(aus)} intervals "
                f"{sum(aus) / len(aus):.2f}% is clearly {'at or above' if verdict else 'below'} "
                f"{s['threshold_percentage']:g}% (sequential test, level {s['level']:g})")
    return bool(comm.bcast(stop, root=0))


def _epoch(comm, plan: RunPlan, reader, model, epoch: int, run_start: float, out) -> RankEpoch:
    """One epoch: wait for each batch, simulate its compute, meet the others; the timings."""
    rank, size = comm.Get_rank(), comm.Get_size()
    now = time.time
    shard, need = rank_shard(plan, epoch, rank, size)
    barrier(comm)
    e = RankEpoch(epoch=epoch, start_s=now() - run_start)
    if rank == 0:
        out(f"Starting epoch {epoch}: {plan.steps_per_epoch} steps expected")
    ep = reader.epoch(shard, need)
    starts, ends, comps, slept = e.step_start_s, e.step_end_s, e.step_compute_s, e.step_sleep_s
    clock = model.clock()
    columnar = plan.format == "parquet"
    last = ep.counters() if columnar else None
    try:
        for i in range(plan.steps_per_epoch):
            t0 = now()
            ep.wait_batch(i)
            if columnar:
                last = _step_reads(e, ep.counters(), last)
            s = clock.compute()
            barrier(comm)
            starts.append(t0 - run_start)
            ends.append(now() - run_start)
            comps.append(model.computation_time_s)       # what the step computes, as DLIO counts it
            slept.append(s)                              # the wall time its sleep took (evidence)
    finally:
        ep.close()
    e.end_s = now() - run_start
    e.samples, e.bytes_read, e.files_read = need, ep.bytes_read, ep.files_read
    if columnar:
        e.columns_read = list(plan.parquet_columns or ())
    if rank == 0:
        from suite.training import figures as metrics
        au = metrics.epoch_au_from_steps(starts, ends, comps)
        tp = metrics.epoch_throughput_from_steps(starts, ends, need) * size
        out(f"Ending epoch {epoch} - {len(comps)} steps completed in {e.end_s - e.start_s:.2f} s; "
            f"rank 0 AU {au:.2f}%, ~{tp:.2f} samples/s, "
            f"{ep.bytes_read / 1024**2 / max(e.end_s - e.start_s, 1e-9):.1f} MiB/s read")
    return e


def _step_reads(e: RankEpoch, now: tuple, last: tuple) -> tuple:
    """A Parquet step's record: what the reader threads did since the step before (bytes, requests,
    I/O and decode seconds summed over the threads)."""
    e.step_bytes_read.append(now[0] - last[0])
    e.step_requests.append(now[1] - last[1])
    e.step_io_s.append(max(0.0, now[2] - last[2]))
    e.step_decode_s.append(max(0.0, now[3] - last[3]))
    return now


if __name__ == "__main__":
    sys.exit(worker(sys.argv[1]))
