"""`suite submission package`: check, add the benchmark code, write SHA256SUMS and the tarball.

Order: refuse TODOs left in a system description; make the system documents again from the current
description (suite.submission.document.rebuild: never stale); run `suite check` and refuse a closed
submission that is not compliant (the findings are printed); copy the source of the installed
`suite` package into <org>/code/ as a reproducible archive (fixed times and owners, so the same
code gives the same SHA-256) with a JSON note of its version and hash; write DIR/SHA256SUMS over
every file; write the tarball (its top folder is DIR's name) through a temp file and a rename.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import signal
import tarfile
import threading
from pathlib import Path

import suite
from suite import __version__, files, output
from suite.errors import ExitCode, SuiteError, expected_got
from suite.layouts import manifest
from suite.submission import document, place, system as sysdesc
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


_MADE: dict = {}       # the last archive made in this process, by what its files' stat said then


def source_archive() -> tuple[bytes, int]:
    """A .tar.gz of the installed package, byte-for-byte the same for the same source. Made again only when
    a file was added, removed or touched since this process last made it (its name, size, inode, mtime and
    ctime): gzipping the source is most of a package's CPU, and a process packaging twice (a test session,
    a `package --replace` loop) would make the same bytes again."""
    pkg = Path(suite.__file__).resolve().parent
    names = source_files(pkg)
    stamp = tuple((name, (st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns))
                  for name, st in ((name, path.stat()) for name, path in names))
    if _MADE.get("stamp") != stamp:
        _MADE.update(stamp=stamp, made=_archive(names))
    return _MADE["made"]


def _archive(names: list[tuple[str, Path]]) -> tuple[bytes, int]:
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
    """The archive and its note into code/. An earlier archive is removed only when it is provably
    ours (a note of ours names it with its SHA-256, and the bytes match); anything else in code/ is
    the submitter's and stays, and a file of theirs where ours would go is refused."""
    data, count = source_archive()
    name = f"suite-{__version__}-src.tar.gz"
    note_name = f"suite-{__version__}-src.json"
    digest = hashlib.sha256(data).hexdigest()
    ours = _earlier_archives(code_dir)
    for target in (code_dir / name, code_dir / note_name):
        same = target.name == name and target.is_file() and not target.is_symlink() \
            and manifest.sha256(target) == digest            # ours, its note not written (stopped in between)
        if (target.exists() or target.is_symlink()) and target not in ours and not same:
            raise SuiteError(expected_got(target, "file", "a new path, or an archive or note suite submission "
                                          "package wrote (its note names it with its SHA-256)", "a file of yours"))
    for old in ours:
        if old.name not in (name, note_name):
            old.unlink()
    files.write_atomic(code_dir / name, data)
    files.write_json(code_dir / note_name,
                     {"schema_version": 1, "name": "suite", "version": __version__, "archive": name,
                      "sha256": digest, "files": count,
                      "how": "the installed suite package's source and data files, as run"}, schema="code-archive")
    return [f"  code: {code_dir / name} (suite {__version__}, {count} files, sha256 {digest})"]


def _earlier_archives(code_dir: Path) -> set[Path]:
    """The archives (and their notes) an earlier `package` wrote: a note valid against its schema,
    named suite-*-src.json, whose archive is a regular file with the SHA-256 it records."""
    ours: set[Path] = set()
    for note in sorted(code_dir.glob("suite-*-src.json")):
        try:
            doc = files.load_json(note, schema="code-archive", root=code_dir)
        except SuiteError:
            continue
        archive = code_dir / str(doc["archive"])
        if (archive.parent != code_dir or not archive.name.startswith("suite-") or archive.is_symlink()
                or not archive.is_file()):
            continue
        if manifest.sha256(archive) == doc["sha256"]:
            ours |= {note, archive}
    return ours


