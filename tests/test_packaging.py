"""The package works when installed as a package: a wheel in a fresh venv, run outside the checkout.

The fresh venv gets only the wheel (no dependencies from the network): the test venv's
site-packages directory is appended to its path, so numpy & co. are found while `suite` itself can
only come from the wheel (a plain path entry does not run the editable install's .pth hook).
"""

import json
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import paths

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory):
    base = tmp_path_factory.mktemp("wheel")
    src = base / "src"  # build from a copy: a build leaves build/ and *.egg-info behind
    shutil.copytree(paths.REPO, src, symlinks=True,
                    ignore=shutil.ignore_patterns(".venv", ".git", "build", "dist", "*.egg-info",
                                                  "__pycache__", "results", ".suite-data", "tests"))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "-q", "-w", str(base / "dist"), str(src)], capture_output=True, text=True)
    assert build.returncode == 0, build.stderr[-2000:]
    wheel = next((base / "dist").glob("suite-*.whl"))
    venv = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                              "--no-deps", str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr[-2000:]
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "test-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return wheel, venv


def run_suite(venv, cwd, *argv):
    return subprocess.run([str(venv / "bin" / "suite"), *argv], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


def test_wheel_carries_the_data_files(wheel_venv):
    wheel, _ = wheel_venv
    names = zipfile.ZipFile(wheel).namelist()
    for needed in ("suite/data/workloads/unet3d.yaml", "suite/data/rules/v1.0/common.yaml",
                   "suite/training/schemas/workload.schema.json"):
        assert needed in names
    schemas = sorted(p.relative_to(paths.REPO).as_posix() for p in (paths.REPO / "suite").rglob("*.schema.json"))
    assert len(schemas) > 40 and "suite/schemas/check-result.schema.json" in schemas   # shared and each kind's own
    assert [s for s in schemas if s not in names] == []
    facts = sorted(p.relative_to(paths.REPO).as_posix() for p in (paths.REPO / "suite").glob("*/facts.yaml"))
    assert "suite/training/facts.yaml" in facts and "suite/vector_database/facts.yaml" in facts  # each kind's own
    assert [f for f in facts if f not in names] == [] and "suite/data/rules/facts.yaml" in names
    assert not [n for n in names if n.startswith(("tests/", "benchmarks/"))]


def test_installed_suite_runs_outside_the_checkout(wheel_venv, tmp_path):
    _, venv = wheel_venv
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import suite; print(suite.__file__)"],
                           cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert str(venv) in where and str(paths.REPO) not in where
    listed = run_suite(venv, tmp_path, "list", "workloads")
    assert listed.returncode == 0, listed.stderr
    assert "unet3d" in listed.stdout and "cosmoflow" in listed.stdout
    sized = run_suite(venv, tmp_path, "datasize", "--workload", "unet3d", "--accelerator-type", "h100",
                      "--accelerators", "8", "--client-hosts", "2", "--host-memory", "128GiB", "--format", "json")
    assert sized.returncode == 0, sized.stderr
    assert json.loads(sized.stdout)["num_files"] == 28000


def test_installed_suite_checks_a_fixture(wheel_venv, tmp_path):
    _, venv = wheel_venv
    fixture = paths.DATA / "check" / "valid" / "dlio-unet3d-h100"
    checked = run_suite(venv, tmp_path, "check", str(fixture), "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr
    assert json.loads(checked.stdout)["benchmarks"]


def _requirements() -> dict[str, list[str]]:
    """setup.cfg's install_requires and extras: {"install_requires" | extra: [distribution names]}."""
    import configparser
    import re

    cfg = configparser.ConfigParser()
    cfg.read(paths.REPO / "setup.cfg")
    def names(text):
        return [re.split(r"[<>=!~ \[;]", line.strip(), maxsplit=1)[0] for line in text.splitlines()
                if line.strip() and not line.strip().startswith("#")]
    out = {"install_requires": names(cfg["options"]["install_requires"])}
    out.update({extra: names(text) for extra, text in cfg["options.extras_require"].items()})
    return out


# distribution -> the module it is imported as (where the two differ); mpich is imported as nothing:
# it provides the mpiexec binary that suite/training/run/launch.py runs
IMPORT_NAME = {"PyYAML": "yaml", "scikit-learn": "sklearn", "xgboost-cpu": "xgboost", "mpich": None}


def test_every_declared_dependency_is_imported_somewhere():
    import ast

    imported = set()
    for path in (paths.REPO / "suite").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                imported.add(node.module.split(".")[0])
    reqs = _requirements()
    declared = reqs["install_requires"] + reqs["tpcx-ai"] + reqs["s3"] + reqs["dask"]
    unused = [d for d in declared if IMPORT_NAME.get(d, d) is not None and IMPORT_NAME.get(d, d) not in imported]
    assert unused == []


def test_the_tpcx_ai_extra_is_what_its_error_names_and_the_test_extra_holds_it():
    from suite.tpcx_ai import extra

    reqs = _requirements()
    assert sorted(reqs["tpcx-ai"]) == sorted(extra.MODULES.values())
    assert set(reqs["tpcx-ai"]) <= set(reqs["test"])
    assert not set(reqs["tpcx-ai"]) & set(reqs["install_requires"])
    assert "'.[tpcx-ai]'" in extra.INSTALL
