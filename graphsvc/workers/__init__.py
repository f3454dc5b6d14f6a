"""Background work, out of the serving processes: ``graphsvc worker``."""
