"""One data location per command: --data-dir becomes a location and its backend once, where the command
starts (suite.storage.backend.select.resolve, counted in RESOLVED), and that object is passed down to the
scan, the generator, the file-system separation probe and the cache clear."""

from pathlib import Path

import pytest

from suite.training.data import datagen
from suite.training import workloads
from suite.storage.backend import select
from suite.storage.backend.select import DataLocation, ObjectLocation, RESOLVED, resolve

COSMO = ["--param", "dataset.record_length=3000", "--param", "dataset.record_length_stdev=700"]
FAST = ["--param", "train.epochs=1", "--param", "train.computation_time=0.001", "--param", "reader.read_threads=2"]


class Resolutions:
    def __enter__(self):
        self.start = RESOLVED.count
        return self

    def __exit__(self, *exc):
        self.count = RESOLVED.count - self.start


def test_a_location_is_resolved_once_and_passed_as_it_is(tmp_path):
    with Resolutions() as r:
        data = resolve(tmp_path, workloads.resolve("unet3d", "h100"))
        assert resolve(data) is data and resolve(data, storage_type="object") is data
    assert r.count == 1
    assert isinstance(data, DataLocation) and data.root == tmp_path and not data.is_object
    assert data / "train" == tmp_path / "train" and str(data) == str(tmp_path)
    with pytest.raises(TypeError):
        Path(data)                                     # never taken for a local path by accident
    s3 = resolve("s3://bucket/prefix")
    assert s3.is_object and isinstance(s3.root, ObjectLocation) and s3.backend.storage_type == "object"


def test_scan_and_generate_use_the_location_they_are_given(tmp_path):
    wl = workloads.resolve("cosmoflow", "h100", workloads.parse_params([p for p in COSMO if p != "--param"]))
    data = resolve(tmp_path, wl)
    with Resolutions() as r:
        datagen.generate(wl, data, 3, processes=1)
        scan = datagen.scan(data, wl)
    assert r.count == 0 and scan.ok and scan.num_files == 3


def test_suite_datagen_resolves_its_data_dir_once(run_cli, tmp_path):
    with Resolutions() as r:
        code, _, err = run_cli("datagen", "--workload", "cosmoflow", "--data-dir", tmp_path, "--files", 4, *COSMO)
    assert code == 0, err
    assert r.count == 1


def test_suite_run_resolves_its_data_dir_once(run_cli, tmp_path):
    """A v3.0 run (warm-up + 1): the scan, the separation probe before and after each run, the cache clear
    and the evidence all go through the one location prepare resolved."""
    wl = workloads.resolve("retinanet", "b200")
    data = tmp_path / "data"
    datagen.generate(wl, data, 24, processes=1)
    with Resolutions() as r:
        code, out, err = run_cli("run", "--workload", "retinanet", "--accelerator-type", "b200", "--accelerators", 1,
                                 "--ruleset", "v3.0", "--data-dir", data, "--results-dir", tmp_path / "res",
                                 "--division", "open", "--runs", 1, "--allow-no-cache-drop", *FAST)
    assert code == 1, err                              # open, data and results on one file system
    assert "[run 2/2]" in out
    assert r.count == 1


def test_no_backend_of_the_data_location_is_made_outside_resolve():
    """for_workload is gone: a data location's backend comes from resolve (backend_for stays for results
    dirs, rank-side backends and the checkpoint manifest)."""
    assert not hasattr(select, "for_workload")
    suite_dir = Path(select.__file__).resolve().parents[2]
    users = [p for p in suite_dir.rglob("*.py") if "as_location(" in p.read_text(encoding="utf-8")]
    assert sorted(p.relative_to(suite_dir).as_posix() for p in users) == [
        "checkpointing/run.py", "storage/backend/select.py"]
