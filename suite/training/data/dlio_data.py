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
Every problem names its file; callers report the first. Files are read through the dataset's storage
backend (suite.storage.backend), from the one listing datagen.scan made.
"""

import struct
from dataclasses import dataclass
from pathlib import Path

from suite.training.data.dataset import LOG_NAME, NAME, extension, file_problem, record_lengths

SIZE_FACTOR = 2.0                  # mean bytes per sample within [record_length / 2, record_length * 2]


@dataclass
class FileFacts:
    samples: int
    payload_bytes: int              # bytes of sample data (image bytes), all samples


def npz_facts(backend, name: str) -> FileFacts | str:
    import zipfile
    import zlib

    import numpy as np

    try:
        with backend.open_read(name, sequential=False) as handle, zipfile.ZipFile(handle.fileobj()) as z:
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


def tfrecord_facts(backend, name: str, max_records: int = 10_000_000) -> FileFacts | str:
    """Walk the framing (12 bytes read per record): record count and payload bytes."""
    from suite.training.data.formats import crc32c, masked_crc

    count, payload, offset = 0, 0, 0
    with backend.open_read(name, sequential=False) as f:
        size = f.size()
        while offset < size and count < max_records:
            head = f.read_at(12, offset)
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


def hdf5_facts(backend, name: str) -> FileFacts | str:
    from suite.training.data.formats import hdf5_shape

    try:
        shape = hdf5_shape(backend, name)
    except (OSError, KeyError, ValueError, RuntimeError, TypeError, AttributeError) as exc:
        return f"not a readable hdf5 file with `records` ({(str(exc).splitlines() or [''])[0][:100]})"
    per = 1
    for d in shape[1:]:
        per *= int(d)
    return FileFacts(samples=int(shape[0]), payload_bytes=per * int(shape[0]))


FACTS = {"npz": npz_facts, "tfrecord": tfrecord_facts, "hdf5": hdf5_facts}


def _listing(listing, data_dir: Path, ext: str, problems: list) -> tuple[dict[int, list[str]], dict[str, int]]:
    """index -> the names img_<index>_of_<N> under train/ (any depth), N-checked later; name -> size."""
    by_index, totals, sizes = {}, {}, {}
    for entry in listing:
        name = entry.name
        base = name.rsplit("/", 1)[-1]
        m = NAME.match(base)
        if not m:
            problems.append(f"{data_dir / name}: {'unfinished temp file' if base.startswith('.') else 'foreign file'}")
            continue
        if m.group(3) != ext:
            problems.append(f"{data_dir / name}: format: expected .{ext} files, got .{m.group(3)}")
            continue
        totals.setdefault(int(m.group(2)), name)
        by_index.setdefault(int(m.group(1)), []).append(name)
        sizes[name] = entry.size_bytes
    if len(totals) > 1:
        first = sorted(totals.items())[1][1]
        problems.append(f"{data_dir / first}: file names disagree on the number of files: {sorted(totals)}")
    return by_index, sizes


def scan(backend, listing, data_dir: Path, workload, out, deep: bool = False):
    """Fill `out` (a dataset.DatasetScan) for a dataset without generation_log.json; `listing`: train/'s."""
    train, ext = data_dir / "train", extension(workload)
    problems: list[str] = []
    by_index, sizes = _listing(listing, data_dir, ext, problems)
    if not by_index:
        out.problems.append(f"{train}: no img_<i>_of_<N>.{ext} files")
        return out
    n = out.expected_files = max(int(NAME.match(p.rsplit("/", 1)[-1]).group(2)) for ps in by_index.values() for p in ps)
    if n > 10 * len(by_index) + 10_000:     # names are untrusted: no per-index work for a claimed 10^12
        out.problems.extend([*problems, f"{train}: file names claim {n} files, {len(by_index)} present"])
        return out
    spf, fmt = workload.num_samples_per_file, workload.format
    ours_lengths = record_lengths(workload, n, workload.seed)
    kinds, facts_all = {}, []
    for i in range(n):
        names = by_index.get(i, [])
        if not names:
            problems.append(f"{train}/img_{i}_of_{n}.{ext} (or zero-padded): missing")
            continue
        if len(names) > 1:
            problems.append(f"{data_dir / names[1]}: index {i} twice (also {data_dir / names[0]})")
        name = names[0]
        if file_problem(backend, name, fmt, ours_lengths[i], spf, framing=False, size=sizes[name]) is None:
            kinds[name] = "suite"
            facts_all.append((name, FileFacts(spf, int(ours_lengths[i].sum())), sizes[name]))
            continue
        facts = FACTS[fmt](backend, name)
        if isinstance(facts, str):
            problems.append(f"{data_dir / name}: {facts}")
            continue
        if facts.samples != spf:
            problems.append(f"{data_dir / name}: samples: expected {spf} per file, got {facts.samples}")
            continue
        kinds[name] = "dlio"
        facts_all.append((name, facts, sizes[name]))
    for extra in sorted(i for i in by_index if i >= n):
        problems.append(f"{data_dir / by_index[extra][0]}: index {extra} outside the {n}-file layout")
    generator = _generator(kinds, problems, data_dir)
    _check_sizes(workload, data_dir, facts_all, problems)
    out.problems.extend(problems)
    for name, _f, size in facts_all:                      # the complete files, also when others are not
        out.add(name, size)
    if not problems:
        out.generator = generator
        out.evidence = evidence(backend, data_dir, facts_all, generator)
    return out


