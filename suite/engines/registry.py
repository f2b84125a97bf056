"""The engines `suite` can drive, each pinned, each in a venv of its own.

Location: $SUITE_ENGINES_DIR, else $XDG_DATA_HOME/suite/engines, else ~/.local/share/suite/engines;
the engine's venv is <that>/<name>-<version>/ and holds `suite-engine.json` once complete (an
interrupted install leaves no marker, so it is never used and the next install starts over).
"""

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from suite.errors import SuiteError

MARKER = "suite-engine.json"


@dataclass(frozen=True)
class Engine:
    name: str
    version: str
    description: str
    first: tuple          # installed with --no-deps (its own requirements pull DALI and CUDA torch)
    packages: tuple       # then these, pinned (the TensorFlow-CPU path: PyPI alone, no GPU stack)
    executable: str       # the console script in the venv's bin/
    framework: str        # what results.json records as the framework path used

    @property
    def install_command(self) -> str:
        return f"suite engine install {self.name}"


# Pins: what `pip install` resolved on 2026-11-22 for CPython 3.11 (x86_64 manylinux wheels).
DLIO = Engine(
    name="dlio", version="2.0.0",
    description="DLIO, the MLPerf Storage reference benchmark (dlio_benchmark on PyPI), TensorFlow-CPU path",
    first=("dlio_benchmark==2.0.0",),
    packages=("mpich==5.0.2", "mpi4py==4.1.2", "hydra-core==1.3.8", "omegaconf==2.3.1", "pandas==3.1.1",
              "psutil==7.2.2", "h5py==3.14.0", "Pillow==13.0.0", "PyYAML==6.0.3", "numpy==2.4.6",
              "pydftracer==1.0.2", "tensorflow-cpu==2.21.0"),
    executable="dlio_benchmark",
    framework="tensorflow (tensorflow-cpu), reader.data_loader=tensorflow",
)
# The vector_database engines (suite/vector_database/worker.py runs in their venv). Pins: what `pip install`
# resolved on 2026-11-25 for CPython 3.11; diskannpy 0.7.0 pins numpy < 2, pymilvus 2.3.x needs
# setuptools < 70 and marshmallow < 4 (environs 9), so neither can share our environment.
DISKANN = Engine(
    name="diskann", version="0.7.0",
    description="DiskANN (diskannpy on PyPI): the embedded disk-resident index, no server",
    first=("diskannpy==0.7.0",), packages=("numpy==1.25.0",),
    executable="python", framework="diskannpy StaticDiskIndex (libaio reads of the index file)")
MILVUS = Engine(
    name="milvus", version="2.3.5",
    description="Milvus 2.3.5 standalone, embedded (the milvus PyPI package), and its client pymilvus 2.3.8",
    first=("milvus==2.3.5", "pymilvus==2.3.8"),
    packages=("setuptools==69.5.1", "marshmallow==3.26.2", "environs==9.5.0", "grpcio==1.60.0",
              "protobuf==7.36.2", "numpy==2.4.6", "pandas==3.1.1", "ujson==6.1.0", "minio==7.2.20",
              "requests==2.34.2", "azure-storage-blob==12.31.1", "python-dotenv==1.2.4", "pyarrow==26.0.1"),
    executable="milvus-server", framework="pymilvus Collection.search against the milvus server")
ENGINES = {"suite": None, "dlio": DLIO, "diskann": DISKANN, "milvus": MILVUS}   # None: our own runner


SIZES = {"dlio": "about 1.7 GB", "diskann": "about 400 MB", "milvus": "about 500 MB"}


def engines_dir() -> Path:
    env = os.environ
    if env.get("SUITE_ENGINES_DIR"):
        return Path(env["SUITE_ENGINES_DIR"])
    base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else Path.home() / ".local" / "share"
    return base / "suite" / "engines"


def engine(name: str) -> Engine:
    if name not in ENGINES or ENGINES[name] is None:
        raise SuiteError(f"engine: expected one of {', '.join(k for k, v in ENGINES.items() if v)}, got {name!r}")
    return ENGINES[name]


