"""TODO markers left in a submission's system descriptions: `suite check` reports each as a note.

`suite submission init` writes "TODO: <what to give>" where this host cannot tell a value, and names
placeholder numbers in the document's `todo` list; a reviewer must not receive either.
"""

from __future__ import annotations

from pathlib import Path

from suite import files
from suite.rules.findings import Finding, make

TODO = "TODO"
RULE_TODO = "submission-system-todo"
RULE_DOC_TODO = "submission-document-todo"
RULES = {RULE_TODO: "every field of the system description is filled in (no TODO left)",
         RULE_DOC_TODO: "the system documents (systems/<system>.md, .html) hold no TODO placeholder"}
DOC_MAX_BYTES = 8 << 20


def todos(doc) -> list[tuple[str, str]]:
    """(field, what is missing) for every TODO string in `doc` and every entry of its `todo` list."""
    out: list[tuple[str, str]] = []

    def walk(node, where: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                if where == "" and k == "todo":
                    continue
                walk(v, f"{where}.{k}" if where else str(k))
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")
        elif isinstance(node, str) and node.strip().upper().startswith(TODO):
            what = node.strip()[len(TODO):].lstrip(" :") or "a value"
            out.append((where, what))

    walk(doc, "")
    listed = doc.get("todo") if isinstance(doc, dict) else None
    for item in listed if isinstance(listed, list) else []:
        field, _, what = str(item).partition(": ")
        out.append((field, what or str(item)))
    return out


def _systems_files(root: Path) -> list[Path]:
    return sorted({p for pattern in ("systems/*", "*/systems/*", "*/*/systems/*") for p in root.glob(pattern)})


def document_findings(root: Path) -> list[Finding]:
    """One error (invalid) per systems/<system>.md or .html under root that holds a TODO placeholder
    (`suite submission describe` run before the description was filled in, and not run again): a
    reviewer would read it, so it never passes as compliant (issue 38). Links are never followed."""
    out = []
    root = Path(root)
    for path in _systems_files(root):
        if path.suffix.lower() not in (".md", ".html") or path.is_symlink() or not path.is_file():
            continue
        if path.stat().st_size > DOC_MAX_BYTES:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        marks = [m for m in ("## TODO", '<h2 id="todo">', "| TODO", "<td>TODO") if m in text]
        if marks:
            out.append(make(RULE_DOC_TODO, "error", "invalid", str(path.relative_to(root)), "TODO",
                            "a document of the filled-in description (suite submission describe --replace; "
                            "package makes it again)", f"a TODO placeholder ({marks[0]!r})"))
    return out


def todo_findings(root: Path) -> list[Finding]:
    """One finding (warning, effect closed: a note) per TODO in every systems/* description under root,
    and an error per document holding one (`document_findings`)."""
    out = []
    root = Path(root)
    for path in _systems_files(root):
        if path.suffix.lower() not in (".json", ".yaml", ".yml") or path.is_symlink() or not path.is_file():
            continue
        try:   # never read through a link out of root (suite.files' guarded read)
            doc = files.load_json(path, root=root) if path.suffix.lower() == ".json" else files.load_yaml(path, root=root)
        except files.SuiteError:
            continue  # the checker's own schema rule reports an unreadable description
        for field, what in todos(doc):
            out.append(make(RULE_TODO, "warning", "closed", str(path.relative_to(root)), field,
                            "a value", f"TODO ({what})"[:200]))
    return out + document_findings(root)
