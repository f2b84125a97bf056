"""Helpers of the `suite submission` tests (imported by name: tests/submission is on sys.path)."""

import json
import shutil


def spoiled_copy(results, dest, run: int | None = None, **fields):
    """A copy of a results dir; with `run`, that run's results.json gets `fields`."""
    shutil.copytree(results, dest)
    if run is not None:
        path = dest / f"run-{run}" / "results.json"
        doc = json.loads(path.read_text())
        doc.update(fields)
        path.write_text(json.dumps(doc))
    return dest


def fill_todos(path):
    """What a vendor does after init: every TODO of the JSON description given a value."""
    doc = json.loads(path.read_text())

    def fill(node):
        if isinstance(node, dict):
            return {k: fill(v) for k, v in node.items()}
        if isinstance(node, list):
            return [fill(v) for v in node]
        return "Example value" if isinstance(node, str) and node.startswith("TODO") else node

    doc = fill(doc)
    doc["todo"] = []
    path.write_text(json.dumps(doc, indent=2))


def snapshot(root):
    """{relative path: bytes} of every file under root: to show nothing was changed."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
