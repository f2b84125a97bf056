"""`suite check` on a published MLPerf Storage v3.0 tree: facts per scope from the tree model
(suite.layouts.pooled), the rules of rules/<round>/<tree_rules>/*.yaml (the round's ruleset.yaml names
the folder: `tree_rules: tree`) evaluated by the one engine, findings
graded error / warning / info with ids `<Rules.md section>-<staff name>` (2.1.17-trainingRunCount,
4.7.1-checkpointCacheFlushValidation, CHECK-01-poolPointerResolution, ...).

Scopes: `tree` (each organisation: layout and code pool; each system description), `benchmark`
(a training result, a checkpointing result), `run` (every leaf). Benchmark folders of other kinds
(kv_cache, vector_database) are handed to `delegate(path)` (the kind registry's, given by the
caller): what it takes is checked by that kind; what nothing recognises is an info finding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from suite.layouts import pooled_facts

from suite.layouts import leaf_files as v3load

from suite.layouts import pool as v3pool

from suite.layouts import system_doc as v3system

from suite.layouts import leaves as layout_leaves, manifest, pooled as v3tree, todo
from suite.errors import ResultError
from suite.rules import engine, findings, rulesets
from suite.rules.engine import Scope
from suite.rules.evaluate import evaluate
from suite.rules.ops import Item

RULE_FILES = ("tree.yaml", "system.yaml")   # in the round's tree_rules folder: the layout's own rules


@dataclass
class Result:
    root: Path
    scope: Path
    ruleset: str = ""                                 # the round the tree is held to
    findings: list = field(default_factory=list)
    rows: list = field(default_factory=list)          # one per benchmark: its published columns
    delegated: list = field(default_factory=list)     # {path, kind, verdict, compliant, summary}
    systems: list = field(default_factory=list)       # one per system description in scope: its columns

    @property
    def verdict(self) -> str:
        own = findings.verdict(self.findings)
        return findings.worst([own] + [d["verdict"] for d in self.delegated if d["verdict"] in findings.VERDICTS])

    @property
    def fix_required(self) -> bool:
        return findings.fix_required(self.findings)

    @property
    def compliant(self) -> bool:
        return self.verdict == "closed" and not self.fix_required and all(d["compliant"] for d in self.delegated)

    def counts(self) -> dict:
        out = {s: 0 for s in findings.SEVERITIES}
        for f in self.findings:
            out[f.severity] += 1
        return out


def tree_rounds() -> tuple[str, ...]:
    """The rounds with a published-tree check (`tree_rules:` in their ruleset.yaml), in order."""
    return tuple(n for n, r in rulesets.discover().items() if r.tree_rules)


def round_of(named: str | None = None) -> str:
    """--ruleset when it names a round with tree rules; else the default round when it has them,
    else the newest that does. A tree names no round: its layout is the round's."""
    have = tree_rounds()
    if named not in (None, "auto"):
        if named not in have:
            raise ResultError(f"--ruleset: expected {' or '.join(have) or 'a round with tree_rules'} (the rounds "
                              f"with published-tree rules: tree_rules in rules/*/{rulesets.FILE}), got {named}")
        return named
    if not have:
        raise ResultError(f"rules/*/{rulesets.FILE}: tree_rules: expected a round with published-tree rules, got none")
    default = rulesets.default().name
    return default if default in have else have[-1]


def ruleset(name: str | None = None):
    name = round_of(name)
    folder = rulesets.get(name).tree_rules
    return engine.load_layers(name, tuple(f"{folder}/{f}" for f in RULE_FILES))


def held_to(name: str | None = None):
    """Every rule a published tree of the round holds its nodes to: the layout's own (the tree_rules
    folder) and the kinds' rules for reference leaves (the round's `*-leaves.yaml` files, `layer: kind`,
    which the kinds judging those leaves load by name): the table docs/checker.md lists."""
    name = round_of(name)
    folder = rulesets.get(name).tree_rules
    kinds = sorted({p.name for r in rulesets.discover()[name].chain
                    for p in engine.rule_path(f"{r}/x").parent.glob("*-leaves.yaml")})
    return engine.load_layers(name, tuple(f"{folder}/{f}" for f in RULE_FILES) + tuple(kinds))


