"""A real PostgreSQL server for the history tests (tools/postgres.sh: a throwaway one on 127.0.0.1),
one database per test; the tests that need it skip, saying why, where the binaries or psycopg are absent."""

import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

import paths


@pytest.fixture(scope="session")
def postgres_server():
    if not list(Path("/usr/lib/postgresql").glob("*/bin/pg_ctl")):
        pytest.skip("PostgreSQL binaries absent (apt-get install postgresql-15: tools/install-debian-packages.sh)")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        pytest.skip("psycopg absent (pip install -e '.[history-pg]')")
    where = Path(tempfile.mkdtemp(prefix="suite-pg-"))
    os.chmod(where, 0o755)              # the server runs as its own user
    script = str(paths.REPO / "tools" / "postgres.sh")
    out = subprocess.run([script, "start", str(where)], capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        shutil.rmtree(where, ignore_errors=True)
        pytest.fail(f"tools/postgres.sh start: {out.stderr.strip()}")
    yield out.stdout.strip()
    subprocess.run([script, "stop", str(where)], capture_output=True, timeout=120)
    shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server):
    """A new, empty database on the server."""
    import psycopg

    name = "h_" + uuid.uuid4().hex[:12]
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return postgres_server.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(params=["sqlite", "postgresql"])
def store_location(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "history.sqlite")
    return request.getfixturevalue("postgres_url")
