"""Datasets without our generation log (DLIO's): recognised by scanning, refused when mixed or partial.

The DLIO-style files here are written the way DLIO 2.0.0 writes them (np.savez of uint8 x of shape
(dim1, dim2, samples) and y labels; TFRecord framing around tf.train.Example-sized payloads), with
numpy and our own framing code, so these tests need no DLIO; tests/engines runs DLIO itself.
"""

import struct

import numpy as np
import pytest

from suite.training.data import datagen, dlio_data, formats
from suite.training import workloads
from suite.storage.backend.posix import PosixBackend

UNET = {"dataset.record_length": 20000, "dataset.record_length_stdev": 2000}
COSMO = {"dataset.record_length": 3000, "dataset.record_length_stdev": 300}


def dlio_npz(path, rng, record=20000, samples=1):
    d = int(np.sqrt(record)) + int(rng.integers(-5, 5))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:         # np.savez(path) as DLIO calls it (a file object: no suffix added)
        np.savez(f, x=rng.integers(0, 255, size=(d, d, samples), dtype=np.uint8), y=[0] * samples)


def dlio_tfrecord(path, rng, record=3000, samples=1):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for _ in range(samples):
            payload = rng.integers(0, 255, size=record + int(rng.integers(-50, 50)), dtype=np.uint8).tobytes()
            head = struct.pack("<Q", len(payload))
            f.write(head + struct.pack("<I", formats.masked_crc(formats.crc32c(head))) + payload
                    + struct.pack("<I", formats.masked_crc(formats.crc32c(payload))))


def at(path):
    """(backend, name) of a file: the storage backend reads it."""
    return PosixBackend(path.parent), path.name


def make(tmp_path, n, writer, ext, pad=True, **kw):
    rng = np.random.default_rng(1)
    width = len(str(n)) if pad else 0
    (tmp_path / "valid").mkdir(parents=True, exist_ok=True)
    paths = [tmp_path / "train" / f"img_{str(i).zfill(width)}_of_{n}.{ext}" for i in range(n)]
    for p in paths:
        writer(p, rng, **kw)
    return paths


@pytest.mark.parametrize("pad", [True, False])
def test_dlio_npz_dataset_is_recognised_with_evidence(tmp_path, pad):
    make(tmp_path, 12, dlio_npz, "npz", pad=pad)
    scan = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100", UNET))
    assert scan.ok and scan.problems == [] and scan.num_files == 12 and scan.generator == "dlio"
    ev = scan.evidence
    assert ev["generator"] == "dlio" and ev["generation_log"] is None and ev["files_scanned"] == 12
    assert 15000 < ev["mean_record_bytes"] < 25000 and ev["valid_files"] == 0
    assert scan.total_bytes == sum(p.stat().st_size for p in (tmp_path / "train").iterdir())


def test_dlio_tfrecord_dataset_is_recognised(tmp_path):
    make(tmp_path, 5, dlio_tfrecord, "tfrecord", samples=1)
    (tmp_path / "index" / "train").mkdir(parents=True)           # DLIO's tfrecord2idx output
    scan = datagen.scan(tmp_path, workloads.resolve("cosmoflow", "h100", COSMO))
    assert scan.ok and scan.generator == "dlio" and scan.evidence["samples"] == 5


