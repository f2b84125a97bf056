"""datagen and training on s3:// end to end against the real local server (tools/s3-server.sh):
evidence, one listing per run whatever the ranks (real MPI), no key in anything written, refusals
before any run, throttling retried and counted (a real proxy), the server stopped mid-run."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.storage.s3.conftest import read_env, server, start, use_env
from tests.storage.s3.s3_proxy import Throttle

SMALL = ["--param", "dataset.record_length=200000", "--param", "dataset.record_length_stdev=50000"]
RUN = [*SMALL, "--param", "train.epochs=2", "--param", "train.computation_time=0.005", "--param",
       "checkpoint.model_size=1000000", "--division", "open", "--runs", "1", "--memory-limit", "256MiB"]


def datagen(run_cli, url, files=14, *extra):
    return run_cli("datagen", "--workload", "unet3d", "--files", files, "--data-dir", url, "--processes", 2,
                   *SMALL, *extra)


def every_file(*folders: Path):
    for folder in folders:
        for path in Path(folder).rglob("*"):
            if path.is_file():
                yield path


def test_datagen_and_training_on_s3_one_listing_whatever_the_ranks(bucket, s3_server, run_cli, tmp_path):
    secret = s3_server["env"]["AWS_SECRET_ACCESS_KEY"]
    code, out, err = datagen(run_cli, f"s3://{bucket}/u3")
    assert code == 0, err
    assert f"s3://{bucket}/u3/generation_log.json" in out
    log = json.loads((s3_server["dir"] / "data" / bucket / "u3" / "generation_log.json").read_text())
    assert log["storage"]["bucket"] == bucket and log["storage"]["requests"]["requests"]["PUT"] >= 14
    assert log["storage"]["requests"]["requests"]["LIST"] <= 3      # the top twice (refusals) and train/ once
    lists = {}
    for n in (1, 2):
        res = tmp_path / f"res{n}"
        code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", n, "--data-dir",
                                 f"s3://{bucket}/u3", "--results-dir", res, *RUN)
        assert code in (0, 1), err          # 1: not compliant (a miniature measurement), never a usage error
        doc = json.loads((res / "run-1" / "results.json").read_text())
        assert doc["status"] == "complete" and doc["dataset"]["data_dir"] == f"s3://{bucket}/u3"
        ev = doc["object_storage"]
        assert ev["bucket"] == bucket and ev["endpoint_host"].startswith("127.0.0.1:")
        assert ev["ranks_reporting"] == n and ev["requests"]["requests"]["GET"] >= 1
        assert ev["requests"]["bytes_read"] == doc["metric"]["bytes_read"]
        assert "GET" in ev["requests"]["latency"] and "object storage" in ev["cache_clear"]
        lists[n] = (ev["list_requests_launcher"], ev["list_requests_ranks"])
        for path in every_file(res):
            assert secret.encode() not in path.read_bytes(), path
        assert secret not in out + err
    assert lists == {1: (1, 0), 2: (1, 0)}
    for path in every_file(s3_server["dir"] / "data" / bucket):
        assert secret.encode() not in path.read_bytes(), path


def test_an_unsupported_scheme_is_one_line_and_makes_nothing(run_cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for url in ("ftp://bench/u3", "gs://bench/u3", "file:///tmp/x"):
        code, out, err = datagen(run_cli, url, 4)
        assert code == 2 and "is not supported" in err and len(err.strip().splitlines()) <= 2, err
    code, out, err = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", "ftp://bench/u3",
                             "--results-dir", tmp_path / "res", *RUN)
    assert code == 2 and "is not supported" in err and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []        # no directory 'ftp:', no results


@pytest.mark.parametrize("fault", ["wrong-key", "no-bucket", "unreachable"])
def test_bad_credentials_bucket_or_endpoint_are_refused_before_any_run(fault, bucket, s3_server, run_cli, tmp_path,
                                                                        monkeypatch):
    url = f"s3://{bucket}/u3"
    if fault == "wrong-key":
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-the-key")
    elif fault == "no-bucket":
        url = "s3://no-such-bucket-here/u3"
    else:
        monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")    # discard port: nothing listens
    from suite.storage.backend import s3io
    s3io._CLIENTS.clear()
    try:
        code, out, err = datagen(run_cli, url, 4)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        code2, _, err2 = run_cli("run", "--workload", "unet3d", "--accelerators", 1, "--data-dir", url,
                                 "--results-dir", tmp_path / "res", *RUN)
        assert code2 == 2 and len(err2.strip().splitlines()) == 1, err2
    finally:
        s3io._CLIENTS.clear()
    want = {"wrong-key": "access denied", "no-bucket": "no such bucket", "unreachable": "unreachable"}[fault]
    assert want in err and want in err2 and ("127.0.0.1:" in err)
    assert not (tmp_path / "res").exists()


def test_throttling_is_retried_and_counted(bucket, s3_server, run_cli, tmp_path, monkeypatch):
    """Every 4th request is answered 503 SlowDown by a real proxy in front of the real server."""
    from suite.storage.backend import s3io

    with Throttle(s3_server["env"]["AWS_ENDPOINT_URL"], every=4) as proxy:
        monkeypatch.setenv("AWS_ENDPOINT_URL", proxy.url)
        s3io._CLIENTS.clear()
        try:
            code, out, err = datagen(run_cli, f"s3://{bucket}/thr", 12, "--processes", 1)
        finally:
            s3io._CLIENTS.clear()
    assert code == 0, err
    log = json.loads((s3_server["dir"] / "data" / bucket / "thr" / "generation_log.json").read_text())
    retries = log["storage"]["requests"]["retries_total"]
    assert proxy.throttled >= 3 and retries >= proxy.throttled - 1   # the log's own PUT is after the count


def test_the_server_stopped_mid_run_fails_the_run_with_one_line(tmp_path, run_cli):
    """A server of its own (stopping the session's would stop the other tests). Its data written in this
    process; the run, stopped under it, a process of its own."""
    folder = tmp_path / "srv"
    env = start(folder)
    use_env(env)
    try:
        import boto3
        boto3.session.Session().client("s3").create_bucket(Bucket="mid")
        base = {**os.environ, **env, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
        cmd = [sys.executable, "-m", "suite"]
        code, _, err = datagen(run_cli, "s3://mid/u3")
        assert code == 0, err
        res = tmp_path / "res"
        run = [*cmd, "run", "--workload", "unet3d", "--accelerators", "2", "--data-dir", "s3://mid/u3",
               "--results-dir", str(res), *SMALL, "--param", "train.epochs=6", "--param", "train.computation_time=0.3",
               "--division", "open", "--runs", "1", "--memory-limit", "256MiB"]
        proc = subprocess.Popen(run, env=base, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        log = res / "run-1" / "dlio.log"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and "Starting epoch 2" not in (log.read_text() if log.exists() else ""):
            time.sleep(0.05)
        server("stop", folder)
        out, err = proc.communicate(timeout=120)
    finally:
        server("stop", folder)
    doc = json.loads((res / "run-1" / "results.json").read_text())
    assert doc["status"] == "failed" and env["AWS_ENDPOINT_URL"].split("//")[1] in doc["error"], doc["error"]
    assert "\n" not in doc["error"] and not (res / "run-1" / "summary.json").exists()
    assert proc.returncode != 0 and env["AWS_SECRET_ACCESS_KEY"] not in out + err


def test_a_checkpoint_write_and_read_on_s3(bucket, s3_server, tmp_path, run_cli):
    """The miniature llama3-8b layout (4 ranks, real MPI: the least a host may run; the
    closed 8 on s3:// are docs/object-storage.md's) written to s3:// and read back in a second invocation;
    the manifest goes through the backend; the checker reads both results."""
    from suite.checkpointing import run as checkpoint_run

    url = f"s3://{bucket}/ckpt"
    for phase, res in (("write", tmp_path / "w"), ("read", tmp_path / "r")):
        opts = checkpoint_run.Options(workload="llama3-8b", accelerators=4, checkpoints_write=int(phase == "write"),
                                      checkpoints_read=int(phase == "read"), data_dir=url, results_dir=str(res),
                                      runs=1, division="open", miniature=True)
        assert checkpoint_run.run(opts) == 0
        doc = json.loads((res / "run-1" / "results.json").read_text())
        ev = doc["object_storage"]
        kind = "PUT" if phase == "write" else "GET"
        assert doc["status"] == "complete" and ev["bucket"] == bucket and ev["ranks_reporting"] == 4
        assert ev["requests"]["requests"][kind] == doc["files_per_checkpoint"] and kind in ev["requests"]["latency"]
        code, out, err = run_cli("check", res)
        assert code in (0, 1) and "verdict:" in out, err
    assert (s3_server["dir"] / "data" / bucket / "ckpt" / "suite-checkpoint.json").is_file()
    assert not list(tmp_path.glob("**/s3:*"))


def test_datagen_under_mpi_lists_once_whatever_the_ranks(bucket, s3_server):
    """Two real MPI ranks: rank 0 makes the refusals' listing and the one of train/, the others none."""
    from tests.conftest import mpiexec

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    done = subprocess.run([mpiexec(), "-n", "2", sys.executable, "-m", "suite", "datagen", "--workload", "unet3d",
                           "--files", "6", "--data-dir", f"s3://{bucket}/mpi", *SMALL], env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    log = json.loads((s3_server["dir"] / "data" / bucket / "mpi" / "generation_log.json").read_text())
    assert log["ranks"] == 2 and log["storage"]["requests"]["requests"]["LIST"] == 2
    assert log["storage"]["requests"]["requests"]["HEAD"] == 1          # rank 0's one preflight


def test_parquet_on_s3_ranged_gets_of_the_needed_chunks_only(bucket, s3_server, run_cli):
    """dlrm-mini written to the server by `suite datagen`, read back by the column reader through the S3
    backend: ranged GETs of its 40 columns' chunks (within 10 % of their sizes), decoded as pyarrow's own."""
    import pyarrow.parquet as pq

    from suite.training.data import parquet
    from suite.training import workloads
    from suite.storage.backend.select import resolve
    from suite.training.data.parquet_read import ColumnReader

    code, out, err = run_cli("datagen", "--workload", "dlrm-mini", "--accelerator-type", "b200",
                             "--data-dir", f"s3://{bucket}/dm", "--files", "1")
    assert code == 0, err
    w = workloads.resolve("dlrm-mini", "b200")
    lay = parquet.layout(w)
    name = "train/img_0_of_1.parquet"
    on_disk = s3_server["dir"] / "data" / bucket / "dm" / name        # the server's own copy of the object
    decoded = []
    stats = ColumnReader(resolve(f"s3://{bucket}/dm", w).backend, lay.read_columns,
                         after_decode=decoded.append).read_file(name)
    meta = pq.read_metadata(on_disk)
    read = [j for j in range(meta.num_columns) if meta.schema.column(j).name in lay.read_columns]
    chunks = sum(meta.row_group(i).column(j).total_compressed_size for i in range(meta.num_row_groups) for j in read)
    assert chunks <= stats.bytes_read <= 1.10 * chunks and stats.rows == 65536
    want = pq.ParquetFile(on_disk).read_row_group(5, columns=list(lay.read_columns))
    assert decoded[5].column("feature_195").to_numpy().tobytes() == want.column("feature_195").to_numpy().tobytes()
