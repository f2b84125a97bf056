"""Fixtures the hostile corpora share."""

from __future__ import annotations

import shutil

import pytest

from suite.harness import provenance


@pytest.fixture(scope="module")
def modified(tmp_path_factory) -> dict:
    """The code record a run made by a modified checkout writes: this package with one line changed (made
    once a session for every xdist worker: tests/conftest.py `once`)."""
    from tests.conftest import once

    return once(tmp_path_factory, "hostile-modified", _modified)


def _modified(tmp_path_factory) -> dict:
    copy = tmp_path_factory.mktemp("modified") / "suite"
    for rel, src in provenance.code_files(provenance.package_root()):
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, copy / rel)
    (copy / "numbers.py").write_text((copy / "numbers.py").read_text() + "\nTAMPERED = True\n")
    image = provenance.code_image(copy, under=provenance.IMAGE_DIR)
    assert image["hash"] != provenance.for_run()["hash"]
    return {"schema_version": 1, **image}


@pytest.fixture(scope="session")
def tpcx_toy_run(tmp_path_factory):
    """A real TPCx-AI run of the toy kit (tests/tpcx_ai/tpcx_toy.py: the driver through `suite run`'s own
    TPCx-AI path, use cases 2 and 3, SF 0.01; a subset: INVALID, exit 1), made once a session for every
    xdist worker (tests/conftest.py `once`), shared by test_lies_tpcx_provenance and test_writes_corpus:
    read it as it is, copy before changing anything (its data lie beside it, not in it)."""
    from tests.conftest import once

    return once(tmp_path_factory, "hostile-tpcx-toy-run", _tpcx_toy_run)


def _tpcx_toy_run(tmp_path_factory):
    import subprocess
    import sys
    from pathlib import Path

    toy = Path(__file__).resolve().parents[1] / "tpcx_ai" / "tpcx_toy.py"
    tmp = tmp_path_factory.mktemp("tpcx-toy")
    p = subprocess.run([sys.executable, str(toy), str(tmp), "--scale-factor", "0.01", "--use-cases", "2,3",
                        "--results-dir", str(tmp / "r"), "--data-dir", str(tmp / "d"), "--processes", "1",
                        "--seed", "5"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 1 and (tmp / "r" / "tpcxai-result.json").is_file(), p.stderr[-2000:]
    return tmp / "r"
