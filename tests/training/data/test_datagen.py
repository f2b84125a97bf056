"""`suite datagen`: real files written, read back by independent readers, resumed, interrupted, under MPI."""

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO, mpiexec
from suite.training.data import datagen, formats
from suite.training import workloads
from suite.training import datasize
from suite import files
from test_formats import parse_example, read_tfrecords

COSMO = ["--param", "dataset.record_length=3000", "--param", "dataset.record_length_stdev=700"]
RESNET = ["--param", "dataset.num_samples_per_file=10", "--param", "dataset.record_length=2000"]
UNET = ["--param", "dataset.record_length=20000", "--param", "dataset.record_length_stdev=5000"]


def resolved(name, argv, accel="h100"):
    pairs = [argv[i + 1] for i in range(0, len(argv), 2)]
    return workloads.resolve(name, accel, workloads.parse_params(pairs))


def digests(data_dir: Path) -> dict:
    return {str(p.relative_to(data_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((data_dir / "train").rglob("*")) if p.is_file()}


def log_of(data_dir: Path) -> dict:
    return files.load_json(data_dir / "generation_log.json", schema="generation_log")


def one_line_error(code, err, needle):
    assert code == 2, err
    lines = [line for line in err.splitlines() if not line.startswith("datagen: ")]   # progress lines
    assert len(lines) == 1 and "Traceback" not in err, err
    assert needle in lines[0], err


# --------------------------------------------------------------------------- layout and sizes


def test_train_files_layout_and_subfolders():
    w = workloads.resolve("resnet50", "h100")
    paths = datagen.train_files("/d", w, 12)
    assert paths[0] == Path("/d/train/img_00_of_12.tfrecord") and paths[11].name == "img_11_of_12.tfrecord"
    assert {p.parent for p in datagen.train_files("/d", w, 10_000)} == {Path("/d/train")}
    many = datagen.train_files("/d", w, 20_001)
    assert many[0] == Path("/d/train/0/img_00000_of_20001.tfrecord")
    assert many[4] == Path("/d/train/1/img_00004_of_20001.tfrecord")
    assert len({p.parent for p in many}) == 3 and len(set(many)) == 20_001
    assert max(sum(1 for p in many if p.parent == d) for d in {p.parent for p in many}) <= 10_000
    assert datagen.train_files("/d", workloads.resolve("unet3d", "h100"), 3)[2].name == "img_2_of_3.npz"
    hdf5 = workloads.resolve("unet3d", "h100", {"dataset.format": "hdf5"})
    assert datagen.train_files("/d", hdf5, 3)[0].suffix == ".hdf5"


def test_record_lengths_are_seeded_normal_and_clipped():
    w = workloads.resolve("unet3d", "h100")
    a, b = datagen.record_lengths(w, 20_000, 100), datagen.record_lengths(w, 20_000, 100)
    assert a.shape == (20_000, 1) and np.array_equal(a, b)
    assert not np.array_equal(a, datagen.record_lengths(w, 20_000, 101))
    floor = datagen.min_record_bytes(w)
    assert a.min() == floor and 0.01 < (a == floor).mean() < 0.05     # P(Z < -1.93) ~ 2.7%
    q25, q50, q75 = np.percentile(a, [25, 50, 75])                  # clipping leaves the quartiles alone
    assert abs(q50 - 146_600_628) < 2e6
    assert (q75 - q25) / 1.349 == pytest.approx(68_341_808, rel=0.05)
    r = datagen.record_lengths(workloads.resolve("resnet50", "h100"), 3, 100)
    assert r.shape == (3, 1251) and set(r.ravel().tolist()) == {114_660}


# --------------------------------------------------------------------------- formats through the CLI


def test_tfrecord_dataset_reads_back_with_the_independent_reader(run_cli, tmp_path):
    code, out, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 12, *COSMO)
    assert code == 0, err
    assert "wrote 12 of 12 files" in out and "MB/s (1 MB = 10^6 B)" in out
    assert "datagen: 12/12 files" in err                                   # plain progress lines off a TTY
    w = resolved("cosmoflow", COSMO)
    lengths = datagen.record_lengths(w, 12, w.seed)
    paths = datagen.train_files(tmp_path, w, 12)
    assert sorted((tmp_path / "train").iterdir()) == paths
    for path, length in zip(paths, lengths[:, 0]):
        (payload,) = read_tfrecords(path)
        assert length - 2 <= len(payload) <= length
        assert len(parse_example(payload)["image"]) > 2000
    assert len({len(read_tfrecords(p)[0]) for p in paths}) > 6          # sizes really vary
    log = log_of(tmp_path)
    assert log["mode"] == "local" and log["num_files"] == 12 and log["files_written"] == 12
    assert log["bytes"] == log["bytes_written"] == sum(p.stat().st_size for p in paths)
    assert log["seed"] == 100 and log["config"]["dataset"]["record_length"] == 3000
    assert log["throughput_mb_s"] == pytest.approx(log["bytes_written"] / log["duration_s"] / 1e6, rel=1e-3)
    assert log["command"][:3] == ["suite", "datagen", "--workload"]


def test_resnet50_files_hold_many_examples(run_cli, tmp_path):
    code, _, err = run_cli("datagen", "--workload", "resnet50", "--data-dir", tmp_path, "--files", 3,
                           "--processes", 2, *RESNET)
    assert code == 0, err
    for path in sorted((tmp_path / "train").iterdir()):
        payloads = read_tfrecords(path)
        assert len(payloads) == 10 and all(len(p) == 2000 for p in payloads)
        assert len({parse_example(p)["image"] for p in payloads}) == 10       # no repeated records


def test_npz_dataset_loads_with_numpy(run_cli, tmp_path):
    code, _, err = run_cli("datagen", "--workload", "unet3d", "--data-dir", tmp_path, "--files", 5, *UNET)
    assert code == 0, err
    w = resolved("unet3d", UNET)
    lengths = datagen.record_lengths(w, 5, w.seed)
    for path, length in zip(datagen.train_files(tmp_path, w, 5), lengths[:, 0]):
        with np.load(path) as npz:
            assert npz["x"].shape == formats.npz_shape(length, 1) and npz["y"].tolist() == [0]
    assert log_of(tmp_path)["format"] == "npz"


def test_hdf5_dataset_opens_with_h5py(run_cli, tmp_path):
    import h5py

    argv = [*UNET, "--param", "dataset.format=hdf5"]
    code, _, err = run_cli("datagen", "--workload", "unet3d", "--data-dir", tmp_path, "--files", 3, *argv)
    assert code == 0, err
    for path in sorted((tmp_path / "train").iterdir()):
        assert path.suffix == ".hdf5"
        with h5py.File(path, "r") as f:
            assert f["records"].shape[0] == 1 and f["records"].dtype == np.uint8
    assert datagen.scan(tmp_path, resolved("unet3d", argv)).ok


def test_same_command_same_bytes_whatever_the_process_count(run_cli, tmp_path):
    for name, procs in (("a", 1), ("b", 2)):
        assert run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path / name, "--files", 6,
                       "--processes", procs, *COSMO)[0] == 0
    assert run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path / "c", "--files", 6,
                   "--seed", 7, *COSMO)[0] == 0
    a, b, c = digests(tmp_path / "a"), digests(tmp_path / "b"), digests(tmp_path / "c")
    assert a == b and len(a) == 6
    assert set(a) == set(c) and not set(a.values()) & set(c.values())


