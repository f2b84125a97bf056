"""`suite submission init`: the ruleset's layout and a system description pre-filled from this host."""

from __future__ import annotations

from pathlib import Path

import yaml

from suite import __version__, files
from suite.errors import SuiteError, expected_got
from suite.submission import host, system as sysdesc
from suite.submission.layout import MARKER, Tree, check_name, marker_doc, open_tree


def _dump(doc: dict, ext: str) -> str:
    if ext == "json":
        return files.dump_json(doc, indent=2)
    return yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def tree_for_init(root, org: str, division: str, system: str, ruleset: str) -> tuple[Tree, Path]:
    """The tree `init` adds a system to (an existing one of the same org/division/ruleset, or a new one
    at an empty or new `root`) and the system file it will write (refused when it exists)."""
    check_name("org", org)
    check_name("system", system)
    root = Path(root)
    if (root / MARKER).is_file():
        tree = open_tree(root)
        for key, want in (("org", org), ("division", division), ("ruleset", ruleset)):
            if getattr(tree, key) != want:
                raise SuiteError(expected_got(root / MARKER, key, f"{want!r} (as given)", repr(getattr(tree, key))))
    elif root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise SuiteError(expected_got(root, "DIR", "a new or empty directory, or a submission tree",
                                      "a file" if not root.is_dir() else "a non-empty directory without " + MARKER))
    else:
        tree = Tree(root=root, ruleset=ruleset, division=division, org=org)
    target = tree.system_file(system)
    if target.exists() or target.is_symlink():
        raise SuiteError(expected_got(target, "file", "a new system description", "an existing file"))
    return tree, target


def init(root: Path, org: str, division: str, system: str, ruleset: str, data_dir: Path | None) -> list[str]:
    """Make the tree (or add a system to an existing one of the same org/division/ruleset)."""
    tree, target = tree_for_init(root, org, division, system, ruleset)
    facts = host.read(data_dir or root)
    doc = sysdesc.build(ruleset, facts, system)
    problems = files.schema_errors(doc, tree.layout.system_schema)
    if problems:  # our own output breaking the checker's schema is a bug
        raise ValueError(f"{target}: system description breaks {tree.layout.system_schema}: {problems[0]}")
    for name in tree.layout.org_dirs:
        (tree.org_dir / name).mkdir(parents=True, exist_ok=True)
    files.write_atomic(target, _dump(doc, tree.layout.system_ext))
    if not (root / MARKER).is_file():
        files.write_json(root / MARKER, marker_doc(ruleset, division, org, __version__), schema="submission")
    todo = sysdesc.todos(doc)
    return [f"suite submission init: {tree.org_dir} ({tree.layout.ruleset}, {division})",
            f"  system description: {target} ({len(todo)} TODO field(s) to fill in)",
            *(f"    TODO {field}: {what}" for field, what in todo)]