def check(path: Path, delegate=None, ruleset_name: str | None = None, verify_manifest: bool = True) -> Result:
    """The tree's findings; `verify_manifest=False` only for `suite submission package`, whose
    SHA256SUMS is about to be replaced (the old one is not evidence of the tree being packaged)."""
    tree = v3tree.load(path)
    rs = ruleset(ruleset_name)
    res = Result(tree.root, tree.scope, rs.ruleset)
    rel = tree.root

    def run(kind: str, scope: Scope) -> None:
        res.findings.extend(evaluate(rs, kind, scope, rel))

    if tree.problems:
        cut = [_item(p) for p in tree.problems if p.field == "(entries)"]
        run("tree", Scope("tree", tree.root, {"tree.problems": [_item(p) for p in tree.problems
                                                                    if p.field != "(entries)"],
                                              "tree.cut": cut}))
    if tree.scope == tree.root and verify_manifest:   # what `suite submission package` hashed, hashed again
        res.findings.extend(manifest.verify(tree.root))
    if tree.scope == tree.root:                       # documents of a description still holding TODOs
        res.findings.extend(todo.document_findings(tree.root))
    for org in tree.orgs:
        if org.name != "(none)":                      # out of its tree: no organisation, no code pool to resolve
            run("tree", _org_scope(org, tree))
        for system in org.systems:
            if org.name != "(none)":
                run("tree", _system_scope(system, org))
            res.systems.append({k: v for k, v in pooled_facts.row(system, org, "", "", system.yaml_path or system.path).items()
                                if k not in ("benchmark", "model")})
            unknown = [Item(str(d.name), d, "(folder)", "a benchmark folder (training, checkpointing, kv_cache, "
                            "vector_database)") for d in system.unknown if _delegate(d, delegate, res, run)]
            for b in system.benchmarks:
                if isinstance(b, v3tree.Other):
                    unknown += _delegate(b, delegate, res, run)
                elif not _handed_own(b, delegate, res, org, system, rs):
                    _judged(b, org, system, rs, res, unknown)
            if unknown:
                run("tree", Scope("tree", system.path, {"tree.unrecognised": unknown}))
    res.findings.sort(key=lambda f: (f.path, f.rule_id, f.field))
    handed = {d["path"]: d["verdict"] for d in res.delegated if d["verdict"] in findings.VERDICTS}
    for row in res.rows:
        mine = engine_rel(row["path"], tree.root)
        own = findings.verdict([f for f in res.findings if f.path == mine or f.path.startswith(mine + "/")])
        row["verdict"] = findings.worst([own] + ([handed[row["path"]]] if row["path"] in handed else []))
    return res


def _handed_own(b, delegate, res: Result, org, system, rs) -> bool:
    """Our own runs' leaves (the evidence only `suite run` writes beside the reference files) are checked
    by their own kind, as in the results dir they were written to (one judgement wherever a result sits);
    the tree keeps their row of published figures and its own rules (the code pool, the system). False
    where the leaves are the reference tool's, or no kind takes them."""
    leaves = b.runs + b.datasize + b.datagen if isinstance(b, v3tree.Training) else b.leaves
    if delegate is None or not any(layout_leaves.ours(x.path) for x in leaves):
        return False
    name = "training" if isinstance(b, v3tree.Training) else "checkpointing"
    taken = delegate(b.path, name)
    if taken is None:
        return False
    res.delegated.append({"path": str(b.path), **taken})
    judge = v3tree.JUDGES.get(name)
    if judge is not None:
        res.rows.append(judge(b, org, system, rs.ruleset, res.root, rules_too=False)[1])
    return True


