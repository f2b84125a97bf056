"""The rule engine: rules/<ruleset>/*.yaml, layered with `extends:`, checked by one small evaluator.

A rule file:
    schema_version: 1
    extends: [v1.0/common.yaml]        # other rule files (relative to rules/), loaded first
    layer: kind                        # optional: another kind's rules (kv_cache.yaml), loaded by name, no workload layer
    drops: [structure-run-count]       # optional: rules of the files it extends this round no longer holds (their
                                       # clause is another rule's now: tests/rules hold each id to an existing rule)
    params: {runs_required: 5}         # values rules refer to; later layers override earlier ones
    rules:
      - id: structure-run-count        # stable kebab-case id, unique over the assembled set
        applies_to: benchmark          # tree | benchmark | run | host (or a list of them)
        field: runs.count              # a declared fact (suite/training/facts.yaml; built by suite/training/check/facts.py)
        op: eq                         # from the closed registry OPS below
        value: {param: runs_required}  # literal | {fact: name} | {param: name} | {params: [a, b]}
                                       # (+ rel/abs for op close, of/say for op none_equal)
        when: {field: single_run, op: eq, value: false}   # optional precondition(s)
        severity: error                # info | warning | error
        effect: invalid                # closed | open | invalid: what the result still qualifies for
        message: exactly 5 runs per benchmark
        explain: dataset.size_basis      # optional: a fact whose text follows the values in the finding
        guideline: "3.2 ..."             # optional: the section of the submission guidelines it enforces
        required: true                   # optional: a missing fact fails the rule (default: skips it)

Every fact a rule names (field, when.field, {fact: ...}, explain) must be declared in rules/facts.yaml or a
registered kind's suite/<kind>/facts.yaml (suite/rules/vocabulary.py) for the rule's scopes; an unknown
one is a RuleError at load time.

Layers for a benchmark: <ruleset>/common.yaml -> <ruleset>/closed.yaml and open.yaml (open.yaml
only, for results in the open division) -> <ruleset>/<workload>.yaml. A file the round's folder
lacks is the round's it extends (rule_file; a workload layer only for a workload the round lists),
and `<round>/<file>` names are found where the round is (rulesets.roots(): $SUITE_RULES_PATH first). No eval, no exec: an
operator is a name in OPS. Unknown op, unknown key, duplicate id, undefined param or cycle in
`extends` -> RuleError naming the file and the rule id, at load time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from suite import files
from suite.errors import RuleError
from suite.rules import rulesets, vocabulary
from suite.rules.findings import EFFECTS, SEVERITIES
from suite.rules.ops import EVALUATED_WHEN_MISSING, OPS, Item, Violation, close_enough  # noqa: F401 (re-exported)

SCOPES = ("tree", "benchmark", "run", "host")
RULE_KEYS = {"id", "applies_to", "field", "op", "value", "when", "severity", "effect", "message", "explain",
             "guideline", "required"}
REQUIRED_KEYS = ("id", "applies_to", "field", "op", "severity", "effect", "message")
FILE_KEYS = {"schema_version", "description", "extends", "params", "rules", "layer", "drops"}
FILE_LAYERS = ("kind",)   # `layer: kind`: another kind's rule file, loaded by name by that kind, never a workload layer
VALUE_KEYS = {"fact", "param", "params", "value", "rel", "abs", "of", "say"}
WORDS_KEYS = ("of", "say")     # none_equal's words: "12 of 16 <of> <say>" (hosts / report 0 GiB memory)
ID_RE = re.compile(r"^(?:[a-z0-9]+(?:-[a-z0-9]+)*"          # our own: stable kebab-case
                   r"|(?:\d+(?:\.\d+)+|[A-Z]+-\d+)-[a-z][A-Za-z0-9]*)$")  # a round's: <Rules.md section>-<staff camelCase name>


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Rule:
    id: str
    applies_to: tuple[str, ...]
    field: str
    op: str
    value: object
    when: tuple
    severity: str
    effect: str
    message: str
    source: str
    explain: str | None = None       # a fact whose text is appended to each finding's message
    guideline: str | None = None     # the submission-guidelines section the rule enforces
    required: bool = False           # a missing fact is a violation, not a reason to skip the rule


@dataclass
class RuleSet:
    ruleset: str
    division: str | None
    workload: str | None
    rules: list[Rule]
    params: dict
    files: list[str] = field(default_factory=list)

    def for_scope(self, scope: str) -> list[Rule]:
        return [r for r in self.rules if scope in r.applies_to]



# --------------------------------------------------------------------------- evaluation


class Scope:
    """What a rule looks at: facts by name, and the file each fact came from."""

    def __init__(self, kind: str, path, facts: dict, sources: dict | None = None, docs: dict | None = None):
        self.kind, self.path, self.facts = kind, path, facts
        self.sources = sources or {}      # fact name or prefix -> file path
        self.docs = docs or {}            # prefix -> (document, file path), e.g. "summary" -> (dict, path)

    def get(self, name: str):
        if name in self.facts:
            return self.facts[name]
        prefix, _, rest = name.partition(".")
        if prefix in self.docs and rest:
            doc = self.docs[prefix][0]
            for key in rest.split("."):
                if not isinstance(doc, dict) or key not in doc:
                    return None
                doc = doc[key]
            return doc
        if prefix in self.docs and not rest:
            return self.docs[prefix][0]
        return None

    def source(self, name: str):
        """(file, field as named inside that file) for a fact."""
        if name in self.sources:
            src = self.sources[name]
            return (src if not isinstance(src, tuple) else src[0]), (src[1] if isinstance(src, tuple) else name)
        prefix, _, rest = name.partition(".")
        if prefix in self.docs:
            return self.docs[prefix][1], rest or "(top level)"
        return self.path, name


def resolve(value, scope: Scope, params: dict):
    """(value, options) for a rule's `value`; value None means 'cannot compare here'."""
    if not isinstance(value, dict):
        return value, {}
    opts = {k: value[k] for k in ("rel", "abs", *WORDS_KEYS) if k in value}
    if "fact" in value:
        return scope.get(value["fact"]), opts
    if "param" in value:
        return params.get(value["param"]), opts
    if "params" in value:
        out = []
        for name in value["params"]:
            out.extend(params.get(name) or [])
        return out, opts
    return value.get("value"), opts