def venv_dir(eng: Engine) -> Path:
    return engines_dir() / f"{eng.name}-{eng.version}"


def installed(eng: Engine) -> dict | None:
    """The marker of a complete install (what was installed, when), else None."""
    path = venv_dir(eng) / MARKER
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("version") != eng.version:
        return None
    if not (venv_dir(eng) / "bin" / eng.executable).is_file():
        return None
    return doc


def require(name: str) -> tuple[Engine, Path]:
    """(engine, its venv) or a one-line error saying how to install it."""
    eng = engine(name)
    if installed(eng) is None:
        where = venv_dir(eng)
        state = "an incomplete install" if where.exists() else "nothing"
        raise SuiteError(f"engine {eng.name}: expected {eng.name} {eng.version} installed in {where}, got {state} "
                         f"(run: {eng.install_command}; {SIZES.get(eng.name, 'a few hundred MB')} from PyPI)")
    return eng, venv_dir(eng)


def rows() -> list[dict]:
    """`suite engine list`: one row per engine."""
    out = [{"engine": "suite", "version": "built in", "status": "ready", "path": "(this package)"}]
    for name, eng in ENGINES.items():
        if eng is None:
            continue
        where = venv_dir(eng)
        doc = installed(eng)
        status = "installed" if doc else ("incomplete" if where.exists() else f"not installed ({eng.install_command})")
        out.append({"engine": name, "version": eng.version, "status": status, "path": str(where)})
    return out


def install(name: str, python: str | None = None, say=print) -> Path:
    """Build the engine's venv (idempotent: a complete install is kept). Returns its path."""
    eng = engine(name)
    where = venv_dir(eng)
    if installed(eng):
        say(f"engine {name}: {eng.version} already installed in {where}")
        return where
    if where.exists():
        say(f"engine {name}: removing an incomplete install in {where}")
        shutil.rmtree(where)
    where.parent.mkdir(parents=True, exist_ok=True)
    python = python or _base_python()
    t0 = time.time()
    steps = [[python, "-m", "venv", str(where)],
             [str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", *eng.first],
             [str(where / "bin" / "python"), "-m", "pip", "install", "-q", *eng.packages]]
    for argv in steps:
        say("engine " + name + ": " + " ".join(argv))
        rc = subprocess.call(argv, stdin=subprocess.DEVNULL)
        if rc != 0:
            raise SuiteError(f"engine {name}: {' '.join(argv[:4])} ...: expected exit 0, got {rc} "
                             f"(the partial venv in {where} is replaced by the next install)")
    write_shims(where)
    doc = {"engine": name, "version": eng.version, "first": list(eng.first), "packages": list(eng.packages),
           "python": python, "installed_unix_s": time.time(), "duration_s": round(time.time() - t0, 1)}
    tmp = where / (MARKER + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True))
    os.replace(tmp, where / MARKER)
    say(f"engine {name}: {eng.version} installed in {where} in {doc['duration_s']:.0f} s")
    return where


TFRECORD2IDX = '''#!{python}
"""tfrecord2idx, as DALI's (which the TensorFlow-CPU path lacks; DLIO 2.0.0 calls it after writing
each TFRecord file): one line "<offset> <record bytes>" per record. Written by suite engine install."""
import struct
import sys

with open(sys.argv[1], "rb") as f, open(sys.argv[2], "w") as out:
    offset = 0
    while True:
        head = f.read(12)
        if len(head) < 12:
            break
        (length,) = struct.unpack("<Q", head[:8])
        f.seek(length + 4, 1)
        out.write(f"{{offset}} {{length + 16}}\\n")
        offset += length + 16
'''


def write_shims(where: Path) -> None:
    """bin/tfrecord2idx in the engine's venv (DLIO's TFRecord generator needs it; DALI is not installed)."""
    path = where / "bin" / "tfrecord2idx"
    path.write_text(TFRECORD2IDX.format(python=where / "bin" / "python"))
    path.chmod(0o755)


def _base_python() -> str:
    """The interpreter the engine's venv is made from: the base of ours (a venv in a venv works too,
    but its base is what `venv` copies)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return base if os.path.exists(base) else sys.executable