def _judged(b, org, system, rs, res: Result, unknown: list) -> None:
    """A training or checkpointing node of the reference tool's leaves, judged by its kind
    (suite.layouts.pooled.JUDGES: the same judgement as copied alone into a results dir); the tree keeps
    the row and adds only its own rules. A node no kind judges is listed as unrecognised."""
    name = "training" if isinstance(b, v3tree.Training) else "checkpointing"
    judge = v3tree.JUDGES.get(name)
    if judge is None:
        unknown.append(Item(name, b.path, "(folder)", "a benchmark folder some benchmark kind judges",
                            note=f"no kind judges {name} results here; listed, not checked"))
        return
    found, row = judge(b, org, system, rs.ruleset, res.root)
    res.findings.extend(found)
    res.rows.append(row)


def engine_rel(path, root: Path) -> str:
    try:
        return str(Path(path).relative_to(root))
    except ValueError:
        return str(path)


def _item(p: v3tree.Problem, expected: str | None = None) -> Item:
    return Item(p.actual, p.path, p.field, expected or p.expected)


def _delegate(b, delegate, res: Result, run=None) -> list:
    """Hand a kv_cache / vector_database folder (or one no benchmark names) to the kinds that recognise
    what lies in it: every directory some kind takes is checked by it (and not descended into); what
    none takes is returned as unrecognised. A walk cut at its bound is an error (TREE-03), never a
    silent pass."""
    top = b.path if isinstance(b, v3tree.Other) else b
    name = b.benchmark if isinstance(b, v3tree.Other) else top.name
    taken_any = False
    if delegate is not None:
        cut = []
        for d in descend(top, delegate, cut):
            res.delegated.append({"path": str(d[0]), **d[1]})
            taken_any = True
        if cut and run is not None:
            run("tree", Scope("tree", top, {"tree.cut": cut}))
    if taken_any:
        return []
    return [Item(name, top, "(folder)", "a benchmark folder some benchmark kind recognises",
                 note=f"no kind recognises {name} results here; listed, not checked")]


MAX_DELEGATE_DIRS = 2000


def descend(top: Path, delegate, cut: list, depth: int = 6):
    """(directory, what its kind says) for every directory below `top` (itself included) that a kind
    takes, breadth first, not descending into a taken one; at most `depth` levels and
    MAX_DELEGATE_DIRS directories, a walk past them recorded in `cut`."""
    level, seen = [top], 0
    for _ in range(depth):
        nxt = []
        for d in level:
            seen += 1
            if seen > MAX_DELEGATE_DIRS:
                cut.append(Item("more", top, "(entries)", f"at most {MAX_DELEGATE_DIRS} directories walked"))
                return
            taken = delegate(d)
            if taken is not None:
                yield d, taken
                continue
            try:
                nxt += sorted(p for p in d.iterdir() if p.is_dir() and not p.is_symlink())
            except OSError:
                pass
        level = nxt


def _org_scope(org: v3tree.Org, tree: v3tree.Tree) -> Scope:
    legacy = [Item(d.name, d, "(directory)", f"no code directory here: the pool is {org.name}/code-<hash8>/")
              for d in org.extra if d.name.lower() == "code"]
    extra = [Item(p.name, p, "(entry)", "results/ or systems/ only") for p in org.extra]
    unpaired = [Item(p.name, p, "(file)", f"a {p.stem}.yaml beside it") for p in org.unpaired_pdfs]
    unresolved, misnamed, content, empty = _pool(org, tree)
    return Scope("tree", org.path, {"result.division": org.division, "org.extra": extra,
                                    "org.legacy_code": legacy, "org.unpaired_pdfs": unpaired,
                                    "pool.unresolved": unresolved, "pool.misnamed": misnamed,
                                    "pool.content": content, "pool.empty": empty,
                                    "pool.code_that_ran": _code_that_ran(org, tree)})