def violations(rule_like: dict | Rule, scope: Scope, params: dict) -> list[Violation] | None:
    """None when the rule does not apply (field missing, comparison value missing)."""
    fld = rule_like["field"] if isinstance(rule_like, dict) else rule_like.field
    op = rule_like["op"] if isinstance(rule_like, dict) else rule_like.op
    raw = rule_like.get("value") if isinstance(rule_like, dict) else rule_like.value
    required = rule_like.get("required", False) if isinstance(rule_like, dict) else rule_like.required
    actual = scope.get(fld)
    if actual is None and op not in EVALUATED_WHEN_MISSING and not required:
        return None
    value, opts = resolve(raw, scope, params)
    if value is None and op not in ("exists", "empty", "all_equal") and raw is not None:
        return None
    return OPS[op](actual, value, opts)


def applies(rule: Rule, scope: Scope, params: dict) -> bool:
    for cond in rule.when:
        v = violations(cond, scope, params)
        if v is None or v:
            return False
    return True


# --------------------------------------------------------------------------- loading


def rules_dir() -> Path:
    return rulesets.root()


def rule_path(rel: str) -> Path:
    """The file `<round>/<file>` names: in the folder of that round wherever it was found
    (rulesets.roots()), else under the package's rules/."""
    name, _, rest = rel.partition("/")
    found = rulesets.discover()
    return found[name].folder / rest if name in found and rest else rules_dir() / rel


def rule_file(ruleset: str, name: str, inherit: bool = True) -> str | None:
    """`<round>/<name>` of the first round of `ruleset`'s extends chain whose folder has the file
    (only `ruleset`'s own folder when not `inherit`), or None."""
    found = rulesets.discover()
    chain = found[ruleset].chain if ruleset in found else (ruleset,)
    for r in chain if inherit else chain[:1]:
        if rule_path(f"{r}/{name}").is_file():
            return f"{r}/{name}"
    return None


