"""The mirror and the timelines checked against the graph, and reconciled."""
