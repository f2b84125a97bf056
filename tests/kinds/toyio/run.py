"""toyio's run: write N files of 1 MiB, then three passes that drop each file from the page cache
(POSIX_FADV_DONTNEED) and read it back, timing every read."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

from suite.harness import resultsdir
from suite.toyio import figures, leaf

FILE_BYTES = 1 << 20
PASSES = 3


def run(results_dir, data_dir, n_files: int) -> Path:
    root = resultsdir.claim(results_dir, "toyio")
    out = root / "toyio" / time.strftime("%Y%m%d_%H%M%S", time.gmtime())
    out.mkdir(parents=True)
    data = Path(data_dir) if data_dir else root / "toyio-data"
    data.mkdir(parents=True, exist_ok=True)
    names = [data / f"file-{i:04d}.bin" for i in range(n_files)]
    for p in names:
        with open(p, "wb") as f:
            f.write(os.urandom(FILE_BYTES))
            f.flush()
            os.fsync(f.fileno())
    reads = [_read(p, k) for k in range(PASSES) for p in names]
    doc = figures.from_reads(reads)
    leaf.write(out, {"kind": "toyio", "workload": "toyio-mini", "host": socket.gethostname(), "files": n_files,
                     **doc}, reads)
    resultsdir.release(root)
    return out


def _read(path: Path, k: int) -> dict:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        t0 = time.perf_counter()
        n = 0
        while chunk := os.read(fd, 1 << 20):
            n += len(chunk)
        return {"pass": k, "file": path.name, "bytes": n, "duration_s": time.perf_counter() - t0}
    finally:
        os.close(fd)
