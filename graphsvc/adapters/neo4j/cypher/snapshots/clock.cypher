// clock: Neo4j's clock now, in microseconds, as snapshot.cypher and counts.cypher read it
// (`at`). Read after a commit, it is later than every change that commit made: the floor a
// load puts under the mirror of the users it wrote past the mirror (lua/drop.lua).
// Params: none. Returns at.
WITH datetime.realtime() AS now
RETURN now.epochSeconds * 1000000 + now.microsecond AS at
