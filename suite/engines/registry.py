"""The engines `suite` can drive, each pinned, each in a venv of its own: the machinery (the Engine
record, where an engine lives, install, locate). The entries are the kinds': each kind that drives an
engine declares it in its folder (suite/<kind>/engines.py, a tuple ENGINES of Engine records), and
suite.kinds.registry adds them here when it registers the kind, so this module names none of them.
`suite engine install NAME` and `suite engine list` (suite/engines/cli.py) take whatever was added.

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
    download: str = "a few hundred MB"   # what an install fetches from PyPI, as the missing engine's error says
    shims: tuple = ()     # (name, script text) written to the venv's bin/ after the packages (`{python}`: its python)

    @property
    def install_command(self) -> str:
        return f"suite engine install {self.name}"


# Our own runner, built in; every other engine is a kind's, declared beside it (suite/<kind>/engines.py's
# ENGINES) and added here when suite.kinds.registry registers the kind (`add`; `remove` takes it back).
ENGINES: dict[str, Engine | None] = {"suite": None}


def engines_dir() -> Path:
    env = os.environ
    if env.get("SUITE_ENGINES_DIR"):
        return Path(env["SUITE_ENGINES_DIR"])
    base = Path(env["XDG_DATA_HOME"]) if env.get("XDG_DATA_HOME") else Path.home() / ".local" / "share"
    return base / "suite" / "engines"


def add(eng: Engine) -> None:
    """A kind's engine joins the registry (suite.kinds.registry, when it registers the kind)."""
    if eng.name in ENGINES:
        raise ValueError(f"engine {eng.name!r} is registered already")
    ENGINES[eng.name] = eng


def remove(name: str) -> None:
    if ENGINES.get(name) is not None:
        del ENGINES[name]


def names() -> list[str]:
    """The engines a kind brought (not our own runner), in the order the kinds were registered."""
    return [k for k, v in ENGINES.items() if v is not None]


def engine(name) -> Engine:
    """The engine named `name` (or the Engine record itself, as its kind holds it)."""
    if isinstance(name, Engine):
        return name
    if name not in ENGINES or ENGINES[name] is None:
        raise SuiteError(f"engine: expected one of {', '.join(names())}, got {name!r}")
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


def require(name) -> tuple[Engine, Path]:
    """(engine, its venv) or a one-line error saying how to install it (`name`: a name or the record)."""
    eng = engine(name)
    if installed(eng) is None:
        where = venv_dir(eng)
        state = "an incomplete install" if where.exists() else "nothing"
        raise SuiteError(f"engine {eng.name}: expected {eng.name} {eng.version} installed in {where}, got {state} "
                         f"(run: {eng.install_command}; {eng.download} from PyPI)")
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
    write_shims(where, eng)
    doc = {"engine": name, "version": eng.version, "first": list(eng.first), "packages": list(eng.packages),
           "python": python, "installed_unix_s": time.time(), "duration_s": round(time.time() - t0, 1)}
    tmp = where / (MARKER + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True))
    os.replace(tmp, where / MARKER)
    say(f"engine {name}: {eng.version} installed in {where} in {doc['duration_s']:.0f} s")
    return where


def write_shims(where: Path, eng: Engine) -> None:
    """The engine's shims in its venv's bin/ (Engine.shims: what the engine calls that its packages lack),
    each made executable, `{python}` in its text the venv's interpreter."""
    for name, text in eng.shims:
        path = where / "bin" / name
        path.write_text(text.format(python=where / "bin" / "python"))
        path.chmod(0o755)


def _base_python() -> str:
    """The interpreter the engine's venv is made from: the base of ours (a venv in a venv works too,
    but its base is what `venv` copies)."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return base if os.path.exists(base) else sys.executable