def test_sized_from_accelerators_and_memory_through_datasize(run_cli, tmp_path):
    argv = ["--param", "dataset.record_length=1000", "--param", "dataset.record_length_stdev=0"]
    code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--accelerators", 1,
                           "--host-memory", "300KB", "--processes", 1, *argv)
    assert code == 0, err
    expected = datasize.compute(resolved("cosmoflow", argv), 1, 1, 300_000, None)
    assert expected.num_files == 1500 and expected.dictated_by == "memory"
    log = log_of(tmp_path)
    assert log["num_files"] == 1500 and log["datasize"]["num_files"] == 1500
    scanned = datagen.scan(tmp_path, resolved("cosmoflow", argv))
    assert scanned.ok and scanned.num_files == 1500 and scanned.total_bytes == log["bytes"]


def test_progress_is_a_tqdm_bar_on_a_tty_and_plain_lines_otherwise():
    import io

    from suite.report.progress import Progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, plain = Tty(), io.StringIO()
    for stream in (tty, plain):
        with Progress(4, stream=stream) as progress:
            for k in range(1, 5):
                progress(k, k * 2**29)
    assert "datagen: 100%" in tty.getvalue() and "4/4" in tty.getvalue() and "2.00 GiB" in tty.getvalue()
    assert plain.getvalue().splitlines()[-1].startswith("datagen: 4/4 files, 2.00 GiB")
    quiet = io.StringIO()
    with Progress(4, enabled=False, stream=quiet) as progress:
        progress(4, 1)
    assert quiet.getvalue() == ""


