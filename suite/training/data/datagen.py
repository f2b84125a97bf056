"""`suite datagen`: write a workload's training data in its real format, fast, resumably.

Layout and record lengths: suite.training.data.dataset (DLIO's layout; one seeded draw of the record
lengths, so a file's expected size is known without reading it, and the same command writes the
same bytes). Every file goes through the workload's storage backend (suite.storage.backend): written
to a hidden temp name and renamed when complete (the backend's commit); a rerun keeps complete files
(size, + TFRecord framing) and rewrites the rest. One syncfs at the end, like fio's end_fsync.
Parallel: P local processes (fork), or MPI ranks when launched under mpiexec (each rank its shard).
"""

import errno
import fnmatch
import os
import socket
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from suite.errors import SuiteError
from suite.training.data import dlio_data
from suite.storage.backend import meta
from suite.storage.backend.s3stats import REQUESTS
from suite.storage.backend.s3stats import merge as merge_requests
from suite.storage.backend.select import resolve
from suite.training.data.dataset import (  # noqa: F401 - the layout's names, used through datagen by callers
    LOG_NAME, MAX_FILES_PER_FOLDER, NAME, TEMP, DatasetScan, expected_size, extension, file_names, file_problem,
    layout_of, min_record_bytes, num_subfolders, record_lengths, train_files)

# --------------------------------------------------------------------------- scan


def scan(data, workload, deep: bool = False, framing: bool = True) -> DatasetScan:
    """Check the dataset at `data` (the command's DataLocation; a path or s3:// URL is resolved here)
    against `workload`: layout, count, format, sizes, TFRecord framing (one small read per record;
    framing=False skips it), every CRC when deep. One listing of train/, through the location's backend."""
    data = resolve(data, workload)
    data_dir, backend = data.root, data.backend
    out = DatasetScan(data_dir, workload.format, 0, None, 0)
    seed = workload.seed
    try:
        listing = backend.list("train")
    except (FileNotFoundError, NotADirectoryError):
        out.problems.append(f"{data_dir / 'train'}: missing")
        return out
    log = data_dir / LOG_NAME
    try:    # generation_log.json: a small metadata file beside the data, read by the bounded JSON loader
        doc = meta.load_json(backend, LOG_NAME, schema="generation_log") if meta.exists(backend, LOG_NAME) else None
    except SuiteError as exc:
        out.problems.append(str(exc))
        doc = {}
    if doc:
        seed = doc["seed"]
        for key, want in (("workload", workload.name), ("format", workload.format),
                          ("record_length_bytes", workload.record_length_bytes),
                          ("record_length_stdev_bytes", workload.record_length_stdev_bytes),
                          ("num_samples_per_file", workload.num_samples_per_file)):
            if doc[key] != want:
                out.problems.append(f"{log}: {key}: expected {want}, got {doc[key]}")
    elif doc is None:   # no log of ours: DLIO's data (or an interrupted suite datagen), checked by scanning
        return dlio_data.scan(backend, listing, data_dir, workload, out, deep)
    out.evidence = {"generator": "suite", "generation_log": str(log)}
    sizes, counts = {}, Counter()
    for entry in listing:
        base = entry.name.rsplit("/", 1)[-1]
        match = NAME.match(base)
        if match:
            counts[int(match.group(2))] += 1
            sizes[entry.name] = entry.size_bytes
        else:
            what = "unfinished temp file" if TEMP.match(base) else "foreign file"
            out.problems.append(f"{data_dir / entry.name}: {what}")
    if not counts:
        out.problems.append(f"{data_dir / 'train'}: no img_<i>_of_<N> files")
        return out
    if len(counts) > 1:
        out.problems.append(f"{data_dir / 'train'}: file names disagree on the number of files: {sorted(counts)}")
    n = out.expected_files = counts.most_common(1)[0][0]        # the layout most files belong to
    expected = file_names(workload, n)
    lengths, spf = record_lengths(workload, n, seed), workload.num_samples_per_file
    lay = layout_of(workload)
    for stray in sorted(set(sizes) - set(expected)):
        out.problems.append(f"{data_dir / stray}: not part of the {n}-file {workload.format} layout")
    for i, name in enumerate(expected):
        size = sizes.get(name, -1)
        problem = file_problem(backend, name, workload.format, lengths[i], spf, deep, framing, size=size, layout=lay)
        if problem:
            out.problems.append(f"{data_dir / name}: {problem}")
        else:
            out.add(name, size)
    return out


