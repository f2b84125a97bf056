"""The bounded YAML loader: suite.files.load_yaml's contract (size limit, UTF-8, one-line
errors) with libyaml when present, and a nesting limit checked before parsing (deep nesting
crashes libyaml instead of raising). The rule engine loads rules/ with it and suite.layouts.walker
loads result trees with it, so it sits here, below both.
"""

import re
from pathlib import Path

from suite import files
from suite.errors import ResultError

MAX_NESTING = 256          # brackets; libyaml overflows its C stack on ~100k-deep flow nesting
MAX_INDENT = 1024          # columns of block indentation


def _nesting(text: str) -> tuple[int, int]:
    """(deepest [/{ nesting, widest leading indentation) of a YAML/JSON text, without parsing it."""
    depth = deepest = 0
    for m in re.finditer(r"[\[\]{}]", text):
        depth += 1 if m.group() in "[{" else -1
        deepest = max(deepest, depth)
    indent = max(map(len, re.findall(r"(?m)^ +", text)), default=0)
    return deepest, indent


def load_yaml_fast(path: Path, error=ResultError):
    """One YAML document from `path`, bounded (see the module); failures raise `error`, one line."""
    import yaml

    text = files.read_text(path, error=error)
    deepest, indent = _nesting(text)
    if deepest > MAX_NESTING or indent > MAX_INDENT:
        raise error(f"{path}: nesting: expected at most {MAX_NESTING} levels and {MAX_INDENT} columns, "
                    f"got {deepest} levels and {indent} columns")
    return files.parse_yaml(text, path, error, getattr(yaml, "CSafeLoader", yaml.SafeLoader))
