"""The ranker's training in the worker: the examples it learns from and is judged on, the
textbook heuristics it must beat, the fit, and the trial of a promoted model."""
