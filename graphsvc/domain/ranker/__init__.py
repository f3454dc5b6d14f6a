"""The suggestion ranker as rules: how a model scores candidates (``scoring``), how a training
judges one (``validation``), when one is trained and who is ranked by which (``registry``),
how a promoted one is tried on users (``trial``), and its online figures per version."""
