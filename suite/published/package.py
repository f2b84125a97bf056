"""`suite submission describe` and `package` for a tree in the pooled layout, the published v3.0
one (suite.published.submission makes it).

describe: systems/<system>.{md,html,pdf} from the YAML (the PDF printed by headless chromium; without
it the PDF is left out and the command says so, and `suite check` reports the missing PDF).
package: refuses TODOs, makes the documents again from the current YAML (never stale), refuses a closed tree suite.published.check does not accept (its findings
printed), writes SHA256SUMS over every file and the tarball (suite.submission.package's writers).
"""

from __future__ import annotations

from pathlib import Path

from suite import files, output
from suite.layouts import leaf_files as v3load, manifest
from suite.errors import ExitCode, SuiteError, expected_got
from suite.submission import document, place
from suite.submission.layout import MANIFEST, open_tree
from suite.published.submission import todos
from suite.layouts import solution as v3figures


class NotCompliant(SuiteError):
    exit_code = ExitCode.FAILED


def _rows(node, prefix="") -> list[tuple[str, str]]:
    out = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _rows(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _rows(v, f"{prefix}[{i}]")
    else:
        out.append((prefix, "" if node is None else str(node)))
    return out


def content(tree, system: str) -> tuple[str, list]:
    """The document's title and sections (suite.submission.document's model) from the system YAML."""
    doc = v3load.system_yaml(tree.system_file(system), tree.root)
    sut = doc["system_under_test"]
    power, ru = v3figures.provisioned_power_w(doc), v3figures.rack_units(doc)
    sol = v3figures.solution(doc)
    sections = [
        ("Solution", [("table", ["field", "value"], [
            ("availability", sol["availability"]), ("usable capacity (TiB)", sol["usable_capacity_tib"]),
            ("deployment", sol["deployment"]), ("storage location", sol["storage_location"]),
            ("provisioned power (W)", "-" if power is None else power), ("rack units", "-" if ru is None else ru)])]),
        ("Clients", [("table", ["field", "value"], _rows(sut.get("clients")))]),
        ("Storage nodes", [("table", ["field", "value"], _rows(sut.get("product_nodes")))] if sut.get("product_nodes")
         else [("p", "none itemized (cloud, or storage inside the clients)")]),
    ]
    return f"{tree.org} {system}: system description (MLPerf Storage {tree.ruleset})", sections


def describe(root: Path, system: str, replace: bool) -> list[str]:
    tree = open_tree(root)
    path = tree.system_file(system)
    title, sections = content(tree, system)
    written = []
    targets = {ext: path.with_suffix(f".{ext}") for ext in ("md", "html", "pdf")}
    existing = [p for p in targets.values() if p.exists() or p.is_symlink()]
    place.refuse_existing(existing, replace)
    for p in existing:
        place.move_aside(tree.root, p, place.aside_root(tree.root))
    files.write_atomic(targets["md"], document.markdown(title, sections))
    files.write_atomic(targets["html"], document.page(title, sections))
    written += [targets["md"], targets["html"]]
    why = document.pdf(targets["html"], targets["pdf"])
    if why is None:
        written.append(targets["pdf"])
    lines = [f"suite submission describe: {', '.join(str(p) for p in written)}"]
    if why:
        lines.append(f"  no PDF: {why}")
    return lines


def documents(tree) -> list[str]:
    """Every system's documents made again from its current YAML (document.rebuild): a package never
    ships the documents of an earlier description (issue 38)."""
    return [line for system in tree.systems() for line in document.rebuild(
        tree.org_dir / "systems", system, *content(tree, system), tree.root)]


def _refuse_todos(tree) -> None:
    for system in tree.systems():
        path = tree.system_file(system)
        left = todos(v3load.system_yaml(path, tree.root))
        if left:
            more = f" (+{len(left) - 1} more)" if len(left) > 1 else ""
            raise SuiteError(expected_got(path, left[0].split(":")[0], "a value", f"TODO{more}: {left[0]}"))


def _check(tree, out, delegate=None) -> str:
    from suite.published import check as v3check
    from suite.published import page as v3tree_text

    res = v3check.check(tree.root, ruleset_name=tree.ruleset, verify_manifest=False,   # its SHA256SUMS: replaced
                        delegate=delegate)        # kv_cache, vector_database: checked by their kinds
    if not res.rows and not res.delegated:       # kv_cache and vector_database results: checked by their kinds
        raise SuiteError(expected_got(tree.org_dir / "results", "benchmarks", "at least one (suite submission add)",
                                      "none"))
    if tree.division == "closed" and not res.compliant:
        out(v3tree_text.check_text(res))
        raise NotCompliant(f"{tree.root}: suite check: expected a compliant closed submission, got "
                           f"{v3tree_text.summary_line(res)}")
    return v3tree_text.summary_line(res)


def package(root: Path, out_path: Path | None, replace: bool, out=print, delegate=None) -> list[str]:
    from suite.submission.package import _write_tarball

    tree = open_tree(root)
    root = tree.root
    tarball = output.outside(Path(out_path) if out_path else root.parent / f"{root.name}.tar.gz", "--out", [root])
    place.refuse_existing([tarball] if (tarball.exists() or tarball.is_symlink()) else [], replace)
    _refuse_todos(tree)
    manifest.listing(root)
    docs = documents(tree)            # before the check: it reads the PDF, and the hashes cover them
    verdict = _check(tree, out, delegate)
    files.write_atomic(root / MANIFEST, manifest.text(root))
    listed = manifest.listing(root)
    moved = place.move_aside(tarball.parent, tarball, place.aside_root(tarball)) if tarball.exists() else None
    digest = _write_tarball(root, [*listed, MANIFEST], tarball)
    return [f"suite submission package: {root}", *docs, f"  suite check: {verdict}",
            f"  manifest: {root / MANIFEST} ({len(listed)} files)",
            f"  tarball: {tarball} (sha256 {digest})" + (f"; old copy kept at {moved}" if moved else "")]