LAYERS = ("common", "closed", "open")
NOT_RULES = (rulesets.FILE,)      # a folder's ruleset.yaml holds its constants, not rules


def workload_layers(ruleset: str) -> list[str]:
    """The workload names with a layer of their own in `ruleset` (<workload>.yaml): every rule file
    there but common/closed/open, ruleset.yaml and another kind's file (`layer: kind`)."""
    found = rulesets.discover()
    d = found[ruleset].folder if ruleset in found else rules_dir() / ruleset
    own = {p.stem for p in d.glob("*.yaml") if p.stem not in LAYERS and p.name not in NOT_RULES and not _kind_file(p)}
    listed = found[ruleset].workloads if ruleset in found else ()
    return sorted(own | {w for w in listed if rule_file(ruleset, f"{w}.yaml")})


def _kind_file(path: Path) -> bool:
    doc = _read(str(path), path.stat().st_mtime_ns)
    return isinstance(doc, dict) and doc.get("layer") == "kind"


def seeded_params(ruleset: str) -> dict:
    """The params the ruleset's ruleset.yaml gives its rule files (none for a folder without one)."""
    found = rulesets.discover()
    return found[ruleset].params() if ruleset in found else {}


def _check_value(value, where: str, op: str, params: dict | None = None):
    if isinstance(value, dict):
        unknown = set(value) - VALUE_KEYS
        if unknown:
            raise RuleError(f"{where}: value: unknown key {', '.join(sorted(unknown))}; "
                            f"expected one of {', '.join(sorted(VALUE_KEYS))}")
        refs = [k for k in ("fact", "param", "params", "value") if k in value]
        if len(refs) != 1:
            raise RuleError(f"{where}: value: expected exactly one of fact, param, params, value, got {refs or 'none'}")
        if ("rel" in value or "abs" in value) and op != "close":
            raise RuleError(f"{where}: value: expected rel/abs only with op close, got op {op}")
        if any(k in value for k in WORDS_KEYS) and op != "none_equal":
            raise RuleError(f"{where}: value: expected of/say only with op none_equal, got op {op}")
    if op == "range" and not (isinstance(value, list) and len(value) == 2):
        raise RuleError(f"{where}: value: expected [low, high] for op range, got {value!r}")
    if op == "schema":
        if isinstance(value, dict) and "param" in value:
            if params is None:
                return          # checked again once the layers' params are known
            value = params.get(value["param"])
        if not isinstance(value, str) or not files.schema_path(value).is_file():
            raise RuleError(f"{where}: value: expected a schema name (suite/schemas, suite/<kind>/schemas), "
                            f"got {value!r}")


def _load_file(rel: str, chain: tuple[str, ...], seen: dict[str, dict]) -> list[tuple[str, dict]]:
    """[(file, doc)] for `rel` and everything it extends, extends first, each file once."""
    if rel in chain:
        raise RuleError(f"{rule_path(rel)}: extends: expected no cycle, got {' -> '.join(chain + (rel,))}")
    if rel in seen:
        return []
    path = rule_path(rel)
    if not path.is_file():
        where = f"{rule_path(chain[-1])}: extends" if chain else str(path)
        raise RuleError(f"{where}: expected an existing rule file, got {rel!r}")
    doc = _read(str(path), path.stat().st_mtime_ns)
    if not isinstance(doc, dict):
        raise RuleError(f"{path}: (top level): expected a mapping, got {type(doc).__name__}")
    unknown = set(doc) - FILE_KEYS
    if unknown:
        raise RuleError(f"{path}: unknown key {', '.join(sorted(unknown))}; expected one of {', '.join(sorted(FILE_KEYS))}")
    if "layer" in doc and doc["layer"] not in FILE_LAYERS:
        raise RuleError(f"{path}: layer: expected one of {', '.join(FILE_LAYERS)}, got {doc['layer']!r}")
    rule_list = doc.get("rules")
    for i, r in enumerate(rule_list if isinstance(rule_list, list) else []):
        if isinstance(r, dict):   # shape problems first: these messages name the rule id
            _check_shape(r, f"{path}: rule {r.get('id', f'#{i + 1}')}")
    _validated(str(path), path.stat().st_mtime_ns)
    seen[rel] = doc
    out = []
    for parent in doc.get("extends") or []:
        out += _load_file(parent, chain + (rel,), seen)
    out.append((rel, doc))
    return out


