"""The SHA-256 manifest of a submission tree (DIR/SHA256SUMS) and its verification.

Format: `sha256sum`'s, one line per file, `<64 hex>  <path relative to DIR>`, sorted by path, so
`sha256sum -c SHA256SUMS` verifies it too. Every regular file under DIR but the manifest itself is
listed; a symbolic link or special file makes the tree unpackable (`listing` refuses it).

`verify(root)` is pure (reads, never writes) and returns checker findings: one per changed, missing
or extra file, and one for a manifest that cannot be read. No manifest: no findings.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from suite import files
from suite.errors import SuiteError, expected_got
from suite.rules.findings import Finding, make

MANIFEST = "SHA256SUMS"   # at the tree's root (imports nothing of suite.submission: check/ may call verify)

RULE_CHANGED = "submission-manifest-changed"
RULE_MISSING = "submission-manifest-missing"
RULE_EXTRA = "submission-manifest-extra"
RULE_UNREADABLE = "submission-manifest-unreadable"
RULES = {  # rule id -> one-line description, for the checker's report
    RULE_CHANGED: "every file listed in SHA256SUMS has the digest it was packaged with",
    RULE_MISSING: "every file listed in SHA256SUMS is present",
    RULE_EXTRA: "every file of the tree is listed in SHA256SUMS",
    RULE_UNREADABLE: "SHA256SUMS is a readable sha256sum manifest of paths inside the tree",
}
MAX_MANIFEST_BYTES = 16 * 1024 * 1024   # ~100,000 lines of real paths; a real tree holds hundreds of files
MAX_LINES = 200_000                      # the walker's bound on a tree's entries
MAX_FINDINGS = 50                        # per rule; the rest counted in one more finding


sha256 = files.sha256      # the one file digest (suite.files)


def _walk(root: Path):
    """(relative posix path, kind) of every entry below root, links never followed."""
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(dirpath)
        for name in sorted(dirnames + filenames):
            p = base / name
            mode = os.lstat(p).st_mode
            kind = ("file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode)
                    else "link" if stat.S_ISLNK(mode) else "special")
            yield p.relative_to(root).as_posix(), kind


def listing(root: Path) -> list[str]:
    """Every regular file under root (relative, sorted) but the manifest; links refused."""
    out = []
    for rel, kind in _walk(root):
        if kind in ("link", "special"):
            raise SuiteError(expected_got(root / rel, "file type", "a regular file or directory",
                                          "a symbolic link" if kind == "link" else "a device, FIFO or socket"))
        if kind == "file" and rel != MANIFEST:
            if "\n" in rel or "\\" in rel:
                raise SuiteError(expected_got(root / rel, "file name", "no newline or backslash", repr(rel)))
            out.append(rel)
    return sorted(out)


def text(root: Path) -> str:
    return "".join(f"{sha256(root / rel)}  {rel}\n" for rel in listing(root))


def parse(data: bytes, where: str) -> dict[str, str]:
    """path -> digest; ValueError naming the line for anything else (read line by line: the work is
    bounded by MAX_LINES whatever the bytes hold)."""
    lines = data.count(b"\n")
    if lines > MAX_LINES:
        raise ValueError(f"{where}: lines: expected at most {MAX_LINES}, got {lines}")
    out: dict[str, str] = {}
    for no, line in enumerate(data.decode("utf-8").splitlines(), 1):
        if no > MAX_LINES:
            raise ValueError(f"{where}: lines: expected at most {MAX_LINES}, got more")
        digest, sep, rel = line.partition("  ")
        if not sep or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or not rel:
            raise ValueError(f"{where}: line {no}: expected '<64 hex digits>  <path>', got {line[:80]!r}")
        if rel.startswith("/") or ".." in rel.split("/"):
            raise ValueError(f"{where}: line {no}: expected a path inside the tree, got {rel[:80]!r}")
        out[rel] = digest
    return out


def verify(root) -> list[Finding]:
    """Findings for every file that differs from root/SHA256SUMS; [] when there is no manifest.

    SHA256SUMS is read only when it is a regular file inside the tree (a link out of it is a
    finding, never followed), at most MAX_MANIFEST_BYTES; at most MAX_FINDINGS findings per rule
    are listed, the rest counted in one more."""
    root = Path(root)
    path = root / MANIFEST
    if not os.path.lexists(path):
        return []
    try:
        listed = parse(files.read_bytes(path, MAX_MANIFEST_BYTES, ValueError, root=root), MANIFEST)
        present = {rel: kind for rel, kind in _walk(root) if kind != "dir" and rel != MANIFEST}
    except (OSError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
        return [make(RULE_UNREADABLE, "error", "invalid", MANIFEST, "(file)", "a readable sha256sum manifest "
                     f"of at most {MAX_MANIFEST_BYTES} bytes inside the tree", str(exc).replace(str(root), "DIR")[:200])]
    out = []
    for rel, digest in sorted(listed.items()):
        kind = present.get(rel)
        if kind is None:
            out.append(make(RULE_MISSING, "error", "invalid", rel, "file", "present (listed in SHA256SUMS)",
                            "missing"))
        elif kind != "file":
            out.append(make(RULE_CHANGED, "error", "invalid", rel, "file type", "a regular file", kind))
        else:
            try:
                actual = sha256(root / rel)
            except OSError as exc:
                actual = f"unreadable ({exc.strerror or exc})"
            if actual != digest:
                out.append(make(RULE_CHANGED, "error", "invalid", rel, "sha256", digest, actual))
    for rel in sorted(set(present) - set(listed)):
        out.append(make(RULE_EXTRA, "error", "invalid", rel, "file", "not present (not in SHA256SUMS)",
                        f"an extra {present[rel]}"))
    return _bounded(out)


def _bounded(found: list[Finding]) -> list[Finding]:
    """At most MAX_FINDINGS per rule, then one finding counting the rest (the report stays readable)."""
    out, per_rule = [], {}
    for f in found:
        per_rule[f.rule_id] = per_rule.get(f.rule_id, 0) + 1
        if per_rule[f.rule_id] <= MAX_FINDINGS:
            out.append(f)
    for rule, n in sorted(per_rule.items()):
        if n > MAX_FINDINGS:
            out.append(make(rule, "error", "invalid", MANIFEST, "(files)", "every file as SHA256SUMS lists it",
                            f"{n - MAX_FINDINGS} more files like the {MAX_FINDINGS} above"))
    return out
