"""`suite submission`: assemble an MLPerf Storage-style submission tree from `suite run` results.

layout (ruleset layouts as data, the tree marker), host (facts read from this host), system (the
system description and its TODOs), evidence (what a results dir says), place (copies that lose
nothing), create/add/describe/package (the subcommands), manifest (SHA256SUMS and its check),
cli (the argparse wiring `suite.cli` calls).
"""
