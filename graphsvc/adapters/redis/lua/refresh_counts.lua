-- Exact counts read after a commit that changed them (a status propagation, an erasure): they
-- refresh loaded counts if later, and are parked for the next snapshot when counts are cold.
-- KEYS: meta. ARGV: read at, the five counts (fr, fg, fa, ga, mu)
refresh_counts(KEYS[1], ARGV[1], counts_from(2))
return 1