def _refuse_todos(tree) -> None:
    for system in tree.systems():
        todo = sysdesc.todos(sysdesc.load(tree, system))
        if todo:
            field, what = todo[0]
            more = f" (+{len(todo) - 1} more)" if len(todo) > 1 else ""
            raise SuiteError(expected_got(tree.system_file(system), field, "a value", f"TODO ({what}){more}"))


def _documents(tree) -> list[str]:
    """Every system's documents made again from its current description and the runs' evidence (the
    content `describe` writes; document.rebuild): a package never ships those of an earlier one."""
    from suite.submission import describe

    return [line for system in tree.systems() for line in document.rebuild(
        tree.org_dir / "systems", system, *describe.content(tree, system), tree.root)]


def _check(tree, out, check) -> str:
    """`check(root, args)`: `suite check` on the tree by its kind (the caller asks the registry), its
    SHA256SUMS left out: the one about to be replaced is not evidence."""
    import argparse

    if not any(d.is_dir() for d in (tree.org_dir / "results").glob("*/*")):
        raise SuiteError(expected_got(tree.org_dir / "results", "benchmarks", "at least one (suite submission add)",
                                      "none"))
    checked = check(tree.root, argparse.Namespace(
        ruleset="auto", format="text", exclude_dirs=(), verify_manifest=False))
    if tree.division == "closed" and checked.code != ExitCode.OK:
        out(checked.out)
        raise NotCompliant(f"{tree.root}: suite check: expected a compliant closed submission, got {checked.summary}")
    return checked.summary


def package(root: Path, out_path: Path | None, replace: bool, check, out=print) -> list[str]:
    """Every refusal first; then code/, SHA256SUMS (replacing the old one in one rename: never lost
    or hidden) and the tarball (a temp file renamed). Stopped part-way, the tree still holds the old
    SHA256SUMS, which then disagrees with code/ (a visible finding), and no temp file is left.
    `check(root, args) -> Checked`: suite check by the tree's kind (suite.submission.cli asks the registry)."""
    tree = open_tree(root)
    root = tree.root
    tarball = output.outside(Path(out_path) if out_path else root.parent / f"{root.name}.tar.gz", "--out", [root])
    place.refuse_existing([tarball] if (tarball.exists() or tarball.is_symlink()) else [], replace)
    _refuse_todos(tree)
    manifest.listing(root)            # links or special files: refused before anything changes
    docs = _documents(tree)           # before the check and the hashes: never a stale document
    verdict = _check(tree, out, check)
    lines = [f"suite submission package: {root}", *docs, f"  suite check: {verdict}"]
    lines += write_code(tree.org_dir / "code")
    files.write_atomic(root / MANIFEST, manifest.text(root))
    listed = manifest.listing(root)
    moved = place.move_aside(tarball.parent, tarball, place.aside_root(tarball)) if tarball.exists() else None
    digest = _write_tarball(root, [*listed, MANIFEST], tarball)
    lines.append(f"  manifest: {root / MANIFEST} ({len(listed)} files)")
    lines.append(f"  tarball: {tarball} (sha256 {digest})"
                 + (f"; old copy kept at {moved}" if moved else ""))
    return lines


def _write_tarball(root: Path, names: list[str], tarball: Path) -> str:
    """The tarball through a temp file; its SHA-256 (taken before the rename). The rename is the last
    step: once it is done the package is complete, and a SIGTERM after it is ignored (output.interruptible
    restores the handler), so a stopped command never exits as interrupted with a complete tarball."""
    tmp = tarball.with_name(f".{tarball.name}.{os.getpid()}.tmp")
    try:
        tarball.parent.mkdir(parents=True, exist_ok=True)
        with tarfile.open(tmp, "w:gz") as tar:
            for rel in sorted(names):
                tar.add(root / rel, arcname=f"{root.name}/{rel}", recursive=False)
        digest = manifest.sha256(tmp)
        old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
        try:
            os.replace(tmp, tarball)
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGTERM, signal.SIG_IGN)    # complete: a pending stop is dropped
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        return digest
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise files.write_error(tarball, exc) from None
        raise