def test_progress_rate_counts_only_written_bytes_and_shows_kept_files():
    """A resumed generation keeps 19 of 20 files: its rate is of the one it wrote (issue 24: x20)."""
    import io

    from suite.report.progress import Progress

    plain = io.StringIO()
    with Progress(20, stream=plain) as progress:
        progress.t0 -= 1.0                           # one second in: the rate is bytes written / 1 s
        progress(20, 20 * 10**8, written_bytes=10**8, kept=19)
    last = plain.getvalue().splitlines()[-1]
    rate = float(last.split(", ")[-1].split()[0])
    assert last.startswith("datagen: 20/20 files (19 kept)") and "MB/s written" in last
    assert 50 <= rate <= 100                          # 100 MB in ~1 s; counting kept files says ~2000


# --------------------------------------------------------------------------- MPI


def test_two_mpi_ranks_write_the_same_dataset_as_local_processes(tmp_path, run_cli):
    cmd = [mpiexec(), "-n", "2", sys.executable, "-m", "suite", "datagen", "--workload", "cosmoflow",
           "--data-dir", str(tmp_path / "mpi"), "--files", 7, *COSMO]
    proc = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("wrote 7 of 7 files") == 1                       # rank 0 reports
    log = log_of(tmp_path / "mpi")
    assert log["mode"] == "mpi" and log["ranks"] == 2 and log["files_written"] == 7
    assert run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path / "local", "--files", 7, *COSMO)[0] == 0
    assert digests(tmp_path / "mpi") == digests(tmp_path / "local")
    assert datagen.scan(tmp_path / "mpi", resolved("cosmoflow", COSMO), deep=True).ok


# --------------------------------------------------------------------------- resume and interrupt


