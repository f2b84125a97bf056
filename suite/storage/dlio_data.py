"""Datasets without our generation log: DLIO's own (`generate_data=True`), recognised by scanning.

DLIO 2.0.0 writes D/train/img_<i>_of_<N>.<ext> (i zero-padded to the width of N; unpadded names
are accepted too), D/train/<k>/ subfolders only when num_subfolders_train > 1, D/valid/ (eval
files, often empty) and, for TFRecord, D/index/. Its record sizes come from its own random draw
(dim1 x dim2 around sqrt(record_length)), so no expected size can be computed: each file is
checked by its format instead -- npz: the zip directory and x.npy's header (samples, bytes per
sample); TFRecord: every record's framing (length CRC), ending exactly at the end of the file;
hdf5: the `records` dataset's shape. The mean bytes per sample must lie within a factor of two of
the workload's record_length. A file at our exact seeded size is ours: ours among DLIO's (a mixed
folder), or ours without generation_log.json (an interrupted `suite datagen`), is refused.
Every problem names its file; callers report the first.
"""

import os
import re
import struct
from dataclasses import dataclass
from pathlib import Path

NAME = re.compile(r"^img_(\d+)_of_(\d+)\.(\w+)$")
SIZE_FACTOR = 2.0                  # mean bytes per sample within [record_length / 2, record_length * 2]


@dataclass
class FileFacts:
    samples: int
    payload_bytes: int              # bytes of sample data (image bytes), all samples


def npz_facts(path: Path) -> FileFacts | str:
    import zipfile
    import zlib

    import numpy as np

    try:
        with zipfile.ZipFile(path) as z:
            if "x.npy" not in z.namelist():
                return f"npz without x.npy (members {sorted(z.namelist())[:4]})"
            with z.open("x.npy") as f:
                version = np.lib.format.read_magic(f)
                read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                shape, _fortran, dtype = read(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError, RuntimeError, KeyError,
            struct.error, zlib.error) as exc:     # a damaged member header, an unknown compression method
        return f"not a complete npz file (truncated or not a zip: {(str(exc).splitlines() or [''])[0][:100]})"
    if len(shape) != 3:
        return f"x.npy shape {shape}, expected (dim1, dim2, samples)"
    return FileFacts(samples=int(shape[2]), payload_bytes=int(shape[0]) * int(shape[1]) * int(shape[2]) * dtype.itemsize)


def tfrecord_facts(path: Path, max_records: int = 10_000_000) -> FileFacts | str:
    """Walk the framing (12 bytes read per record): record count and payload bytes."""
    from suite.storage.formats import crc32c, masked_crc

    count, payload, offset = 0, 0, 0
    with open(path, "rb", buffering=0) as f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        while offset < size and count < max_records:
            head = os.pread(fd, 12, offset)
            if len(head) < 12:
                return f"record {count}: truncated header at byte {offset}"
            (length,), (crc,) = struct.unpack("<Q", head[:8]), struct.unpack("<I", head[8:])
            if crc != masked_crc(crc32c(head[:8])):
                return f"record {count}: length CRC mismatch at byte {offset} (not TFRecord, or damaged)"
            offset += 16 + length
            count, payload = count + 1, payload + length
    if offset != size:
        return f"truncated: size {size}, the last record ends at {offset}"
    return FileFacts(samples=count, payload_bytes=payload)


def hdf5_facts(path: Path) -> FileFacts | str:
    import h5py

    try:
        with h5py.File(path, "r") as f:
            shape = f["records"].shape
    except (OSError, KeyError, ValueError, RuntimeError, TypeError, AttributeError) as exc:
        return f"not a readable hdf5 file with `records` ({(str(exc).splitlines() or [''])[0][:100]})"
    per = 1
    for d in shape[1:]:
        per *= int(d)
    return FileFacts(samples=int(shape[0]), payload_bytes=per * int(shape[0]))


FACTS = {"npz": npz_facts, "tfrecord": tfrecord_facts, "hdf5": hdf5_facts}


def _listing(train: Path, ext: str, problems: list) -> dict[int, list[Path]]:
    """index -> the paths named img_<index>_of_<N> under train/ (any depth-1 subfolder), N-checked later."""
    by_index, totals = {}, {}
    for root, dirs, names in os.walk(train):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            m = NAME.match(name)
            if not m:
                problems.append(f"{path}: {'unfinished temp file' if name.startswith('.') else 'foreign file'}")
                continue
            if m.group(3) != ext:
                problems.append(f"{path}: format: expected .{ext} files, got .{m.group(3)}")
                continue
            totals.setdefault(int(m.group(2)), path)
            by_index.setdefault(int(m.group(1)), []).append(path)
    if len(totals) > 1:
        first = sorted(totals.items())[1][1]
        problems.append(f"{first}: file names disagree on the number of files: {sorted(totals)}")
    return by_index


