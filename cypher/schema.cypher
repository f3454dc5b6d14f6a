// Schema: the constraints and indexes every query relies on, the start-up work that keeps
// older data in step with them, and the statement that says the database is online.

// name: schema
// The constraints and indexes, applied at every start-up; each statement is idempotent and runs
// alone (statements() splits them on ';').
// Locking: Neo4j's schema locks, per statement.
// Params: none.
// Returns nothing.
CREATE CONSTRAINT user_id_unique IF NOT EXISTS
FOR (u:User) REQUIRE u.id IS UNIQUE;

CREATE RANGE INDEX follows_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.since);

// Each user's lists in their own orders: every FOLLOWS carries the ids of its ends (src, the
// follower; dst, the followed), so that a page of a list is a seek in one of these indexes at
// the cursor's position, read in the index's order and stopped at the page's size: the same
// work at any depth of any list (pages/followers_page). The two by id let the common
// lists walk one list in id order and test each entry against the other list in one seek
// (pages/common_followers). Edges written before the ends were carried get them once,
// at start-up (schema/follow_ends).
CREATE RANGE INDEX follows_dst_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.dst, r.since, r.src);

CREATE RANGE INDEX follows_src_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.src, r.since, r.dst);

CREATE RANGE INDEX follows_dst_src IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.dst, r.src);

CREATE RANGE INDEX follows_src_dst IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.src, r.dst);

// The follows that ring their author's bell (relations/follow stores `notify` only when true,
// so only they are in this index): a page of an author's bell-ringers is a seek in id order
// (bells/ringers_page), whatever the author's follower count.
CREATE RANGE INDEX follows_bells IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.dst, r.notify, r.src);

// Pending follow requests carry their ends' ids as follows do: a page of the requests made to a
// user, or by one, is a seek (requests/incoming_page, requests/sent_page).
CREATE RANGE INDEX requests_dst_since IF NOT EXISTS
FOR ()-[r:REQUESTS]-() ON (r.dst, r.since, r.src);

CREATE RANGE INDEX requests_src_since IF NOT EXISTS
FOR ()-[r:REQUESTS]-() ON (r.src, r.since, r.dst);

// A follow that ended leaves a tombstone with its ends' ids, as follows carry them: "what
// changed in a user's lists since T" is a seek from T in each (history/follower_changes), and
// the worker forgets those past CHANGES_RETENTION by the one on `at` alone (history/expire).
CREATE RANGE INDEX unfollowed_dst_since IF NOT EXISTS
FOR ()-[r:UNFOLLOWED]-() ON (r.dst, r.since, r.src);

CREATE RANGE INDEX unfollowed_src_since IF NOT EXISTS
FOR ()-[r:UNFOLLOWED]-() ON (r.src, r.since, r.dst);

CREATE RANGE INDEX unfollowed_dst_at IF NOT EXISTS
FOR ()-[r:UNFOLLOWED]-() ON (r.dst, r.at, r.src);

CREATE RANGE INDEX unfollowed_src_at IF NOT EXISTS
FOR ()-[r:UNFOLLOWED]-() ON (r.src, r.at, r.dst);

CREATE RANGE INDEX unfollowed_at IF NOT EXISTS
FOR ()-[r:UNFOLLOWED]-() ON (r.at);

CREATE CONSTRAINT checkpoint_name_unique IF NOT EXISTS
FOR (c:Checkpoint) REQUIRE c.name IS UNIQUE;

CREATE CONSTRAINT graph_event_id_unique IF NOT EXISTS
FOR (e:GraphEvent) REQUIRE e.id IS UNIQUE;

CREATE RANGE INDEX graph_event_version IF NOT EXISTS
FOR (e:GraphEvent) ON (e.v);

CREATE CONSTRAINT ranker_model_version IF NOT EXISTS
FOR (m:RankerModel) REQUIRE (m.name, m.version) IS UNIQUE;

// The pointer to the served ranker model, one per model name (ranker_models/save).
CREATE CONSTRAINT ranker_serving_name IF NOT EXISTS
FOR (p:RankerServing) REQUIRE p.name IS UNIQUE;

CREATE CONSTRAINT api_key_id_unique IF NOT EXISTS
FOR (k:ApiKey) REQUIRE k.id IS UNIQUE;

