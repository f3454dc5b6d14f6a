// await_indexes: wait (up to 600 s) until every index is online, e.g. after a bulk import.
CALL db.awaitIndexes(600)
