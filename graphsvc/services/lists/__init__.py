"""Curated lists and what hangs on them: the owner's lists and their members (``curated``), their
timelines (``timelines``), the owners' exclusive lists (``exclusions``), follows of lists
(``follows``) and subscriptions to moderation lists (``subscriptions``), and the events of
public lists (``events``)."""
