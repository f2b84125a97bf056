"""What `suite run --workload tpcx-ai` needs beyond `pip install .`: setup.cfg's `tpcx-ai` extra.

The ten use cases train with pandas, scikit-learn, xgboost, statsmodels and scipy (about 290 MB of
a venv); the storage benchmarks, the checker, metrics and reports need none of them, so they are an
extra. The driver calls `require()` before anything is written.
"""

import importlib.util

from suite.errors import SuiteError

INSTALL = "pip install '.[tpcx-ai]' in the checkout, README's set-up"
MODULES = {"pandas": "pandas", "sklearn": "scikit-learn", "xgboost": "xgboost-cpu",   # import name: distribution
           "statsmodels": "statsmodels", "scipy": "scipy"}


def missing() -> list[str]:
    """The distributions of the extra whose module cannot be found (without importing any)."""
    out = []
    for module, dist in MODULES.items():
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(dist)
    return out


def require() -> None:
    """One-line SuiteError (exit 2) naming the install command when a library of the extra is absent."""
    absent = missing()
    if absent:
        raise SuiteError(f"--workload tpcx-ai: expected the TPCx-AI libraries ({', '.join(MODULES.values())}), "
                         f"got {', '.join(absent)} not installed: {INSTALL}")