def test_half_written_npz_is_refused_naming_it(tmp_path):
    paths = make(tmp_path, 6, dlio_npz, "npz")
    with open(paths[3], "r+b") as f:
        f.truncate(paths[3].stat().st_size // 2)
    problems = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100", UNET)).problems
    assert problems[0].startswith(f"{paths[3]}: not a complete npz file"), problems


def test_half_written_tfrecord_is_refused_naming_it(tmp_path):
    paths = make(tmp_path, 4, dlio_tfrecord, "tfrecord", samples=3)
    with open(paths[2], "r+b") as f:
        f.truncate(paths[2].stat().st_size - 10)
    problems = datagen.scan(tmp_path, workloads.resolve("cosmoflow", "h100",
                                                         {**COSMO, "dataset.num_samples_per_file": 3})).problems
    assert len(problems) == 1 and problems[0].startswith(f"{paths[2]}: truncated"), problems


def test_missing_file_and_wrong_samples_are_named(tmp_path):
    paths = make(tmp_path, 5, dlio_npz, "npz")
    paths[1].unlink()
    dlio_npz(paths[4], np.random.default_rng(2), samples=2)
    problems = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100", UNET)).problems
    assert problems[0].startswith(f"{tmp_path / 'train'}/img_1_of_5.npz") and problems[0].endswith("missing")
    assert problems[1] == f"{paths[4]}: samples: expected 1 per file, got 2"


def test_mixed_folder_is_refused_naming_the_odd_file(tmp_path):
    w = workloads.resolve("unet3d", "h100", UNET)
    datagen.generate(w, tmp_path, 6, processes=1)
    (tmp_path / datagen.LOG_NAME).unlink()           # a copy of our files without our log ...
    odd = datagen.train_files(tmp_path, w, 6)[2]
    dlio_npz(odd, np.random.default_rng(3))          # ... with one DLIO file among them
    problems = datagen.scan(tmp_path, w).problems
    assert problems == [f"{odd}: a mixed folder: this file is not suite datagen's, 5 of 6 are suite "
                        f"datagen's and 1 another generator's (DLIO's)"]


def test_our_files_without_our_log_are_an_interrupted_generation(tmp_path):
    w = workloads.resolve("unet3d", "h100", UNET)
    datagen.generate(w, tmp_path, 3, processes=1)
    (tmp_path / datagen.LOG_NAME).unlink()
    problems = datagen.scan(tmp_path, w).problems
    assert len(problems) == 1 and problems[0].startswith(f"{tmp_path / datagen.LOG_NAME} (the files are suite datagen's")
    assert problems[0].endswith(": missing")


def test_record_size_far_from_the_workload_is_refused(tmp_path):
    make(tmp_path, 3, dlio_npz, "npz", record=20000)
    problems = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100", {"dataset.record_length": 200000})).problems
    assert len(problems) == 1 and "record size: expected a mean near dataset.record_length = 200000" in problems[0]


def test_foreign_and_other_format_files_are_named(tmp_path):
    make(tmp_path, 2, dlio_npz, "npz")
    (tmp_path / "train" / "notes.txt").write_text("x")
    (tmp_path / "train" / "img_0_of_2.hdf5").write_bytes(b"")
    problems = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100", UNET)).problems
    assert problems == [f"{tmp_path / 'train' / 'img_0_of_2.hdf5'}: format: expected .npz files, got .hdf5",
                        f"{tmp_path / 'train' / 'notes.txt'}: foreign file"]


def test_npz_facts_reads_only_the_header(tmp_path):
    path = tmp_path / "a.npz"
    np.savez(path, x=np.zeros((30, 40, 2), dtype=np.uint8), y=[0, 0])
    facts = dlio_data.npz_facts(*at(path))
    assert (facts.samples, facts.payload_bytes) == (2, 2400)
    assert dlio_data.npz_facts(*at(tmp_path / "nope.npz")).startswith("not a complete npz file")


def test_suite_datagen_writes_valid_and_eval_files_for_dlio(tmp_path):
    w = workloads.resolve("unet3d", "h100", {**UNET, "dataset.num_files_eval": 3})
    datagen.generate(w, tmp_path, 4, processes=1)
    names = sorted(p.name for p in (tmp_path / "valid").iterdir())
    assert names == ["img_0_of_3.npz", "img_1_of_3.npz", "img_2_of_3.npz"]
    assert dlio_data.npz_facts(*at(tmp_path / "valid" / names[0])).samples == 1
    assert datagen.scan(tmp_path, w).ok
    plain = tmp_path / "plain"
    datagen.generate(workloads.resolve("unet3d", "h100", UNET), plain, 2, processes=1)
    assert (plain / "valid").is_dir() and not list((plain / "valid").iterdir())
    datagen.generate(workloads.resolve("unet3d", "h100", UNET), plain, 2, processes=1)   # rerun: valid/ is ours


def test_a_huge_file_count_in_a_name_costs_nothing(tmp_path):
    make(tmp_path, 2, dlio_npz, "npz")
    (tmp_path / "train" / "img_5_of_999999999999.npz").write_bytes(b"")
    problems = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100", UNET)).problems
    assert problems[-1] == f"{tmp_path / 'train'}: file names claim 999999999999 files, 3 present"


from hypothesis import given, settings, strategies as st   # noqa: E402 - the property tests below


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=600))
def test_format_readers_never_raise_on_arbitrary_bytes(tmp_path_factory, data):
    """Files are untrusted: every reader returns facts or a one-line reason, never an exception."""
    d = tmp_path_factory.mktemp("any")
    for name, reader in dlio_data.FACTS.items():
        path = d / f"f.{name}"
        path.write_bytes(data)
        out = reader(*at(path))
        assert isinstance(out, (str, dlio_data.FileFacts))
        if isinstance(out, str):
            assert "\n" not in out


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 255), st.integers(0, 10_000))
def test_damaged_npz_and_tfrecord_never_raise(tmp_path_factory, pos, byte, cut):
    d = tmp_path_factory.mktemp("dmg")
    rng = np.random.default_rng(0)
    for name, writer in (("npz", dlio_npz), ("tfrecord", dlio_tfrecord)):
        path = d / f"f.{name}"
        writer(path, rng, record=900, samples=2)
        raw = bytearray(path.read_bytes())
        raw[pos % len(raw)] = byte
        path.write_bytes(bytes(raw[:len(raw) - cut % len(raw)]))
        out = dlio_data.FACTS[name](*at(path))
        assert isinstance(out, (str, dlio_data.FileFacts))