def test_rerun_keeps_complete_files_and_rewrites_broken_ones(run_cli, tmp_path):
    argv = ("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 5, *COSMO)
    assert run_cli(*argv)[0] == 0
    before = digests(tmp_path)
    paths = sorted((tmp_path / "train").iterdir())
    with open(paths[1], "r+b") as f:
        f.truncate(100)                                                        # truncated
    data = bytearray(paths[3].read_bytes())
    data[9] ^= 0x40                                                            # length CRC broken, same size
    paths[3].write_bytes(data)
    stale = tmp_path / "train" / f".{paths[0].name}.host.1.tmp"
    stale.write_bytes(b"half")
    assert len(datagen.scan(tmp_path, resolved("cosmoflow", COSMO), framing=False).problems) == 2
    problems = datagen.scan(tmp_path, resolved("cosmoflow", COSMO)).problems
    assert len(problems) == 3 and any("length CRC" in p for p in problems) and any("temp" in p for p in problems)
    code, out, _ = run_cli(*argv)
    assert code == 0 and "wrote 2 of 5 files (3 complete files kept)" in out
    assert digests(tmp_path) == before and not stale.exists()
    log = log_of(tmp_path)
    assert log["files_written"] == 2 and log["files_kept"] == 3


def _sigint_default():
    """The child starts with SIGINT at its default, as from a terminal: in the whole suite the
    pytest process had it ignored at this point once (inherited through exec, so datagen could not
    be interrupted and ran to its end), which is about the test's parent, not about datagen."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


@pytest.mark.parametrize("processes,group", [(1, False), (2, False), (2, True)])
def test_sigint_leaves_no_complete_looking_partial_file(tmp_path, processes, group):
    """SIGINT to the main process, or to its whole process group as a terminal's Ctrl-C does."""
    # many small files: per-file work keeps it running for seconds after the second file exists, where
    # 300 x 3 MB went through the page cache in 0.7 s once and ended before the signal arrived
    argv = ["--param", "dataset.record_length=200000", "--param", "dataset.record_length_stdev=0"]
    cmd = [sys.executable, "-m", "suite", "datagen", "--workload", "cosmoflow", "--data-dir", str(tmp_path),
           "--files", "4000", "--processes", str(processes), *argv]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            start_new_session=group, preexec_fn=_sigint_default)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list((tmp_path / "train").glob("img_*"))) < 2:
        time.sleep(0.02)
    try:
        masks = [ln.strip() for ln in open(f"/proc/{proc.pid}/status") if ln.startswith(("SigBlk", "SigIgn", "SigCgt"))]
    except OSError:
        masks = []
    if group:
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, (err, masks)
    names = os.listdir(tmp_path / "train")
    assert 2 <= len(names) < 4000 and not [n for n in names if n.endswith(".tmp")]
    scanned = datagen.scan(tmp_path, resolved("cosmoflow", argv))
    assert scanned.num_files == len(names)                                    # every file there is complete
    assert all(p.endswith("missing") for p in scanned.problems)


# --------------------------------------------------------------------------- scan


def test_scan_reports_missing_foreign_and_mismatched_data(run_cli, tmp_path):
    assert run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 4, *COSMO)[0] == 0
    w = resolved("cosmoflow", COSMO)
    good = datagen.scan(tmp_path, w, deep=True)
    assert good.ok and good.num_files == 4 and good.format == "tfrecord" and good.expected_files == 4
    paths = datagen.train_files(tmp_path, w, 4)
    paths[2].unlink()
    (tmp_path / "train" / "notes.txt").write_text("x")
    (tmp_path / "train" / "img_9_of_10.tfrecord").write_bytes(b"")
    bad = datagen.scan(tmp_path, w)
    assert not bad.ok and bad.num_files == 3 and bad.files == [paths[0], paths[1], paths[3]]
    text = "\n".join(bad.problems)
    assert "missing" in text and "foreign file" in text and "disagree on the number of files" in text
    other = datagen.scan(tmp_path, workloads.resolve("unet3d", "h100"))
    assert any("workload: expected unet3d, got cosmoflow" in p for p in other.problems) and other.num_files == 0


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("extra,needle", [
    (["--workload", "nope", "--files", "1"], "invalid choice"),
    (["--workload", "cosmoflow", "--accelerator-type", "tpu", "--files", "1"], "expected one of a100, h100"),
    (["--workload", "bert", "--files", "1"], "expected one of v100"),
    (["--workload", "cosmoflow", "--files", "0"], "positive integer"),
    (["--workload", "cosmoflow", "--files", "-3"], "positive integer"),
    (["--workload", "cosmoflow", "--processes", "0", "--files", "1"], "positive integer"),
    (["--workload", "cosmoflow", "--accelerators", "1", "--host-memory", "128"], "137.4GB"),
    (["--workload", "cosmoflow", "--accelerators", "1"], "expected both"),
    (["--workload", "cosmoflow", "--files", "2", "--accelerators", "1", "--host-memory", "1GiB"], "got both"),
    (["--workload", "cosmoflow"], "got neither"),
    (["--workload", "cosmoflow", "--files", "1", "--param", "dataset.colour=red"], "unknown key"),
    (["--workload", "cosmoflow", "--files", "1", "--param", "dataset.record_length=0"], "record_length"),
])
def test_bad_arguments_are_one_line_exit_2(run_cli, tmp_path, extra, needle):
    code, out, err = run_cli("datagen", "--data-dir", tmp_path, *extra)
    one_line_error(code, err, needle)
    assert not (tmp_path / "train").exists()


