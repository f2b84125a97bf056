"""storage.storage_type (the workload file, or --param) selects the backend: POSIX types the POSIX
backend; object storage (s3, object) the S3 backend, which takes an s3://bucket/prefix location only:
a local path with an object type, or a URL of another scheme, is a one-line refusal (exit 2)."""

import pytest

from suite import cli
from suite.errors import SuiteError
from suite.training import workloads
from suite.storage.backend.posix import PosixBackend
from suite.storage.backend.s3 import S3Backend
from suite.storage.backend.select import backend_for, check_storage_type, resolve, storage_type_of


@pytest.mark.parametrize("kind", ["local_fs", "parallel_fs", "posix", "local", None])
def test_posix_types_select_the_posix_backend(tmp_path, kind):
    b = backend_for(kind, tmp_path)
    assert isinstance(b, PosixBackend) and b.root == str(tmp_path) and b.storage_type == (kind or "local_fs")


@pytest.mark.parametrize("kind", ["s3", "object", None, "local_fs"])
def test_an_s3_location_selects_the_s3_backend(kind):
    b = backend_for(kind, "s3://bench/u3")
    assert isinstance(b, S3Backend) and (b.bucket, b.prefix) == ("bench", "u3")
    assert b.storage_type == (kind if kind in ("s3", "object") else "object")


@pytest.mark.parametrize("kind", ["s3", "object"])
def test_object_storage_on_a_local_path_is_refused_in_one_line(tmp_path, kind):
    with pytest.raises(SuiteError) as err:
        backend_for(kind, tmp_path)
    assert str(err.value) == (f"storage.storage_type {kind}: expected the data location as s3://bucket/prefix, "
                              f"got the local path {str(tmp_path)!r}")
    with pytest.raises(SuiteError):
        check_storage_type("nfs4")
    with pytest.raises(SuiteError, match="the scheme 'gs' is not supported"):
        backend_for(kind, "gs://b/p")


@pytest.mark.parametrize("command", ["run", "datagen"])
def test_the_workload_parameter_is_refused_before_anything_is_written(tmp_path, capsys, command):
    argv = [command, "--workload", "unet3d", "--data-dir", str(tmp_path / "d"), "--param", "storage.storage_type=s3"]
    argv += ["--accelerators", "1", "--results-dir", str(tmp_path / "r")] if command == "run" else ["--files", "2"]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "storage.storage_type s3: expected" in err and "s3://bucket/prefix" in err
    assert err.count("\n") == 1 and not (tmp_path / "d").exists() and not (tmp_path / "r").exists()


def test_the_workload_file_names_the_type():
    unet = workloads.resolve("unet3d", "h100")
    assert storage_type_of(unet) == "local_fs"                 # workloads/unet3d.yaml
    assert storage_type_of(workloads.resolve("unet3d", "h100", {"storage.storage_type": "parallel_fs"})) == "parallel_fs"
    assert resolve("/d", unet).backend.storage_type == "local_fs"
    with pytest.raises(SuiteError, match="expected the data location as s3://bucket/prefix"):
        resolve("/d", workloads.resolve("unet3d", "h100", {"storage.storage_type": "s3"}))
    assert isinstance(resolve("s3://b/p", workloads.resolve("unet3d", "h100", {"storage.storage_type": "object"}))
                      .backend, S3Backend)