def scan(data_dir: Path, workload, out, deep: bool = False):
    """Fill `out` (a datagen.DatasetScan) for a dataset without generation_log.json."""
    from suite.storage import datagen

    train, ext = data_dir / "train", datagen.extension(workload)
    problems: list[str] = []
    by_index = _listing(train, ext, problems)
    if not by_index:
        out.problems.append(f"{train}: no img_<i>_of_<N>.{ext} files")
        return out
    n = out.expected_files = max(int(NAME.match(p.name).group(2)) for ps in by_index.values() for p in ps)
    if n > 10 * len(by_index) + 10_000:     # names are untrusted: no per-index work for a claimed 10^12
        out.problems.extend([*problems, f"{train}: file names claim {n} files, {len(by_index)} present"])
        return out
    spf, fmt = workload.num_samples_per_file, workload.format
    ours_lengths = datagen.record_lengths(workload, n, workload.seed)
    kinds, facts_all = {}, []
    for i in range(n):
        paths = by_index.get(i, [])
        if not paths:
            problems.append(f"{train}/img_{i}_of_{n}.{ext} (or zero-padded): missing")
            continue
        if len(paths) > 1:
            problems.append(f"{paths[1]}: index {i} twice (also {paths[0]})")
        path = paths[0]
        if datagen.file_problem(path, fmt, ours_lengths[i], spf, framing=False) is None:
            kinds[path] = "suite"
            size = path.stat().st_size
            facts_all.append((path, FileFacts(spf, int(ours_lengths[i].sum())), size))
            continue
        facts = FACTS[fmt](path)
        if isinstance(facts, str):
            problems.append(f"{path}: {facts}")
            continue
        if facts.samples != spf:
            problems.append(f"{path}: samples: expected {spf} per file, got {facts.samples}")
            continue
        kinds[path] = "dlio"
        facts_all.append((path, facts, path.stat().st_size))
    for extra in sorted(i for i in by_index if i >= n):
        problems.append(f"{by_index[extra][0]}: index {extra} outside the {n}-file layout")
    generator = _generator(kinds, problems, data_dir)
    _check_sizes(workload, facts_all, problems)
    out.problems.extend(problems)
    out.files = [p for p, _f, _s in facts_all]           # the complete files, also when others are not
    out.num_files = len(out.files)
    out.total_bytes = sum(s for _p, _f, s in facts_all)
    if not problems:
        out.generator = generator
        out.evidence = evidence(data_dir, workload, facts_all, generator)
    return out


def _generator(kinds: dict, problems: list, data_dir: Path) -> str:
    """dlio, or a problem: ours among DLIO's (mixed), or ours without our log (interrupted)."""
    ours = sorted(p for p, k in kinds.items() if k == "suite")
    theirs = sorted(p for p, k in kinds.items() if k == "dlio")
    if ours and theirs:
        minority = ours if len(ours) <= len(theirs) else theirs
        what = "suite datagen's (its exact seeded size)" if minority is ours else "not suite datagen's"
        problems.append(f"{minority[0]}: a mixed folder: this file is {what}, {len(ours)} of {len(kinds)} are "
                        f"suite datagen's and {len(theirs)} another generator's (DLIO's)")
    elif ours:
        from suite.storage.datagen import LOG_NAME
        problems.append(f"{data_dir / LOG_NAME} (the files are suite datagen's: an interrupted generation? "
                        f"rerun suite datagen to finish it): missing")
    return "dlio"


def _check_sizes(workload, facts_all: list, problems: list) -> None:
    samples = sum(f.samples for _p, f, _s in facts_all)
    if not samples:
        return
    mean = sum(f.payload_bytes for _p, f, _s in facts_all) / samples
    want = float(workload.record_length_bytes)
    if not want / SIZE_FACTOR <= mean <= want * SIZE_FACTOR:
        first = facts_all[0][0]
        problems.append(f"{first.parent}: record size: expected a mean near dataset.record_length = {want:.0f} bytes "
                        f"(within x{SIZE_FACTOR:g}), got {mean:.0f} bytes per sample over {samples} samples "
                        f"(generated for another record_length?)")


def evidence(data_dir: Path, workload, facts_all: list, generator: str) -> dict:
    """What results.json records of a scanned dataset (the dataset evidence, in place of our log)."""
    sizes = [s for _p, _f, s in facts_all]
    samples = sum(f.samples for _p, f, _s in facts_all)
    valid = data_dir / "valid"
    valid_files = sum(len(n) for _r, _d, n in os.walk(valid)) if valid.is_dir() else 0
    return {
        "generator": generator, "generation_log": None,
        "note": "no generation_log.json of ours: the dataset was recognised and checked by scanning",
        "checked": ["names", "count", "format", "samples per file", "framing", "mean record size"],
        "files_scanned": len(facts_all), "samples": samples,
        "mean_record_bytes": round(sum(f.payload_bytes for _p, f, _s in facts_all) / samples, 1) if samples else 0,
        "min_file_bytes": min(sizes) if sizes else 0, "max_file_bytes": max(sizes) if sizes else 0,
        "subfolders": len({p.parent for p, _f, _s in facts_all} - {data_dir / "train"}),
        "valid_files": valid_files,
    }
