"""`suite datagen`: write a workload's training data in its real format, fast, resumably.

Layout (DLIO's): D/train/img_<i>_of_<N>.<ext>, i zero-padded to the width of N; with more than
10,000 files (or the workload's num_subfolders_train > 1) file i goes to D/train/<i mod k>/.
Record lengths: one draw of shape (files, samples per file) from Normal(record_length,
record_length_stdev) with the seed, rounded and clipped below at min_record_bytes(); so a file's
expected size is known without reading it, and the same command writes the same bytes.
Every file is written to a hidden temp name and renamed when complete; a rerun keeps complete files
(size, + TFRecord framing) and rewrites the rest. One syncfs at the end, like fio's end_fsync.
Parallel: P local processes (fork), or MPI ranks when launched under mpiexec (each rank its shard).
"""

import errno
import os
import re
import socket
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from suite import files as suite_files
from suite.errors import SuiteError

LOG_NAME = "generation_log.json"
MAX_FILES_PER_FOLDER = 10_000
_NAME = re.compile(r"^img_(\d+)_of_(\d+)\.(\w+)$")
_TEMP = re.compile(r"^\.img_.*\.tmp$")

# --------------------------------------------------------------------------- layout and sizes


def extension(workload) -> str:
    from suite.storage.formats import EXTENSIONS

    return EXTENSIONS[workload.format]


