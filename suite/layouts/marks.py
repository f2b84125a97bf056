"""What marks a directory as one of a kind's results: the kind's result files (exact names, or fnmatch
patterns such as vector_database_*_metadata.json; a file's or a sub-folder's name), as the registry
tells this layer when it registers a kind (suite.kinds.registry._hook_up). The layouts read them here and
so name no kind. Which kind a directory marked by several kinds' files is (a kv_cache leaf holds a
summary.json too: run output, the catch-all's) is the registry's reading, handed down too (`kind_of`)."""

from __future__ import annotations

from fnmatch import fnmatchcase

RESULT_FILES: dict[str, tuple[str, ...]] = {}      # kind name -> its result files (patterns)
READER: list = []      # the registry's reading of a marked directory (suite.kinds.registry._marked_kind)


def add(name: str, patterns) -> None:
    RESULT_FILES[name] = tuple(patterns)


def remove(name: str) -> None:
    RESULT_FILES.pop(name, None)


def marks(names: set, patterns) -> bool:
    """A directory's names include one of a kind's result files (exact names, or fnmatch patterns)."""
    return bool(names & set(patterns)) or any(fnmatchcase(n, p) for p in patterns if "*" in p for n in names)


def any_kind(names: set) -> bool:
    """The names include some registered kind's result file: the directory is a result, not a tree of them."""
    return any(marks(names, patterns) for patterns in RESULT_FILES.values() if patterns)


def kinds_of(names: set) -> set[str]:
    """The registered kinds whose result files the names include."""
    return {kind for kind, patterns in RESULT_FILES.items() if patterns and marks(names, patterns)}


def kind_of(d, names: set) -> str | None:
    """The kind (or kinds, joined by "+") a directory holding `names` is a result of, as the registry
    reads it (a kind's own result files outrank the catch-all's run output); None where none marks it."""
    if READER:
        return READER[0](d, names)
    kinds = sorted(kinds_of(names))
    return "+".join(kinds) or None
