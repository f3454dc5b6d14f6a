-- Exact counts from a Neo4j snapshot, kept only if newer than what the mirror has.
-- KEYS: meta. ARGV: snapshot version, followers, following
set_counts(KEYS[1], ARGV[1], ARGV[2], ARGV[3])
return 1