def num_subfolders(workload, num_files: int) -> int:
    if workload.num_subfolders_train > 1:
        return workload.num_subfolders_train
    return -(-num_files // MAX_FILES_PER_FOLDER) if num_files > MAX_FILES_PER_FOLDER else 0


def train_files(data_dir, workload, num_files: int) -> list[Path]:
    """The training files of a dataset of `num_files`, in index order (the runner reads these)."""
    train, ext = Path(data_dir) / "train", extension(workload)
    width, folders = len(str(num_files)), num_subfolders(workload, num_files)
    fwidth = len(str(folders))
    return [(train / str(i % folders).zfill(fwidth) if folders else train)
            / f"img_{str(i).zfill(width)}_of_{num_files}.{ext}" for i in range(num_files)]


def min_record_bytes(workload) -> int:
    """The clip floor of drawn record lengths: a tenth of the mean, at least 64 bytes."""
    return max(64, int(workload.record_length_bytes) // 10)


def record_lengths(workload, num_files: int, seed: int):
    """int64 array (files, samples per file) of record lengths in bytes."""
    import numpy as np

    spf, mean, sd = workload.num_samples_per_file, workload.record_length_bytes, workload.record_length_stdev_bytes
    if sd > 0:
        drawn = np.random.default_rng(seed).normal(mean, sd, size=(num_files, spf if workload.format == "tfrecord" else 1))
        lengths = np.maximum(np.rint(drawn), min_record_bytes(workload)).astype(np.int64)
    else:
        lengths = np.full((num_files, 1), max(int(round(mean)), min_record_bytes(workload)), dtype=np.int64)
    return np.broadcast_to(lengths, (num_files, spf)) if workload.format == "tfrecord" else lengths


def expected_size(fmt: str, lengths, samples: int) -> int | None:
    """Bytes of a complete file with these record lengths (None for hdf5: h5py decides)."""
    from suite.storage import formats

    if fmt == "tfrecord":
        if lengths.min() == lengths.max():
            return len(lengths) * (16 + formats.tfrecord_payload_bytes(int(lengths[0])))
        return formats.tfrecord_size(lengths)
    if fmt == "npz":
        return formats.npz_size(int(lengths[0]), samples)
    return None


def file_problem(path: Path, fmt: str, lengths, samples: int, deep: bool = False,
                 framing: bool = True) -> str | None:
    """None when `path` is a complete file for these lengths, else why it is not.

    Always the size; with `framing` every TFRecord header (hdf5: opens it); with `deep` every CRC."""
    from suite.storage import formats

    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return "missing"
    want = expected_size(fmt, lengths, samples)
    if want is not None and size != want:
        return f"size {size}, expected {want}"
    if fmt == "tfrecord" and (framing or deep):
        return formats.check_tfrecord(path, lengths, deep)
    if fmt == "hdf5":
        return formats.check_hdf5(path, int(lengths[0]), samples)
    return None


# --------------------------------------------------------------------------- scan


@dataclass
class DatasetScan:
    """What is on disk under data_dir/train, checked against the workload."""

    data_dir: Path
    format: str
    num_files: int                  # complete files of the expected layout
    expected_files: int | None      # N from the file names (None when no files)
    total_bytes: int                # bytes of the complete files
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    generator: str = "suite"        # who wrote the files: suite (our log) or dlio (recognised by dlio_data)
    evidence: dict = field(default_factory=dict)    # what results.json records of the dataset

    @property
    def ok(self) -> bool:
        return not self.problems and self.num_files > 0


def scan(data_dir, workload, deep: bool = False, framing: bool = True) -> DatasetScan:
    """Check data_dir against `workload`: layout, count, format, sizes, TFRecord framing (one small
    read per record; framing=False skips it), every CRC when deep."""
    data_dir = Path(data_dir)
    out = DatasetScan(data_dir, workload.format, 0, None, 0)
    train, seed = data_dir / "train", workload.seed
    if not train.is_dir():
        out.problems.append(f"{train}: missing")
        return out
    log = data_dir / LOG_NAME
    try:
        doc = suite_files.load_json(log, schema="generation_log") if log.is_file() else None
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
        from suite.storage import dlio_data
        return dlio_data.scan(data_dir, workload, out, deep)
    out.evidence = {"generator": "suite", "generation_log": str(log)}
    found, counts = [], Counter()
    for root, _dirs, names in os.walk(train):
        for name in names:
            match = _NAME.match(name)
            if match:
                counts[int(match.group(2))] += 1
                found.append(Path(root) / name)
            else:
                out.problems.append(f"{Path(root) / name}: {'unfinished temp file' if _TEMP.match(name) else 'foreign file'}")
    if not counts:
        out.problems.append(f"{train}: no img_<i>_of_<N> files")
        return out
    if len(counts) > 1:
        out.problems.append(f"{train}: file names disagree on the number of files: {sorted(counts)}")
    n = out.expected_files = counts.most_common(1)[0][0]        # the layout most files belong to
    expected = train_files(data_dir, workload, n)
    lengths, spf = record_lengths(workload, n, seed), workload.num_samples_per_file
    for stray in sorted(set(found) - set(expected)):
        out.problems.append(f"{stray}: not part of the {n}-file {workload.format} layout")
    for i, path in enumerate(expected):
        problem = file_problem(path, workload.format, lengths[i], spf, deep, framing)
        if problem:
            out.problems.append(f"{path}: {problem}")
        else:
            out.num_files += 1
            out.total_bytes += path.stat().st_size
            out.files.append(path)
    return out


# --------------------------------------------------------------------------- writing

_JOB = None    # (workload, paths, lengths, seed, run id), set before the worker processes fork


def _temp_path(path: Path, run_id: str) -> Path:
    return path.with_name(f".{path.name}.{run_id}.tmp")


def _write_one(index: int) -> tuple[int, int, bool]:
    """Write file `index` unless it is complete; (index, bytes, written)."""
    from suite.storage import formats

    workload, paths, lengths, seed, run_id = _JOB
    path, fmt, spf = paths[index], workload.format, workload.num_samples_per_file
    if file_problem(path, fmt, lengths[index], spf) is None:
        return index, path.stat().st_size, False
    content, record = _content(seed), lengths[index]
    tmp = _temp_path(path, run_id)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "hdf5":
            formats.write_hdf5(tmp, formats.Sink(-1, content, index), int(record[0]), spf)
        else:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                formats.preallocate(fd, expected_size(fmt, record, spf))
                sink = formats.Sink(fd, content, index)
                if fmt == "tfrecord":
                    formats.write_tfrecord(sink, record)
                else:
                    formats.write_npz(sink, int(record[0]), spf)
                sink.flush()
            finally:
                os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise SuiteError(f"{path}: cannot write: {exc.strerror or exc}"
                         + (" (the file system is full)" if exc.errno == errno.ENOSPC else "")) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return index, path.stat().st_size, True


_CONTENT = {}


def _content(seed):
    from suite.storage import formats

    if seed not in _CONTENT:
        _CONTENT[seed] = formats.Content(seed)
    return _CONTENT[seed]


def _flush(paths) -> None:
    from suite.storage import formats

    try:
        formats.sync_files(paths)
    except OSError as exc:
        raise SuiteError(f"{exc.filename}: cannot flush to disk: {exc.strerror or exc}") from None


def _worker_init() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)     # Ctrl-C: the parent stops the pool and cleans up


def _run(indices, processes: int, on_file) -> list[Path]:
    """Write `indices` with `processes` local processes; returns the paths written."""
    paths, written = _JOB[1], []
    if processes <= 1 or len(indices) <= 1:
        for i in indices:
            result = _write_one(i)
            on_file(*result)
            if result[2]:
                written.append(paths[i])
        _flush(written)
        return written
    import multiprocessing

    _content(_JOB[3])            # build the pool once; the workers share it copy-on-write
    pool = multiprocessing.get_context("fork").Pool(min(processes, len(indices)), initializer=_worker_init)
    try:
        for result in pool.imap_unordered(_write_one, indices, chunksize=1):
            on_file(*result)
            if result[2]:
                written.append(paths[result[0]])
        pool.close()
    except BaseException:
        pool.terminate()         # SIGTERM: a worker may die mid-file, leaving its temp file
        pool.join()
        for folder in {p.parent for p in paths}:
            for tmp in folder.glob(_temp_path(Path("img_*"), _JOB[4]).name):
                tmp.unlink(missing_ok=True)
        raise
    pool.join()
    _flush(written)
    return written


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


def refuse_target(data_dir: Path) -> None:
    """Before anything is written: never the file-system root, never a non-empty directory that
    `suite datagen` did not make (its top holds train/ and generation_log.json only)."""
    if os.path.realpath(data_dir) == os.path.abspath(os.sep):
        raise SuiteError(f"--data-dir {data_dir}: expected a dataset directory, got the file-system root")
    if data_dir.exists() and not data_dir.is_dir():
        raise SuiteError(f"--data-dir {data_dir}: expected a directory, got a file")
    if not data_dir.is_dir():
        return
    try:
        names = sorted(n for n in os.listdir(data_dir) if not n.startswith(".probe."))
    except OSError as exc:
        raise SuiteError(f"--data-dir {data_dir}: expected a readable directory, got {exc.strerror or exc}") from None
    other = [n for n in names if n not in OURS]
    if other:
        raise SuiteError(f"--data-dir {data_dir}: expected a new or empty directory, or one suite datagen made "
                         f"(train/, valid/, {LOG_NAME}), got {len(other)} other entries, e.g. {other[0]!r}")


def check_data_dir(data_dir: Path) -> None:
    refuse_target(data_dir)
    try:
        (data_dir / "train").mkdir(parents=True, exist_ok=True)
        (data_dir / "valid").mkdir(exist_ok=True)          # DLIO lists valid/ even when it evaluates nothing
        probe = data_dir / f".probe.{socket.gethostname()}.{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise SuiteError(f"--data-dir {data_dir}: expected a writable directory, got {exc.strerror or exc}") from None


def check_space_bound(data_dir: Path, workload, num_files: int) -> None:
    """Arithmetic before any per-file work: refuse when even the smallest possible dataset (every
    record at the clip floor) exceeds the free space and no file of it is there yet."""
    probe = data_dir if data_dir.is_dir() else next((p for p in data_dir.parents if p.is_dir()), Path(os.sep))
    st = os.statvfs(probe)
    free = st.f_bavail * st.f_frsize
    floor = num_files * workload.num_samples_per_file * min_record_bytes(workload)
    if floor > free and not any((data_dir / "train").glob("**/img_*")):
        raise SuiteError(f"--data-dir {data_dir}: free space: expected at least {floor / 2**30:,.2f} GiB for "
                         f"{num_files:,} files, got {free / 2**30:,.2f} GiB (the file system is too small)")


def _check_space(data_dir: Path, workload, paths, lengths, fresh: bool = False) -> None:
    """Bytes still to write against the free space; a fresh train/ needs no per-file stat."""
    spf, need = workload.num_samples_per_file, 0
    if fresh:       # every record plus a generous allowance for framing and headers
        st = os.statvfs(data_dir)
        total = int(lengths.sum()) * (1 if workload.format == "tfrecord" else spf)
        if total * 1.05 + 4096 * len(paths) <= st.f_bavail * st.f_frsize:
            return
    for i, path in enumerate(paths):
        want = expected_size(workload.format, lengths[i], spf) or int(lengths[i].sum())
        try:
            have = -1 if fresh else path.stat().st_size
        except FileNotFoundError:
            have = -1
        need += 0 if have == want else want
    st = os.statvfs(data_dir)
    free = st.f_bavail * st.f_frsize
    if need > free:
        raise SuiteError(f"--data-dir {data_dir}: free space: expected at least {need / 2**30:.2f} GiB "
                         f"for the files still to write, got {free / 2**30:.2f} GiB (the file system is too small)")


def _prepare(data_dir: Path, workload, paths, lengths) -> None:
    """Refuse to mix datasets, check the space, remove the temp files of an interrupted run."""
    suffix = f"_of_{len(paths)}.{extension(workload)}"
    fresh = True
    for root, _dirs, names in os.walk(data_dir / "train"):
        fresh = fresh and not names
        other = sorted(n for n in names if _NAME.match(n) and not n.endswith(suffix))
        if other:
            raise SuiteError(f"--data-dir {data_dir}: expected only img_<i>{suffix} files in train/, got "
                             f"{len(other)} of another dataset, e.g. {Path(root) / other[0]} (use another --data-dir)")
        for name in names:
            if _TEMP.match(name):
                (Path(root) / name).unlink(missing_ok=True)
    _check_space(data_dir, workload, paths, lengths, fresh)
    for folder in sorted({p.parent for p in paths}):
        folder.mkdir(parents=True, exist_ok=True)


def generate(workload, data_dir, num_files: int, processes: int | None = None, seed: int | None = None,
             progress=None, extra: dict | None = None) -> dict:
    """Write the dataset; returns the generation log (also written to data_dir/generation_log.json).

    `progress(done_files, done_bytes)` is called as files complete (rank 0 only under MPI).
    """
    global _JOB
    if num_files <= 0:
        raise SuiteError(f"files: expected a positive integer, got {num_files}")
    data_dir, seed = Path(data_dir), workload.seed if seed is None else seed
    world = mpi_world()
    comm, rank, size = world or (None, 0, 1)
    processes = processes or (1 if world else os.cpu_count() or 1)
    refuse_target(data_dir)
    check_space_bound(data_dir, workload, num_files)
    check_data_dir(data_dir)
    paths, lengths = train_files(data_dir, workload, num_files), record_lengths(workload, num_files, seed)
    _prepare_once(comm, rank, data_dir, workload, paths, lengths)
    _JOB = (workload, paths, lengths, seed, f"{socket.gethostname()}.{os.getpid()}")
    started, t0 = datetime.now(timezone.utc), time.perf_counter()
    done = {"files": 0, "bytes": 0, "written": 0, "bytes_written": 0}

    def on_file(index, nbytes, written):
        done["files"] += 1
        done["bytes"] += nbytes
        done["written"] += written
        done["bytes_written"] += nbytes if written else 0
        if progress and rank == 0:
            progress(done["files"] * size, done["bytes"] * size)

    error = None
    try:
        _run(list(range(rank, num_files, size)), processes, on_file)
        _write_eval(workload, data_dir, seed, rank, size, processes)
    except SuiteError as exc:
        error = exc
    totals = _totals(comm, done, error)
    log = _log(workload, seed, num_files, totals, time.perf_counter() - t0, processes, size, comm is not None,
               started, extra)
    if rank == 0:
        try:
            suite_files.write_json(data_dir / LOG_NAME, log, schema="generation_log")
        except OSError as exc:
            raise SuiteError(f"{data_dir / LOG_NAME}: cannot write: {exc.strerror or exc}") from None
    return log


def _write_eval(workload, data_dir: Path, seed: int, rank: int, size: int, processes: int) -> None:
    """dataset.num_files_eval > 0: DLIO's eval files, D/valid/img_<i>_of_<M>.<ext> (seed + 1)."""
    global _JOB
    m = int(workload.config.get("dataset", {}).get("num_files_eval") or 0)
    if m:
        paths = [data_dir / "valid" / f"img_{str(i).zfill(len(str(m)))}_of_{m}.{extension(workload)}" for i in range(m)]
        _JOB = (workload, paths, record_lengths(workload, m, seed + 1), seed + 1, _JOB[4])
        _run(list(range(rank, m, size)), processes, lambda *_: None)


def _prepare_once(comm, rank: int, data_dir: Path, workload, paths, lengths) -> None:
    """Rank 0 prepares the directory (space, stale files); every rank learns whether it could."""
    problem = None
    if rank == 0:
        try:
            _prepare(data_dir, workload, paths, lengths)
        except SuiteError as exc:
            problem = str(exc)
    if comm:
        problem = comm.bcast(problem, root=0)
    if problem:
        raise SuiteError(problem)


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
    """generation_log.json (suite/schemas/generation_log.schema.json)."""
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