# --------------------------------------------------------------------------- writing

_JOB = None    # (workload, names, lengths, seed, run id, backend), set before the worker processes fork
_LISTED: dict = {}   # name -> size from the one listing of train/ (object storage: no HEAD per file)
_REQUESTS: list = []  # the object-storage requests of the worker processes (suite.storage.backend.s3stats)


def _write_one(index: int) -> tuple[int, int, bool]:
    """Write file `index` unless it is complete; (index, bytes, written)."""
    from suite.training.data import formats

    workload, names, lengths, seed, run_id, backend = _JOB
    name, fmt, spf = names[index], workload.format, workload.num_samples_per_file
    listed = _LISTED.get(name, -1) if _LISTED is not None else None
    lay = layout_of(workload)
    if listed != -1 and file_problem(backend, name, fmt, lengths[index], spf, size=listed, layout=lay) is None:
        return index, listed if listed is not None else backend.size(name), False
    content, record = _content(seed), lengths[index]
    try:
        if fmt == "parquet":
            from suite.training.data import parquet
            with backend.create(name, parquet.size_hint(lay, spf), temp_tag=run_id) as writer:
                parquet.write(writer, lay, spf, content, index)
                writer.commit()
        elif fmt == "hdf5":
            data = formats.hdf5_bytes(formats.Sink(None, content, index), int(record[0]), spf)
            with backend.create(name, len(data), temp_tag=run_id) as writer:
                writer.write(data)
                writer.commit()
        else:
            with backend.create(name, expected_size(fmt, record, spf), temp_tag=run_id) as writer:
                sink = formats.Sink(writer, content, index)
                if fmt == "tfrecord":
                    formats.write_tfrecord(sink, record)
                elif fmt == "jpeg":
                    formats.write_jpeg(sink, int(record[0]), index)
                else:
                    formats.write_npz(sink, int(record[0]), spf)
                sink.flush()
                writer.commit()
    except OSError as exc:
        raise SuiteError(f"{backend.root}/{name}: cannot write: {exc.strerror or exc}"
                         + (" (the file system is full)" if exc.errno == errno.ENOSPC else "")) from None
    size = len(data) if fmt == "hdf5" else expected_size(fmt, record, spf)   # parquet: None, asked below
    return index, size if size is not None else backend.size(name), True


def _write_counted(index: int):
    """_write_one in a worker process, with the object-storage requests it made."""
    return _write_one(index), REQUESTS.take()


_CONTENT = {}


def _content(seed):
    from suite.training.data import formats

    if seed not in _CONTENT:
        _CONTENT[seed] = formats.Content(seed)
    return _CONTENT[seed]


def _flush(backend, names) -> None:
    try:
        backend.sync(names)
    except OSError as exc:
        raise SuiteError(f"{exc.filename}: cannot flush to disk: {exc.strerror or exc}") from None


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C: the parent stops the pool and cleans up
    REQUESTS.reset()        # the parent's requests stay the parent's: a worker counts its own


def _run(indices, processes: int, on_file) -> list[str]:
    """Write `indices` with `processes` local processes; returns the names written."""
    names, backend, written = _JOB[1], _JOB[5], []
    temps = f".img_*.{_JOB[4]}.tmp"       # this run's temp names: what an interrupt may leave
    if processes <= 1 or len(indices) <= 1:
        try:
            for i in indices:
                result = _write_one(i)
                on_file(*result)
                if result[2]:
                    written.append(names[i])
        except BaseException:   # Ctrl-C between a temp file's creation and its writer's cleanup
            _remove_temps(backend, {n.split("/", 1)[0] for n in names}, temps)
            raise
        _flush(backend, written)
        return written
    import multiprocessing

    _content(_JOB[3])            # build the pool once; the workers share it copy-on-write
    if _JOB[0].format == "jpeg":  # and the JPEG bases (suite.training.data.formats.jpeg_base)
        from suite.training.data import formats
        formats.warm_jpeg(_JOB[2][indices])
    pool = multiprocessing.get_context("fork").Pool(min(processes, len(indices)), initializer=_worker_init)
    try:
        for result, requests in pool.imap_unordered(_write_counted, indices, chunksize=1):
            _REQUESTS.append(requests)
            on_file(*result)
            if result[2]:
                written.append(names[result[0]])
        pool.close()
    except BaseException:
        pool.terminate()         # SIGTERM: a worker may die mid-file, leaving its temp file
        pool.join()
        _remove_temps(backend, {n.split("/", 1)[0] for n in names}, temps)
        raise
    pool.join()
    _flush(backend, written)
    return written


