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
