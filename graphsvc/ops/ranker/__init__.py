"""The ranker's registry for an operator: what is served and why, its moves, and how each
version does online."""