def _remove_temps(backend, prefixes, pattern: str) -> None:
    """Remove the temp files under `prefixes` whose base name matches `pattern`."""
    for prefix in sorted(prefixes):
        try:
            listing = backend.list(prefix)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in listing:
            if fnmatch.fnmatchcase(entry.name.rsplit("/", 1)[-1], pattern):
                backend.remove(entry.name)


def mpi_world():
    """(comm, rank, size) when launched by mpiexec with more than one rank, else None."""
    env = os.environ
    size = env.get("PMI_SIZE") or env.get("OMPI_COMM_WORLD_SIZE") or env.get("PMIX_SIZE")
    if not size or int(size) <= 1:
        return None
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    return (comm, comm.Get_rank(), comm.Get_size()) if comm.Get_size() > 1 else None


OURS = {"train", "valid", LOG_NAME}   # what a directory `suite datagen` made holds at its top (valid/: DLIO's)


def refuse_target(backend, data_dir: Path) -> None:
    """Before anything is written: never the file-system root, never a non-empty directory that
    `suite datagen` did not make (its top holds train/ and generation_log.json only)."""
    if hasattr(backend, "preflight"):      # object storage: credentials, bucket, endpoint (one HEAD)
        backend.preflight()
    elif os.path.realpath(data_dir) == os.path.abspath(os.sep):
        raise SuiteError(f"--data-dir {data_dir}: expected a dataset directory, got the file-system root")
    try:
        top = backend.list("", recursive=False)
    except FileNotFoundError:
        return
    except NotADirectoryError:
        raise SuiteError(f"--data-dir {data_dir}: expected a directory, got a file") from None
    except OSError as exc:
        raise SuiteError(f"--data-dir {data_dir}: expected a readable directory, got {exc.strerror or exc}") from None
    names = sorted(e.name for e in top if not e.name.startswith(".probe."))
    other = [n for n in names if n not in OURS]
    if other:
        raise SuiteError(f"--data-dir {data_dir}: expected a new or empty directory, or one suite datagen made "
                         f"(train/, valid/, {LOG_NAME}), got {len(other)} other entries, e.g. {other[0]!r}")


def check_data_dir(backend, data_dir: Path, refused: bool = False) -> None:
    if not refused:
        refuse_target(backend, data_dir)
    try:
        backend.make_prefix("train")
        backend.make_prefix("valid")          # DLIO lists valid/ even when it evaluates nothing
        probe = f".probe.{socket.gethostname()}.{os.getpid()}"
        with backend.create(probe, atomic=False) as writer:
            writer.commit()
        backend.remove(probe)
    except OSError as exc:
        raise SuiteError(f"--data-dir {data_dir}: expected a writable directory, got {exc.strerror or exc}") from None


def _train_sizes(backend) -> dict[str, int]:
    """name -> size of everything under train/ ({} when there is no train/ yet): one listing."""
    try:
        return {e.name: e.size_bytes for e in backend.list("train")}
    except (FileNotFoundError, NotADirectoryError):
        return {}


def check_space_bound(backend, data_dir: Path, workload, num_files: int) -> None:
    """Arithmetic before any per-file work: refuse when even the smallest possible dataset (every
    record at the clip floor) exceeds the free space and no file of it is there yet."""
    free = backend.free_bytes()
    floor = num_files * workload.num_samples_per_file * min_record_bytes(workload)
    if free is not None and floor > free and not any(NAME.match(n.rsplit("/", 1)[-1]) for n in _train_sizes(backend)):
        raise SuiteError(f"--data-dir {data_dir}: free space: expected at least {floor / 2**30:,.2f} GiB for "
                         f"{num_files:,} files, got {free / 2**30:,.2f} GiB (the file system is too small)")


