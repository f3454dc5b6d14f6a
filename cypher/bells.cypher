// Bells: the follows with `notify` on (relations/follow), whose followers get a `posted`
// notification for each new post of the author (workers/bell_jobs.py), and what a
// notification's delivery checks.

// name: ringers_page
// The users who ring $author's bell, in id order after $after, at most $limit: a seek in the
// index follows_bells (schema/schema) at that position, read in the index's order (ordered by
// all its keys, so Neo4j needs no sort) and stopped at $limit: the same work at any depth
// however many ring the bell. An inactive follower's edge (flagged `x`: suspended or spam) is
// reported so the job skips it without losing its place.
// Locking: none (a read, auto-commit).
// Params: $author, $after ('' for the first page), $limit.
// Returns: one row (a thousand rows cost the Python driver several times what one row of two
// lists does): ids (in id order), inactive (those of them whose edge is flagged).
MATCH ()-[f:FOLLOWS]->()
USING INDEX f:FOLLOWS(dst, notify, src)
WHERE f.dst = $author AND f.notify = true AND f.src > $after
WITH f
ORDER BY f.dst, f.notify, f.src
LIMIT $limit
RETURN collect(f.src) AS ids, [id IN collect(CASE WHEN f.x THEN f.src END) WHERE id IS NOT NULL]
       AS inactive

// name: count
// How many ring $author's bell (the bench's and the checks' figure).
// Locking: none (a read, auto-commit).
// Cost: the author's entries of the index follows_bells.
// Params: $author.
// Returns: ringers.
MATCH ()-[f:FOLLOWS]->()
WHERE f.dst = $author AND f.notify = true
RETURN count(f) AS ringers

// name: blocked_among
// Which of $authors are in a block with $reader, either way: a notification of theirs is not
// delivered (it was rung before the block). Each test is an expand-into between two known
// nodes, from the side with fewer blocks.
// Locking: none (a read, auto-commit).
// Params: $reader, $authors (a list of user ids, at most a notification batch's).
// Returns: blocked (a list of author ids).
OPTIONAL MATCH (me:User {id: $reader})
UNWIND $authors AS author
MATCH (a:User {id: author})
WITH me, a
WHERE me IS NOT NULL AND EXISTS { (me)-[:BLOCKS]-(a) }
RETURN collect(a.id) AS blocked