@lru_cache(maxsize=256)
def _read(path: str, mtime_ns: int):
    """A rule file's YAML (libyaml when available), cached by path and modification time."""
    from suite.rules.yamlload import load_yaml_fast
    return load_yaml_fast(Path(path), error=RuleError)


@lru_cache(maxsize=256)
def _validated(path: str, mtime_ns: int) -> bool:
    files.validate(_read(path, mtime_ns), "rules", path, RuleError)
    return True


def layer_files(ruleset: str, division: str | None, workload: str | None) -> list[str]:
    found = rulesets.discover()
    if ruleset not in found and not (rules_dir() / ruleset).is_dir():
        have = sorted({*found, *(p.name for p in rules_dir().iterdir() if p.is_dir())})
        raise RuleError(f"ruleset: expected one of {', '.join(have)}, got {ruleset!r}")
    names = ["common.yaml"] + (["open.yaml"] if division == "open" else ["closed.yaml", "open.yaml"])
    rels = [rule_file(ruleset, n) for n in names]
    if workload and f"{workload}.yaml" not in NOT_RULES:
        listed = ruleset in found and workload in found[ruleset].workloads
        rels.append(rule_file(ruleset, f"{workload}.yaml", inherit=listed))
    return [r for r in rels if r]


@lru_cache(maxsize=64)
def load(ruleset: str, division: str | None = None, workload: str | None = None) -> RuleSet:
    """The assembled, checked rule set for one benchmark."""
    return _assemble(ruleset, division, workload, tuple(layer_files(ruleset, division, workload)))


@lru_cache(maxsize=16)
def load_layers(ruleset: str, names: tuple[str, ...], division: str | None = None) -> RuleSet:
    """A rule set of the named files of `ruleset` (and what they extend) only: for results that are
    not training benchmarks (checkpointing: v2.0/checkpointing*.yaml). A file the round's folder
    lacks is the round's it extends."""
    return _assemble(ruleset, division, None, tuple(rule_file(ruleset, n) or f"{ruleset}/{n}" for n in names))


def _assemble(ruleset: str, division: str | None, workload: str | None, rels: tuple[str, ...]) -> RuleSet:
    seen: dict[str, dict] = {}
    loaded: list[tuple[str, dict]] = []
    for rel in rels:
        loaded += _load_file(rel, (), seen)
    params: dict = seeded_params(ruleset)
    rules: list[Rule] = []
    where_id: dict[str, str] = {}
    for rel, doc in loaded:
        params.update(doc.get("params") or {})
    for rel, doc in loaded:
        path = rule_path(rel)
        for r in doc.get("rules") or []:
            rules.append(_rule(r, path, params, where_id))
    return RuleSet(ruleset, division, workload, _dropped(rules, loaded), params, [rel for rel, _ in loaded])


def _dropped(rules: list[Rule], loaded: list[tuple[str, dict]]) -> list[Rule]:
    """The rules less those a loaded file `drops` (a clause another rule of the round holds now; an id
    of a layer not loaded here, e.g. closed.yaml's for the open division, drops nothing)."""
    drops = {i for _, doc in loaded for i in doc.get("drops") or []}
    return [r for r in rules if r.id not in drops]


