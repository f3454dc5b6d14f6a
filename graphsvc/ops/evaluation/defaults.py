"""What an evaluation runs when not told otherwise, apart from the evaluation itself so that
the CLI's help can say it without loading the evaluation (and the stores' drivers with it)."""

DEFAULT_USERS = 1_000
DEFAULT_SEEDS = (1, 2, 3)