def _generator(kinds: dict, problems: list, data_dir: Path) -> str:
    """dlio, or a problem: ours among DLIO's (mixed), or ours without our log (interrupted)."""
    ours = sorted(data_dir / p for p, k in kinds.items() if k == "suite")
    theirs = sorted(data_dir / p for p, k in kinds.items() if k == "dlio")
    if ours and theirs:
        minority = ours if len(ours) <= len(theirs) else theirs
        what = "suite datagen's (its exact seeded size)" if minority is ours else "not suite datagen's"
        problems.append(f"{minority[0]}: a mixed folder: this file is {what}, {len(ours)} of {len(kinds)} are "
                        f"suite datagen's and {len(theirs)} another generator's (DLIO's)")
    elif ours:
        problems.append(f"{data_dir / LOG_NAME} (the files are suite datagen's: an interrupted generation? "
                        f"rerun suite datagen to finish it): missing")
    return "dlio"


def _check_sizes(workload, data_dir: Path, facts_all: list, problems: list) -> None:
    samples = sum(f.samples for _p, f, _s in facts_all)
    if not samples:
        return
    mean = sum(f.payload_bytes for _p, f, _s in facts_all) / samples
    want = float(workload.record_length_bytes)
    if not want / SIZE_FACTOR <= mean <= want * SIZE_FACTOR:
        first = data_dir / facts_all[0][0]
        problems.append(f"{first.parent}: record size: expected a mean near dataset.record_length = {want:.0f} bytes "
                        f"(within x{SIZE_FACTOR:g}), got {mean:.0f} bytes per sample over {samples} samples "
                        f"(generated for another record_length?)")


def evidence(backend, data_dir: Path, facts_all: list, generator: str) -> dict:
    """What results.json records of a scanned dataset (the dataset evidence, in place of our log)."""
    sizes = [s for _p, _f, s in facts_all]
    samples = sum(f.samples for _p, f, _s in facts_all)
    try:
        valid_files = len(backend.list("valid"))
    except (FileNotFoundError, NotADirectoryError):
        valid_files = 0
    return {
        "generator": generator, "generation_log": None,
        "note": "no generation_log.json of ours: the dataset was recognised and checked by scanning",
        "checked": ["names", "count", "format", "samples per file", "framing", "mean record size"],
        "files_scanned": len(facts_all), "samples": samples,
        "mean_record_bytes": round(sum(f.payload_bytes for _p, f, _s in facts_all) / samples, 1) if samples else 0,
        "min_file_bytes": min(sizes) if sizes else 0, "max_file_bytes": max(sizes) if sizes else 0,
        "subfolders": len({p.rsplit("/", 1)[0] for p, _f, _s in facts_all} - {"train"}),
        "valid_files": valid_files,
    }