def _check_space(backend, data_dir: Path, workload, names, lengths, have: dict) -> None:
    """Bytes still to write against the free space (`have`: name -> size listed; {}: a fresh train/)."""
    spf, need, free = workload.num_samples_per_file, 0, backend.free_bytes()
    if free is None:
        return
    if not have:    # every record plus a generous allowance for framing and headers
        total = int(lengths.sum()) * (1 if workload.format == "tfrecord" else spf)
        if total * 1.05 + 4096 * len(names) <= free:
            return
    for i, name in enumerate(names):
        want = expected_size(workload.format, lengths[i], spf) or int(lengths[i].sum())
        need += 0 if have.get(name, -1) == want else want
    if need > free:
        raise SuiteError(f"--data-dir {data_dir}: free space: expected at least {need / 2**30:.2f} GiB "
                         f"for the files still to write, got {free / 2**30:.2f} GiB (the file system is too small)")


def _prepare(backend, data_dir: Path, workload, names, lengths) -> dict:
    """Refuse to mix datasets, check the space, remove the temp files of an interrupted run; the
    listing of train/ (name -> size) the writers use to keep complete files."""
    suffix = f"_of_{len(names)}.{extension(workload)}"
    have = _train_sizes(backend)
    other = sorted(n for n in have if NAME.match(n.rsplit("/", 1)[-1]) and not n.endswith(suffix))
    if other:
        raise SuiteError(f"--data-dir {data_dir}: expected only img_<i>{suffix} files in train/, got "
                         f"{len(other)} of another dataset, e.g. {data_dir / other[0]} (use another --data-dir)")
    for name in [n for n in have if TEMP.match(n.rsplit("/", 1)[-1])]:
        backend.remove(name)
        del have[name]
    _check_space(backend, data_dir, workload, names, lengths, have)
    for folder in sorted({n.rsplit("/", 1)[0] for n in names}):
        backend.make_prefix(folder)
    return have


def generate(workload, data_dir, num_files: int, processes: int | None = None, seed: int | None = None,
             progress=None, extra: dict | None = None) -> dict:
    """Write the dataset; returns the generation log (also written to data_dir/generation_log.json).

    `progress(done_files, done_bytes, written_bytes, kept_files)` is called as files complete (rank 0
    only under MPI): files kept from an earlier run count as done, never as written.
    """
    global _JOB, _LISTED
    if num_files <= 0:
        raise SuiteError(f"files: expected a positive integer, got {num_files}")
    data = resolve(data_dir, workload)           # the command's DataLocation, or a path resolved here
    data_dir, seed = data.root, workload.seed if seed is None else seed
    REQUESTS.reset()                # the object-storage requests of this generation only
    world = mpi_world()
    comm, rank, size = world or (None, 0, 1)
    processes = processes or (1 if world else os.cpu_count() or 1)
    backend = data.backend
    _check_target(comm, rank, backend, data_dir, workload, num_files)
    names, lengths = file_names(workload, num_files), record_lengths(workload, num_files, seed)
    _LISTED = _prepare_once(comm, rank, backend, data_dir, workload, names, lengths)
    _REQUESTS.clear()
    _JOB = (workload, names, lengths, seed, f"{socket.gethostname()}.{os.getpid()}", backend)
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    done = {"files": 0, "bytes": 0, "written": 0, "bytes_written": 0}

    def on_file(index, nbytes, written):
        done["files"] += 1
        done["bytes"] += nbytes
        done["written"] += written
        done["bytes_written"] += nbytes if written else 0
        if progress and rank == 0:
            progress(done["files"] * size, done["bytes"] * size, done["bytes_written"] * size,
                     (done["files"] - done["written"]) * size)

    error = None
    try:
        _run(list(range(rank, num_files, size)), processes, on_file)
        _write_eval(workload, data_dir, seed, rank, size, processes)
    except SuiteError as exc:
        error = exc
    totals = _totals(comm, done, error)
    duration = time.perf_counter() - t0
    requests = _requests(comm)
    if hasattr(backend, "preflight"):      # object storage: the endpoint, bucket, library, the requests
        from suite.storage.backend.s3stats import summary
        extra = {**(extra or {}), "storage": {**backend.evidence(), "requests": summary(requests)}}
    log = _log(workload, seed, num_files, totals, duration, processes, size, comm is not None, started, extra)
    if rank == 0:
        try:
            meta.write_json(backend, LOG_NAME, log, schema="generation_log")
        except OSError as exc:
            raise SuiteError(f"{data_dir / LOG_NAME}: cannot write: {exc.strerror or exc}") from None
    return log


