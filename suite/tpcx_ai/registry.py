"""Where the driver finds table groups, use-case modules and use-case definitions.

The defaults are the real ones: table groups `suite.tpcx_ai.tables.<group>` (each with `GROUP`),
use cases `suite.tpcx_ai.usecases.ucNN` defined by `workloads/tpcx-ai/ucNN.yaml`. A group or use
case whose module is not installed is simply absent (the driver says which use cases cannot run).
Tests give their own Registry (module names on sys.path and a directory of YAML files); it travels
to job processes on their command line, so nothing is read from the environment.
"""

import importlib
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from suite import files

GROUPS = ("retail", "text", "signals")
USE_CASES = tuple(range(1, 11))


def default_group_modules() -> tuple[str, ...]:
    return tuple(f"suite.tpcx_ai.tables.{g}" for g in GROUPS)


def workload_dir() -> Path:
    return files.data_dir("workloads") / "tpcx-ai"


def rules_dir() -> Path:
    return files.data_dir("rules") / "tpcx-ai"


def _present(module: str) -> bool:
    """Whether a module (or the module of "module:object") is installed, without importing it."""
    module = module.split(":", 1)[0]
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:   # a parent package is missing
        return False


@dataclass(frozen=True)
class Registry:
    group_modules: tuple[str, ...] = field(default_factory=default_group_modules)
    usecase_modules: tuple[tuple[int, str], ...] = ()   # overrides of suite.tpcx_ai.usecases.ucNN
    workloads: str | None = None                      # a directory of ucNN.yaml; None: the package's
    rules: str | None = None                          # a directory of thresholds.yaml, streams.yaml
    paths: tuple[str, ...] = ()                        # extra import paths (tests), given to job processes

    def usecase_module(self, number: int) -> str:
        return dict(self.usecase_modules).get(number, f"suite.tpcx_ai.usecases.uc{number:02d}")

    def workload_dir(self) -> Path:
        return Path(self.workloads) if self.workloads else workload_dir()

    def rules_dir(self) -> Path:
        return Path(self.rules) if self.rules else rules_dir()

    def workload_file(self, number: int) -> Path:
        return self.workload_dir() / f"uc{number:02d}.yaml"

    def groups(self) -> list:
        """The TableGroup of every group module that is installed, in order."""
        self.activate()
        return [importlib.import_module(m).GROUP for m in self.group_modules if _present(m)]

    def missing_groups(self) -> list[str]:
        self.activate()
        return [m for m in self.group_modules if not _present(m)]

    def available_use_cases(self) -> list[int]:
        """Use cases with both a definition file and an installed module."""
        self.activate()
        return [n for n in USE_CASES if self.workload_file(n).is_file() and _present(self.usecase_module(n))]

    def activate(self) -> None:
        """Make `paths` importable in this process."""
        import sys

        for p in self.paths:
            if p not in sys.path:
                sys.path.insert(0, p)


def import_object(name: str):
    """A module, or an object in one ("package.module:Object")."""
    module, _, attr = name.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, attr) if attr else obj
