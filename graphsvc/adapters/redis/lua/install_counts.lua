-- Exact counts from a Neo4j snapshot, kept unless the mirror has a later reading.
-- KEYS: meta. ARGV: snapshot read at, the five counts (fr, fg, fa, ga, mu)
if below_floor(KEYS[1], ARGV[1]) then return 0 end
set_counts(KEYS[1], ARGV[1], counts_from(2))
return 1
