-- Exact counts read under the user's lock after a change that was not numbered (a status
-- propagation, an erasure): they replace loaded counts if later, and are parked for the next
-- snapshot when counts are cold.
-- KEYS: meta. ARGV: read at, count sequence, the five counts (fr, fg, fa, ga, mu)
refresh_counts(KEYS[1], ARGV[1], ARGV[2], counts_from(3))
return 1
