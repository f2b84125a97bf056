"""The dataset layout and the check of one file, read through the POSIX backend."""

from suite.training.data import dataset, formats
from suite.training import workloads
from suite.storage.backend.posix import PosixBackend

UNET = {"dataset.record_length": 20000, "dataset.record_length_stdev": 2000}


def test_names_follow_dlios_layout():
    w = workloads.resolve("unet3d", "h100", UNET)
    assert dataset.file_names(w, 3) == ["train/img_0_of_3.npz", "train/img_1_of_3.npz", "train/img_2_of_3.npz"]
    many = dataset.file_names(w, 10_001)
    assert many[0] == "train/0/img_00000_of_10001.npz" and many[10_000] == "train/0/img_10000_of_10001.npz"
    assert many[1] == "train/1/img_00001_of_10001.npz"
    assert dataset.file_names(w, 12, top="valid")[3] == "valid/img_03_of_12.npz"
    assert [str(p) for p in dataset.train_files("/d", w, 2)] == ["/d/train/img_0_of_2.npz", "/d/train/img_1_of_2.npz"]


def test_file_problem_sizes_and_framing(tmp_path):
    w = workloads.resolve("cosmoflow", "h100", {"dataset.record_length": 3000, "dataset.record_length_stdev": 300})
    lengths = dataset.record_lengths(w, 1, w.seed)[0]
    backend, spf = PosixBackend(tmp_path), w.num_samples_per_file
    assert dataset.file_problem(backend, "f.tfrecord", "tfrecord", lengths, spf) == "missing"
    with backend.create("f.tfrecord") as out:
        formats.write_tfrecord(sink := formats.Sink(out, formats.Content(1), 0), lengths)
        sink.flush()
        out.commit()
    size = backend.size("f.tfrecord")
    assert size == dataset.expected_size("tfrecord", lengths, spf)
    assert dataset.file_problem(backend, "f.tfrecord", "tfrecord", lengths, spf) is None
    assert dataset.file_problem(backend, "f.tfrecord", "tfrecord", lengths, spf, size=size - 1) == \
        f"size {size - 1}, expected {size}"
    assert dataset.file_problem(backend, "f.tfrecord", "tfrecord", lengths, spf, size=-1) == "missing"
    data = bytearray((tmp_path / "f.tfrecord").read_bytes())
    data[3] ^= 0xFF
    (tmp_path / "f.tfrecord").write_bytes(data)
    assert "length CRC" in dataset.file_problem(backend, "f.tfrecord", "tfrecord", lengths, spf)
    assert dataset.file_problem(backend, "f.tfrecord", "tfrecord", lengths, spf, framing=False) is None
