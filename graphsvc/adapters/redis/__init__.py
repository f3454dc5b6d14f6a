"""The Redis adapter: the mirror of hot lists and exact counts (Lua scripts in ``lua/``), the
event stream, the interaction buffer and the suggestion cache."""
