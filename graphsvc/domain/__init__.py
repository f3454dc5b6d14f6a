"""Plain values and rules of the follow graph: no I/O, no framework, importable by anyone."""