def _check_shape(r: dict, where: str) -> None:
    """Everything about one rule that needs no other file; messages name the file and rule id."""
    bad = set(r) - RULE_KEYS
    if bad:
        raise RuleError(f"{where}: unknown key {', '.join(sorted(bad))}; expected one of {', '.join(sorted(RULE_KEYS))}")
    missing = [k for k in REQUIRED_KEYS if k not in r]
    if missing:
        raise RuleError(f"{where}: expected keys {', '.join(missing)}, got none")
    rid = r["id"]
    if not isinstance(rid, str) or not ID_RE.match(rid):
        raise RuleError(f"{where}: id: expected kebab-case, got {rid!r}")
    if r["op"] not in OPS:
        raise RuleError(f"{where}: op: expected one of {', '.join(sorted(OPS))}, got {r['op']!r}")
    scopes = r["applies_to"] if isinstance(r["applies_to"], list) else [r["applies_to"]]
    for s in scopes:
        if s not in SCOPES:
            raise RuleError(f"{where}: applies_to: expected one of {', '.join(SCOPES)}, got {s!r}")
    if r["severity"] not in SEVERITIES:
        raise RuleError(f"{where}: severity: expected one of {', '.join(SEVERITIES)}, got {r['severity']!r}")
    if r["effect"] not in EFFECTS:
        raise RuleError(f"{where}: effect: expected one of {', '.join(EFFECTS)}, got {r['effect']!r}")
    _check_value(r.get("value"), where, r["op"], None if _param_refs(r.get("value")) else {})
    for c in _conds(r):
        if not isinstance(c, dict) or set(c) - {"field", "op", "value"} or "field" not in c or "op" not in c:
            raise RuleError(f"{where}: when: expected {{field, op, value}}, got {c!r}")
        if c["op"] not in OPS:
            raise RuleError(f"{where}: when.op: expected one of {', '.join(sorted(OPS))}, got {c['op']!r}")
        _check_value(c.get("value"), f"{where}: when", c["op"], {})


def _rule(r: dict, path: Path, params: dict, where_id: dict[str, str]) -> Rule:
    """A Rule from a shape-checked dict: ids unique over the whole set, params defined."""
    rid = r["id"]
    where = f"{path}: rule {rid}"
    if rid in where_id:
        raise RuleError(f"{where}: id: expected unique, got a duplicate of {where_id[rid]}")
    where_id[rid] = str(path)
    for ref in _param_refs(r.get("value")) + [p for c in _conds(r) for p in _param_refs(c.get("value"))]:
        if ref not in params:
            raise RuleError(f"{where}: value: expected a defined param, got {ref!r}")
    _check_value(r.get("value"), where, r["op"], params)
    scopes = tuple(r["applies_to"]) if isinstance(r["applies_to"], list) else (r["applies_to"],)
    for name in fact_names(r):
        vocabulary.check(name, scopes, where)
    return Rule(rid, scopes, r["field"], r["op"], r.get("value"), tuple(_conds(r)), r["severity"], r["effect"],
                r["message"], str(path), r.get("explain"), r.get("guideline"), bool(r.get("required", False)))


def fact_names(r: dict) -> list:
    """Every fact a rule names: its field, its conditions' fields, a {fact: ...} value, explain."""
    names = [r["field"]] + [c["field"] for c in _conds(r)]
    names += [v["fact"] for v in [r.get("value")] + [c.get("value") for c in _conds(r)]
              if isinstance(v, dict) and "fact" in v]
    return names + ([r["explain"]] if r.get("explain") is not None else [])


def _conds(r: dict) -> list:
    w = r.get("when")
    return [] if w is None else (w if isinstance(w, list) else [w])


def _param_refs(value) -> list[str]:
    if isinstance(value, dict):
        if "param" in value:
            return [value["param"]]
        if "params" in value:
            return list(value["params"])
    return []


def all_rule_files() -> list[Path]:
    return sorted(p for p in rules_dir().glob("*/*.yaml") if p.name not in NOT_RULES)


def all_rule_ids(benchmark: str = rulesets.MLPERF) -> dict[str, Rule]:
    """Every rule id of every ruleset/division/workload combination that exists on disk, for the
    rulesets of `benchmark` (MLPerf Storage: what `suite check` holds a tree to; or tpcx-ai)."""
    out: dict[str, Rule] = {}
    names = rulesets.names(benchmark, rules_dir())
    for rs_dir in sorted(p for p in rules_dir().iterdir() if p.is_dir() and p.name in names):
        workloads_here = workload_layers(rs_dir.name)
        for division in ("closed", "open"):
            for wl in workloads_here or [None]:
                for r in load(rs_dir.name, division, wl).rules:
                    out.setdefault(r.id, r)
    return out