// The keys bound to a user, revoked together when the user is erased
// (moderation/erase_begin).
CREATE RANGE INDEX api_key_user IF NOT EXISTS
FOR (k:ApiKey) ON (k.user);

// Curated lists, found by their ids (lists/*); each is reached from its owner as well.
CREATE CONSTRAINT list_id_unique IF NOT EXISTS
FOR (l:List) REQUIRE l.id IS UNIQUE;

CREATE CONSTRAINT subscription_key_unique IF NOT EXISTS
FOR (s:Subscription) REQUIRE s.key IS UNIQUE;

// A list's members in their order: every HAS_MEMBER carries its ends' ids (list, member), so a
// page of members is a seek at the cursor's position (lists/members_page). Memberships written
// before they carried them get them once, at start-up (schema/member_ends).
CREATE RANGE INDEX members_list_since IF NOT EXISTS
FOR ()-[k:HAS_MEMBER]-() ON (k.list, k.since, k.member);

// name: await_indexes
// Wait (up to 600 s) until every index is online, e.g. after a bulk import.
// Locking: none.
// Params: none.
// Returns nothing.
CALL db.awaitIndexes(600)

// name: follow_ends
// Give every FOLLOWS written before the edges carried their ends' ids the ids of its ends, src
// (the follower's) and dst (the followed user's), which every write of an edge sets
// (relations/follow, the bulk family). Runs once per database, at start-up, before
// schema/follow_ends_mark records that it ran to its end.
// Reads every edge once (O(edges)), in its own transactions of 10,000 edges each (an
// auto-commit statement): stopped part-way, the next start carries on with the edges left.
// Locking: each edge set is locked (a relationship's property write), not its users; a live
// write of the same edge waits for that batch.
// Params: none.
// Returns nothing.
MATCH (a:User)-[r:FOLLOWS]->(b:User)
WHERE r.src IS NULL OR r.dst IS NULL
CALL (a, r, b) {
  SET r.src = a.id, r.dst = b.id
} IN TRANSACTIONS OF 10000 ROWS

// name: member_ends
// Give every HAS_MEMBER written before memberships carried their ends' ids the ids of its
// ends, list and member (lists/change_members sets them), in transactions of 10,000: stopped
// part-way, the next start carries on. Runs at start-up until schema/member_ends_mark records
// that it ran to its end.
// Locking: each membership set is locked (a relationship's property write).
// Params: none.
// Returns nothing.
MATCH (l:List)-[k:HAS_MEMBER]->(m:User)
WHERE k.list IS NULL OR k.member IS NULL
CALL (l, k, m) {
  SET k.list = l.id, k.member = m.id
} IN TRANSACTIONS OF 10000 ROWS

// name: member_ends_mark
// Record that every HAS_MEMBER carries its ends' ids (schema/member_ends ran to its end).
// Locking: the Checkpoint node named 'member_ends' (created once).
// Params: none.
// Returns nothing.
MERGE (cp:Checkpoint {name: 'member_ends'})

// name: member_ends_done
// Whether every HAS_MEMBER carries its ends' ids: true once schema/member_ends has run to its
// end on this database.
// Locking: none (a read).
// Params: none.
// Returns: done.
OPTIONAL MATCH (cp:Checkpoint {name: 'member_ends'})
RETURN cp IS NOT NULL AS done

// name: follow_ends_mark
// Record that every FOLLOWS carries its ends' ids (schema/follow_ends ran to its end), so later
// starts skip that walk of every edge.
// Locking: the Checkpoint node named 'follow_ends' (created once).
// Params: none.
// Returns nothing.
MERGE (cp:Checkpoint {name: 'follow_ends'})

// name: follow_ends_done
// Whether every FOLLOWS carries the ids of its ends (src, dst), which the list indexes of
// schema/schema order by: true once schema/follow_ends has run to its end on this database (the
// mark it leaves: a Checkpoint named 'follow_ends').
// Locking: none (a read).
// Params: none.
// Returns: done.
OPTIONAL MATCH (cp:Checkpoint {name: 'follow_ends'})
RETURN cp IS NOT NULL AS done

// name: ping
// The database runs a statement: it is online, not merely reachable over Bolt (a database
// starting, or recovering after a crash, refuses transactions while Bolt already answers).
// Asked by the readiness probe.
// Locking: none (touches no data).
// Params: none.
// Returns: ok (true).
RETURN true AS ok
