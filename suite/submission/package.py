"""`suite submission package`: check, add the benchmark code, write SHA256SUMS and the tarball.

Order: refuse TODOs left in a system description; run `suite check` and refuse a closed
submission that is not compliant (the findings are printed); copy the source of the installed
`suite` package into <org>/code/ as a reproducible archive (fixed times and owners, so the same
code gives the same SHA-256) with a JSON note of its version and hash; write DIR/SHA256SUMS over
every file; write the tarball (its top folder is DIR's name) through a temp file and a rename.
"""

from __future__ import annotations

import gzip
import io
import os
import tarfile
from pathlib import Path

import suite
from suite import __version__, files
from suite.errors import ExitCode, SuiteError, expected_got
from suite.check import manifest
from suite.submission import place, system as sysdesc
from suite.submission.layout import MANIFEST, open_tree

SKIP_DIRS = {"__pycache__"}
SKIP_SUFFIXES = (".pyc", ".pyo")


class NotCompliant(SuiteError):
    exit_code = ExitCode.FAILED


def source_files(pkg: Path) -> list[tuple[str, Path]]:
    """(name in the archive, path) of the package's source and data files; data links followed once."""
    out, seen = [], set()
    for dirpath, dirnames, filenames in os.walk(pkg, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen:  # a link loop
            dirnames[:] = []
            continue
        seen.add(real)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(filenames):
            if name.endswith(SKIP_SUFFIXES) or name.startswith("."):
                continue
            p = Path(dirpath) / name
            if p.is_file():
                out.append((f"suite-{__version__}/suite/{p.relative_to(pkg).as_posix()}", p))
    return out


def source_archive() -> tuple[bytes, int]:
    """A .tar.gz of the installed package, byte-for-byte the same for the same source."""
    pkg = Path(suite.__file__).resolve().parent
    names = source_files(pkg)
    raw = io.BytesIO()
    with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            for name, path in names:
                data = path.read_bytes()
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))
    return raw.getvalue(), len(names)


def write_code(code_dir: Path) -> list[str]:
    data, count = source_archive()
    name = f"suite-{__version__}-src.tar.gz"
    digest = manifest.hashlib.sha256(data).hexdigest()
    for old in code_dir.glob("suite-*-src.tar.gz"):  # our own earlier output, of this or another version
        old.unlink()
    for old in code_dir.glob("suite-*-src.json"):
        old.unlink()
    files.write_atomic(code_dir / name, data)
    files.write_json(code_dir / f"suite-{__version__}-src.json",
                     {"schema_version": 1, "name": "suite", "version": __version__, "archive": name,
                      "sha256": digest, "files": count,
                      "how": "the installed suite package's source and data files, as run"}, schema="code-archive")
    return [f"  code: {code_dir / name} (suite {__version__}, {count} files, sha256 {digest})"]


def _refuse_todos(tree) -> None:
    for system in tree.systems():
        todo = sysdesc.todos(sysdesc.load(tree, system))
        if todo:
            field, what = todo[0]
            more = f" (+{len(todo) - 1} more)" if len(todo) > 1 else ""
            raise SuiteError(expected_got(tree.system_file(system), field, "a value", f"TODO ({what}){more}"))


def _check(tree, out) -> str:
    from suite.check.checker import check
    from suite.report import findings as report

    if not any(d.is_dir() for d in (tree.org_dir / "results").glob("*/*")):
        raise SuiteError(expected_got(tree.org_dir / "results", "benchmarks", "at least one (suite submission add)",
                                      "none"))
    result = check(tree.root, "auto")
    if tree.division == "closed" and not result.compliant:
        out(report.text(result, result.rule_messages()))
        raise NotCompliant(f"{tree.root}: suite check: expected a compliant closed submission, got "
                           f"{report.summary_line(result)}")
    return report.summary_line(result)


def package(root: Path, out_path: Path | None, replace: bool, out=print) -> list[str]:
    tree = open_tree(root)
    root = tree.root
    tarball = Path(out_path) if out_path else root.parent / f"{root.name}.tar.gz"
    if tarball.resolve().is_relative_to(root.resolve()):
        raise SuiteError(expected_got(tarball, "--out", "a path outside DIR", "a path inside it"))
    place.refuse_existing([tarball] if (tarball.exists() or tarball.is_symlink()) else [], replace)
    _refuse_todos(tree)
    manifest.listing(root)            # links or special files: refused before anything changes
    old = root / MANIFEST             # our own earlier output: out of check's way, back if we refuse
    held = root / f".{MANIFEST}.packaging-{os.getpid()}"
    if old.is_file():
        os.rename(old, held)
    try:
        verdict = _check(tree, out)
    except BaseException:
        if held.is_file():
            os.rename(held, old)
        raise
    held.unlink(missing_ok=True)
    lines = [f"suite submission package: {root}", f"  suite check: {verdict}"]
    lines += write_code(tree.org_dir / "code")
    files.write_atomic(root / MANIFEST, manifest.text(root))
    listed = manifest.listing(root)
    moved = place.move_aside(tarball.parent, tarball, place.aside_root(tarball)) if tarball.exists() else None
    _write_tarball(root, [*listed, MANIFEST], tarball)
    lines.append(f"  manifest: {root / MANIFEST} ({len(listed)} files)")
    lines.append(f"  tarball: {tarball} (sha256 {manifest.sha256(tarball)})"
                 + (f"; old copy kept at {moved}" if moved else ""))
    return lines


def _write_tarball(root: Path, names: list[str], tarball: Path) -> None:
    tarball.parent.mkdir(parents=True, exist_ok=True)
    tmp = tarball.with_name(f".{tarball.name}.{os.getpid()}.tmp")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            for rel in sorted(names):
                tar.add(root / rel, arcname=f"{root.name}/{rel}", recursive=False)
        os.replace(tmp, tarball)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
