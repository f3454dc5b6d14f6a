// wipe: delete every node and relationship, in batches (only the evaluation's own server is
// ever wiped: `graphsvc eval-pymk`). Runs as an auto-commit transaction.
MATCH (n)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
