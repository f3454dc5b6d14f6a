"""``graphsvc ranker``: the group of the suggestion ranker's commands, in two modules: its
models as an operator sees and moves them (``models``), and training and evaluating it
(``training``)."""

from graphsvc.ops.cli.ranker import training as _training  # noqa: F401  (its commands join the group)
from graphsvc.ops.cli.ranker.models import app

__all__ = ["app"]
