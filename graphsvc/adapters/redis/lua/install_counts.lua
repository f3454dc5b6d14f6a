-- Exact counts from a Neo4j snapshot, kept unless the mirror has a later reading.
-- KEYS: meta. ARGV: snapshot read at, count sequence, the five counts (fr, fg, fa, ga, mu)
if below_floor(KEYS[1], ARGV[1]) then return 0 end
set_counts(KEYS[1], ARGV[1], ARGV[2], counts_from(3))
return 1
