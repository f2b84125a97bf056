"""A training dataset's layout and expected sizes, and the check of one file against them.

Layout (DLIO's): D/train/img_<i>_of_<N>.<ext>, i zero-padded to the width of N; with more than
10,000 files (or the workload's num_subfolders_train > 1) file i goes to D/train/<i mod k>/.
Record lengths: one draw of shape (files, samples per file) from Normal(record_length,
record_length_stdev) with the seed, rounded and clipped below at min_record_bytes(); so a file's
expected size is known without reading it. Files are names under the dataset's storage backend
(suite.storage.backend): "train/img_0_of_8.npz". Used by datagen (write, scan) and dlio_data.
"""

import re
from dataclasses import dataclass, field
from pathlib import Path

LOG_NAME = "generation_log.json"
MAX_FILES_PER_FOLDER = 10_000
NAME = re.compile(r"^img_(\d+)_of_(\d+)\.(\w+)$")
TEMP = re.compile(r"^\.img_.*\.tmp$")


def extension(workload) -> str:
    from suite.training.data.formats import EXTENSIONS

    return EXTENSIONS[workload.format]


def num_subfolders(workload, num_files: int) -> int:
    if workload.num_subfolders_train > 1:
        return workload.num_subfolders_train
    return -(-num_files // MAX_FILES_PER_FOLDER) if num_files > MAX_FILES_PER_FOLDER else 0


def file_names(workload, num_files: int, top: str = "train", ext: str | None = None) -> list[str]:
    """The names of a dataset's `num_files` files under `top`, in index order."""
    ext, width = ext or extension(workload), len(str(num_files))
    folders = num_subfolders(workload, num_files) if top == "train" else 0
    fwidth = len(str(folders))
    return [(f"{top}/{str(i % folders).zfill(fwidth)}" if folders else top)
            + f"/img_{str(i).zfill(width)}_of_{num_files}.{ext}" for i in range(num_files)]


def train_files(data_dir, workload, num_files: int) -> list[Path]:
    """The training files of a dataset of `num_files`, as paths under data_dir, in index order."""
    data_dir = Path(data_dir)
    return [data_dir / name for name in file_names(workload, num_files)]


def min_record_bytes(workload) -> int:
    """The clip floor of drawn record lengths: a tenth of the mean, at least 64 bytes (a JPEG at
    least formats.JPEG_MIN_BYTES: the smallest noise image plus a comment segment)."""
    floor = 1024 if workload.format == "jpeg" else 64
    return max(floor, int(workload.record_length_bytes) // 10)


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


def layout_of(workload):
    """The Parquet table layout of a parquet workload (suite.training.data.parquet.layout), else None."""
    if workload.format != "parquet":
        return None
    from suite.training.data import parquet

    return parquet.layout(workload)


def expected_size(fmt: str, lengths, samples: int) -> int | None:
    """Bytes of a complete file with these record lengths (None for hdf5 and parquet: h5py and pyarrow
    decide; the check reads the file's own structure instead)."""
    from suite.training.data import formats

    if fmt == "tfrecord":
        if lengths.min() == lengths.max():
            return len(lengths) * (16 + formats.tfrecord_payload_bytes(int(lengths[0])))
        return formats.tfrecord_size(lengths)
    if fmt == "npz":
        return formats.npz_size(int(lengths[0]), samples)
    if fmt == "jpeg":
        return int(lengths[0])
    return None


def file_problem(backend, name: str, fmt: str, lengths, samples: int, deep: bool = False,
                 framing: bool = True, size: int | None = None, layout=None) -> str | None:
    """None when `name` is a complete file for these lengths, else why it is not.

    Always the size (`size`: from a listing; None: asked of the backend, -1: missing); with
    `framing` every TFRecord header (hdf5: opens it; jpeg: SOI and EOI); with `deep` every CRC
    (jpeg: Pillow decodes it). parquet: its footer against `layout` (suite.training.data.parquet.Layout);
    deep: pyarrow reads every row group."""
    from suite.training.data import formats

    if size is None:
        try:
            size = backend.size(name)
        except FileNotFoundError:
            return "missing"
    if size < 0:
        return "missing"
    want = expected_size(fmt, lengths, samples)
    if want is not None and size != want:
        return f"size {size}, expected {want}"
    if fmt == "tfrecord" and (framing or deep):
        return formats.check_tfrecord(backend, name, lengths, deep)
    if fmt == "hdf5":
        return formats.check_hdf5(backend, name, int(lengths[0]), samples)
    if fmt == "parquet":
        from suite.training.data import parquet
        return parquet.check(backend, name, layout, samples, deep)
    if fmt == "jpeg" and (framing or deep):
        return formats.check_jpeg(backend, name, deep)
    return None


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
    names: list[str] = field(default_factory=list)  # the complete files' names under the backend
    sizes: list[int] = field(default_factory=list)  # ... and their sizes, from the one listing

    @property
    def ok(self) -> bool:
        return not self.problems and self.num_files > 0

    def add(self, name: str, size: int) -> None:
        """One complete file."""
        self.num_files += 1
        self.total_bytes += size
        self.files.append(self.data_dir / name)
        self.names.append(name)
        self.sizes.append(size)
