"""`suite check`: walk a tree, recognise its layout, apply the rules."""
