"""Background work, out of the serving processes: the outbox relay, the timeline event
consumer, the timeline and moderation jobs, the interaction flusher, and the worker process
that runs them all (``graphsvc worker``). ``bootstrap`` builds them beside the services they
use; a serving process builds them too, but runs none of their loops."""