def _code_that_ran(org: v3tree.Org, tree: v3tree.Tree) -> list:
    """Leaves whose run recorded the code it ran (provenance.json) and point at other code, or at none:
    the code stamped is not the code that ran (suite.submission.provenance)."""
    from suite.submission import provenance as ran_code

    out = []
    for b in (b for s in org.systems for b in s.benchmarks):
        for leaf in _all_leaves(b):
            if "provenance.json" not in leaf.names:
                continue
            try:
                ran = ran_code.recorded(leaf.path, tree.root)
            except ResultError as exc:
                out.append(Item(str(exc)[:200], leaf.path / "provenance.json", "hash", "a readable record of the code that ran"))
                continue
            stamped = leaf.pointer[1] if leaf.pointer is not None else None
            if ran is not None and ran != stamped:
                out.append(Item(f"md5-tree-v2:{stamped}" if stamped else "no .mlps-code-image", leaf.path / ".mlps-code-image",
                                "(pointer)", f"md5-tree-v2:{ran} (the code that ran: provenance.json)"))
    return out


def _pool(org: v3tree.Org, tree: v3tree.Tree) -> tuple[list, list, list, list]:
    """(pointers that resolve to no image, images misnamed or without a readable .code-hash.json,
    images whose code does not hash to what they record, images holding no code: their hash vouches
    for nothing)."""
    images: dict[str, v3load.CodeHash | None] = {}
    inconsistent, content, empty = [], [], []
    pool = org.pool_dir
    if pool.is_dir() and not pool.is_symlink():
        for d in sorted(p for p in pool.iterdir() if p.name.startswith("code-") and p.is_dir() and not p.is_symlink()):
            images[d.name] = None
            try:
                ch = v3load.code_hash(d / ".code-hash.json", tree.root)
            except ResultError as exc:
                inconsistent.append(Item(str(exc), d / ".code-hash.json", "(file)", "a readable .code-hash.json"))
                continue
            images[d.name] = ch
            if d.name != f"code-{ch.hash[:8]}":
                inconsistent.append(Item(d.name, d, "(directory name)", f"code-{ch.hash[:8]} (its recorded hash)"))
            try:
                got = v3pool.tree_md5(d) if v3pool.code_files(d) else None
            except ResultError as exc:
                content.append(Item(str(exc), d, "(code)", "a hashable code tree"))
                continue
            if got is None:
                empty.append(Item("no code (only .code-hash.json or files the hash leaves out)", d, "(code)",
                                  "the image's code (the files md5-tree-v2 hashes)"))
            elif got != ch.hash and d.name == f"code-{ch.hash[:8]}":
                content.append(Item(got, d, "(md5-tree-v2)", f"{ch.hash} (.code-hash.json)",
                                    note="the image's code is not what its hash records"))
    unresolved = []
    for _, system, b in ((o, s, b) for o in [org] for s in org.systems for b in s.benchmarks):
        for leaf in _all_leaves(b):
            if leaf.pointer is None:
                continue
            h = leaf.pointer[1]
            ch = images.get(f"code-{h[:8]}")
            if ch is None or ch.hash != h:
                where = f"{org.name}/code-{h[:8]}/.code-hash.json with hash {h}"
                got = "no such image" if f"code-{h[:8]}" not in images else (
                    "an unreadable .code-hash.json" if ch is None else f"hash {ch.hash}")
                unresolved.append(Item(got, leaf.path / ".mlps-code-image", "(pointer)", where))
    return unresolved, inconsistent, content, empty


def _all_leaves(b) -> list:
    if isinstance(b, v3tree.Training):
        return b.runs + b.datasize + b.datagen
    if isinstance(b, v3tree.Checkpointing):
        return b.leaves
    return []


def _system_scope(system: v3tree.System, org: v3tree.Org) -> Scope:
    facts = {"result.division": org.division, "description.yaml": system.yaml_path is not None,
             "description.pdf": system.pdf_path is not None}
    where = system.yaml_path or system.path
    if system.problem is not None:
        facts["description.problems"] = [_item(system.problem)]
    elif system.doc is not None:
        facts["description.problems"] = [Item(a, system.yaml_path, f"system_under_test.{f}", e)
                                       for f, e, a in v3system.problems(system.doc)]
        facts["description.hardware"] = [Item(a, system.yaml_path, f"system_under_test.{f}", e)
                                       for f, e, a in v3system.hardware_problems(system.doc)]
    sources = {"description.yaml": (where, "systems/<system>.yaml"), "description.pdf": (where, "systems/<system>.pdf")}
    return Scope("tree", where, facts, sources)
