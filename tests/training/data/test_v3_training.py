"""MLPerf Storage v3.0 training data: the workloads (retinanet, unet3d b200), JPEG records (real
files Pillow decodes, of the exact record length, distinct), datasize and datagen for them."""

import hashlib
import io

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from PIL import Image

from suite.errors import SuiteError
from suite.training.data import datagen, formats
from suite.training import workloads
from suite.training import datasize
from suite.storage.backend.posix import PosixBackend
from suite.training.data.dataset import file_problem


def _jpeg(tmp_path, record, index=0, seed=7):
    name = f"img_{index}.jpeg"
    with PosixBackend(tmp_path).create(name, atomic=False) as out:
        formats.write_jpeg(formats.Sink(out, formats.Content(seed), index), record, index)
        out.commit()
    return tmp_path / name


@pytest.mark.parametrize("accel,batch,compute,au", [("b200", 24, 0.04755, 0.85), ("mi355", 32, 0.0634, 0.85)])
def test_retinanet_v3_figures(accel, batch, compute, au):
    wl = workloads.resolve("retinanet", accel)
    assert (wl.format, wl.num_samples_per_file, wl.record_length_bytes) == ("jpeg", 1, 322957)
    assert (wl.batch_size, wl.computation_time_s, wl.au_threshold, wl.read_threads, wl.epochs) == (batch, compute, au, 8, 8)
    assert wl.rulesets == ("v3.0",) and wl.dlio_name == f"retinanet_{accel}"


def test_unet3d_b200_is_v3_and_h100_stays_v2():
    b200 = workloads.resolve("unet3d", "b200")
    assert (b200.batch_size, b200.computation_time_s, b200.au_threshold, b200.rulesets) == (7, 0.162, 0.9, ("v3.0",))
    assert workloads.resolve("unet3d", "h100").rulesets == ("v1.0", "v2.0")


def test_list_workloads_shows_the_v3_accelerators(run_cli):
    code, out, _ = run_cli("list", "workloads")
    assert code == 0
    assert any(line.split()[:3] == ["retinanet", "mi355", "v3.0"] for line in out.splitlines())


@pytest.mark.parametrize("record", [1024, 5000, 322957, 70000 + 65537 * 3, 2_000_000])
def test_jpeg_is_exact_size_and_decodes(tmp_path, record):
    path = _jpeg(tmp_path, record)
    data = path.read_bytes()
    assert len(data) == record and data[:3] == b"\xff\xd8\xff" and data[-2:] == b"\xff\xd9"
    with Image.open(io.BytesIO(data)) as image:
        image.load()
        assert image.format == "JPEG" and image.size[0] >= 8
    assert formats.check_jpeg(*_at(path), deep=True) is None


def _at(path):
    return PosixBackend(path.parent), path.name


def test_jpeg_files_differ_and_repeat_per_seed_and_index(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    digests = {hashlib.sha256(_jpeg(a, 322957, i).read_bytes()).hexdigest() for i in range(8)}
    assert len(digests) == 8
    assert _jpeg(b, 322957, 3).read_bytes() == (a / "img_3.jpeg").read_bytes()


def test_jpeg_below_the_smallest_is_refused():
    with pytest.raises(ValueError, match="expected at least"):
        formats.jpeg_base(formats.jpeg_size_class(100), 0)


def test_check_jpeg_names_truncation_and_a_broken_body(tmp_path):
    path = _jpeg(tmp_path, 50_000)
    data = path.read_bytes()
    path.write_bytes(data[:-10])
    assert "EOI" in formats.check_jpeg(*_at(path))
    path.write_bytes(b"\x00" + data[1:])
    assert "SOI" in formats.check_jpeg(*_at(path))
    broken = bytearray(data)
    broken[len(data) // 2 + 100:len(data) - 2] = b"\x00" * (len(data) // 2 - 102)
    path.write_bytes(bytes(broken))
    assert formats.check_jpeg(*_at(path)) is None          # framing only: cheap
    assert formats.jpeg_decode_problem(bytes(broken[:200])) is not None


def test_datagen_retinanet_writes_dlio_layout_and_scans_clean(tmp_path):
    wl = workloads.resolve("retinanet", "b200")
    log = datagen.generate(wl, tmp_path / "d", 12, processes=2)
    names = sorted(p.name for p in (tmp_path / "d" / "train").iterdir())
    assert names[0] == "img_00_of_12.jpeg" and len(names) == 12 and log["format"] == "jpeg"
    assert log["bytes"] == 12 * 322957
    scan = datagen.scan(tmp_path / "d", wl, deep=True)
    assert scan.ok and scan.num_files == 12
    victim = tmp_path / "d" / "train" / names[4]
    victim.write_bytes(victim.read_bytes()[:-1] + b"\x00")
    problem = file_problem(PosixBackend(tmp_path / "d"), f"train/{names[4]}", "jpeg", [322957], 1)
    assert problem and "EOI" in problem


def test_datasize_v3_retinanet_memory_rule_and_unknown_pairing():
    wl = workloads.resolve("retinanet", "b200")
    ds = datasize.compute(wl, 8, 1, 64 * 1024**3, "v3.0")
    assert ds.num_files == 5 * 64 * 1024**3 // 322957 and ds.dictated_by == "memory"
    steps = datasize.compute(wl, 1000, 1, 1024**3, "v3.0")
    assert steps.num_files == 500 * 1000 * 24 and steps.dictated_by == "steps"
    with pytest.raises(SuiteError, match="ruleset: expected one of v3.0"):
        datasize.compute(wl, 8, 1, 64 * 1024**3, "v2.0")


def test_datasize_and_datagen_accept_ruleset_v3(run_cli, tmp_path):
    code, out, err = run_cli("datasize", "--workload", "retinanet", "--accelerator-type", "mi355", "--accelerators", 2,
                             "--client-hosts", 1, "--host-memory", "1GiB", "--ruleset", "v3.0")
    assert code == 0, err
    assert "suite datagen --workload retinanet --accelerator-type mi355 --files 32000" in out
    code, out, err = run_cli("datagen", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                             "--host-memory", "1MiB", "--ruleset", "v3.0", "--param", "reader.batch_size=1",
                             "--param", "dataset.record_length=4000", "--data-dir", tmp_path / "d", "--processes", 1)
    assert code == 0, err
    assert len(list((tmp_path / "d" / "train").glob("*.jpeg"))) == 1310      # 5 x 1 MiB // 4000 > 500 steps


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(record=st.integers(min_value=formats.JPEG_MIN_BYTES, max_value=3_000_000), index=st.integers(0, 10**6))
def test_any_record_length_gives_an_exact_decodable_jpeg(tmp_path, record, index):
    path = _jpeg(tmp_path, record, index)
    data = path.read_bytes()
    assert len(data) == record and formats.jpeg_decode_problem(data) is None
