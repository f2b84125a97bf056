"""The rule engine, the findings vocabulary and the bounded YAML loader, shared by `suite check`
and `suite run` (below both: nothing here imports either). The rulesets (what rules/*/ holds):
suite.rules.rulesets."""
