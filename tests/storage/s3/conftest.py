"""The real local S3 server (versitygw, tools/s3-server.sh) for the object-storage tests: started once
per session on 127.0.0.1 with its own data dir and fresh keys, stopped at the end. Skipped, with the
reason, only where the Go toolchain to build it is missing (and no built binary is cached)."""

import os
import subprocess
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SCRIPT = REPO / "tools" / "s3-server.sh"
AWS_VARS = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION",
            "AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_DEFAULT_REGION")


def server(command: str, folder: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), command, "--dir", str(folder), *extra], capture_output=True,
                          text=True, timeout=600)


def read_env(folder: Path) -> dict:
    return dict(line.split("=", 1) for line in (folder / "env").read_text().splitlines() if "=" in line)


def start(folder: Path) -> dict:
    """Start a server in `folder`; its AWS environment. pytest.skip when Go is missing."""
    done = server("start", folder)
    if done.returncode != 0:
        if "the Go toolchain" in done.stderr:
            pytest.skip(done.stderr.strip())
        raise RuntimeError(f"tools/s3-server.sh start: {done.stderr.strip()}")
    return read_env(folder)


def use_env(env: dict) -> None:
    """Point this process (and what it starts) at one server: the AWS variables, nothing else from outside."""
    from suite.storage.backend import s3io

    for key in AWS_VARS:
        os.environ.pop(key, None)
    os.environ.update(env)
    os.environ["AWS_CONFIG_FILE"] = os.environ["AWS_SHARED_CREDENTIALS_FILE"] = os.devnull
    s3io._CLIENTS.clear()


@pytest.fixture(scope="session")
def s3_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("s3-server")
    saved = {k: os.environ.get(k) for k in (*AWS_VARS, "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")}
    env = start(folder)
    use_env(env)
    yield {"dir": folder, "env": env}
    server("stop", folder)
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture
def bucket(s3_server):
    """A new, empty bucket on the session's server, made with a plain boto3 call."""
    import boto3

    use_env(s3_server["env"])
    name = f"t-{uuid.uuid4().hex[:12]}"
    boto3.session.Session().client("s3").create_bucket(Bucket=name)
    return name