def test_refuses_to_mix_with_another_dataset(run_cli, tmp_path):
    assert run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 2, *COSMO)[0] == 0
    code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 3, *COSMO)
    one_line_error(code, err, "got 2 of another dataset")
    code, _, err = run_cli("datagen", "--workload", "unet3d", "--data-dir", tmp_path, "--files", 2, *UNET)
    one_line_error(code, err, "expected only img_<i>_of_2.npz files")
    assert len(list((tmp_path / "train").iterdir())) == 2


def test_scan_reports_an_unreadable_generation_log(run_cli, tmp_path):
    assert run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 2, *COSMO)[0] == 0
    (tmp_path / "generation_log.json").write_text("{not json")
    scanned = datagen.scan(tmp_path, resolved("cosmoflow", COSMO))
    assert scanned.num_files == 2 and len(scanned.problems) == 1 and "expected valid JSON" in scanned.problems[0]


def test_data_dir_that_is_a_file(run_cli, tmp_path):
    target = tmp_path / "f"
    target.write_text("x")
    one_line_error(*run_cli("datagen", "--workload", "cosmoflow", "--data-dir", target, "--files", 1)[::2],
                   "expected a directory, got a file")


@pytest.fixture
def tmpfs(tmp_path):
    """Mount real small tmpfs file systems under tmp_path (root only); unmounted afterwards."""
    mounted = []

    def mount(name, options):
        point = tmp_path / name
        point.mkdir()
        proc = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(point)], capture_output=True)
        if proc.returncode:
            pytest.skip(f"cannot mount tmpfs: {proc.stderr.decode().strip()}")
        mounted.append(point)
        return point

    yield mount
    for point in mounted:
        subprocess.run(["umount", "-l", str(point)], check=False)


def test_data_dir_not_writable(run_cli, tmpfs):
    point = tmpfs("ro", "ro,size=1m")
    one_line_error(*run_cli("datagen", "--workload", "cosmoflow", "--data-dir", point / "d", "--files", 1)[::2],
                   "expected a writable directory, got Read-only file system")


def test_disk_too_small_is_refused_before_writing(run_cli, tmpfs):
    point = tmpfs("small", "size=1m")
    one_line_error(*run_cli("datagen", "--workload", "cosmoflow", "--data-dir", point, "--files", 3)[::2],
                   "free space: expected at least")
    assert list((point / "train").iterdir()) == []


def test_disk_full_while_writing(run_cli, tmpfs):
    # 40 files of 4,116 B pass the byte-count check (165 KB < 256 KiB), but tmpfs spends
    # two 4 KiB pages on each, so the disk really fills up mid-run (ENOSPC).
    point = tmpfs("full", "size=256k")
    argv = ["--param", "dataset.record_length=4100", "--param", "dataset.record_length_stdev=0"]
    code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", point, "--files", 40,
                           "--processes", 2, *argv)
    one_line_error(code, err, "No space left on device (the file system is full)")
    assert not [p for p in (point / "train").iterdir() if p.name.endswith(".tmp")]
    scanned = datagen.scan(point, resolved("cosmoflow", argv))
    assert 0 < scanned.num_files < 40 and all(": missing" in p for p in scanned.problems)