def _check_target(comm, rank: int, backend, data_dir, workload, num_files: int) -> None:
    """The refusals before anything is written: every rank its own (POSIX: each host's mount), or,
    on object storage (one bucket for all), rank 0 alone, its answer broadcast: one listing, not one
    per rank."""
    shared = hasattr(backend, "preflight")
    problem = None
    if rank == 0 or not shared:
        try:
            refuse_target(backend, data_dir)
            check_space_bound(backend, data_dir, workload, num_files)
            check_data_dir(backend, data_dir, refused=True)
        except SuiteError as exc:
            if comm is None or not shared:
                raise
            problem = str(exc)
    if comm is not None and shared:
        problem = comm.bcast(problem, root=0)
        if problem:
            raise SuiteError(problem)


def _write_eval(workload, data_dir: Path, seed: int, rank: int, size: int, processes: int) -> None:
    """dataset.num_files_eval > 0: DLIO's eval files, D/valid/img_<i>_of_<M>.<ext> (seed + 1)."""
    global _JOB, _LISTED
    _LISTED = None     # valid/ was not listed: each file's size is asked
    m = int(workload.config.get("dataset", {}).get("num_files_eval") or 0)
    if m:
        names = file_names(workload, m, top="valid")
        _JOB = (workload, names, record_lengths(workload, m, seed + 1), seed + 1, _JOB[4], _JOB[5])
        _run(list(range(rank, m, size)), processes, lambda *_: None)


def _prepare_once(comm, rank: int, backend, data_dir: Path, workload, names, lengths) -> None:
    """Rank 0 prepares the directory (space, stale files); every rank learns whether it could."""
    problem, have = None, None
    if rank == 0:
        try:
            have = _prepare(backend, data_dir, workload, names, lengths)
        except SuiteError as exc:
            problem = str(exc)
    if comm:
        problem, have = comm.bcast((problem, have), root=0)
    if problem:
        raise SuiteError(problem)
    return have


def _requests(comm) -> dict:
    """The object-storage requests of this run: this process's, its workers', every rank's (merged)."""
    mine = merge_requests([*_REQUESTS, REQUESTS.take()])
    _REQUESTS.clear()
    if comm:
        return merge_requests(comm.allgather(mine))
    return mine


def _totals(comm, done: dict, error) -> dict:
    """The counts over all ranks; raises this rank's error, or one for the ranks that failed."""
    if comm:
        failed = comm.allreduce(1 if error else 0)
        if failed and not error:
            error = SuiteError(f"{failed} MPI rank(s) failed; see their messages")
        totals = {k: comm.allreduce(v) for k, v in done.items()}
    else:
        totals = done
    if error:
        raise error
    return totals


def _log(workload, seed: int, num_files: int, totals: dict, duration: float, processes: int, ranks: int,
         mpi: bool, started, extra) -> dict:
    """generation_log.json (suite/training/schemas/generation_log.schema.json)."""
    from suite import __version__

    log = {
        "schema_version": 1, "workload": workload.name, "accelerator": workload.accelerator,
        "format": workload.format, "record_length_bytes": workload.record_length_bytes,
        "record_length_stdev_bytes": workload.record_length_stdev_bytes,
        "min_record_bytes": min_record_bytes(workload), "num_samples_per_file": workload.num_samples_per_file,
        "config": workload.config, "seed": seed, "num_files": num_files,
        "num_samples": num_files * workload.num_samples_per_file, "subfolders": num_subfolders(workload, num_files),
        "bytes": totals["bytes"], "files_written": totals["written"], "files_kept": totals["files"] - totals["written"],
        "bytes_written": totals["bytes_written"], "duration_s": round(duration, 6),
        "throughput_mb_s": round(totals["bytes_written"] / duration / 1e6, 6) if duration > 0 else 0.0,
        "processes": processes, "ranks": ranks, "mode": "mpi" if mpi else "local",
        "hostname": socket.gethostname(), "suite_version": __version__,
        "started": started.isoformat(timespec="seconds"),
        "ended": datetime.now(timezone.utc).isoformat(timespec="seconds"), **(extra or {}),
    }
    return log
