"""The rule engine, the findings vocabulary and the bounded YAML loader, shared by `suite check`
and `suite run` (below both: nothing here imports either)."""

RULESETS = ("v0.5", "v1.0", "v2.0")     # the directories under rules/: MLPerf Storage versions
