-- Exact counts from a Neo4j snapshot, kept unless the mirror has a later reading.
-- KEYS: meta. ARGV: snapshot read at, followers, following
set_counts(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1
