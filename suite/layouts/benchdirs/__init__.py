"""The published v0.5-v2.0 benchmark dirs (DDN, Micron, WEKA, ... layouts: tree) and our own `suite run`
results dirs as read by the same walk: their benchmark nodes, runs and hosts (tree), what a node is
(identify), the system description files (systems), the code dirs (code), the generation logs (genlogs);
the layout plugin (layout), the tree-level facts it checks (facts) and its check (check: the walk once,
each benchmark node handed to the kind that claims it, its own findings beside)."""
