"""The page-cache ceiling: the same run with the dataset already in memory and no cache drop.

What no storage can beat on this host: the runner, MPI and the simulated compute with reads
served from the page cache. It is an open-division measurement (`--division open
--no-cache-drop`), labelled as such in sweep.json and the report. The files read are the ones
the storage run's plan.json names, read once here (outside any memory cgroup, so the pages are
not charged to, nor evicted by, the ranks' cgroup).
"""

from pathlib import Path

from suite import files
from suite.errors import ResultError



def plan_files(results_dir: Path) -> list[str]:
    """The dataset files the first measured run of a `suite run` results dir read (its plan.json)."""
    from suite.training.sweep import result

    first = next(iter(result.run_dirs(results_dir)), Path(results_dir) / "run-1")
    plan = files.load_json(first / "plan.json", schema="plan", error=ResultError)
    return [f[0] for f in plan["files"]]


def resident_fraction(paths: list[str]) -> float | None:
    """Fraction of the files' pages in the page cache now (mincore through mmap); None where
    it cannot be asked (an empty list, or no mincore on this platform)."""
    import ctypes
    import mmap
    import os

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        mincore = libc.mincore
    except (OSError, AttributeError):
        return None
    page = mmap.PAGESIZE
    resident = pages = 0
    for p in paths:
        size = os.path.getsize(p)
        if size == 0:
            continue
        with open(p, "rb") as f:
            m = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)   # from_buffer needs a writable view
        n = (size + page - 1) // page
        vec = (ctypes.c_ubyte * n)()
        anchor = ctypes.c_char.from_buffer(m)
        try:
            rc = mincore(ctypes.c_void_p(ctypes.addressof(anchor)), ctypes.c_size_t(size), vec)
        finally:
            del anchor             # the export must go before the mapping can close
            m.close()
        if rc != 0:
            return None
        resident += sum(b & 1 for b in vec)
        pages += n
    return resident / pages if pages else None
