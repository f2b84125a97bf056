"""The rule engine and the findings vocabulary, shared by `suite check` and `suite run`."""
