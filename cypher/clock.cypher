// clock: Neo4j's current time in microseconds, the clock mirror counts are stamped with.
WITH datetime.realtime() AS now
RETURN now.epochSeconds * 1000000 + now.microsecond AS now_us
