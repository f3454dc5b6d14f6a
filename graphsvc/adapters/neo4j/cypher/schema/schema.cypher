// Applied at every start-up; each statement is idempotent.
CREATE CONSTRAINT user_id_unique IF NOT EXISTS
FOR (u:User) REQUIRE u.id IS UNIQUE;

CREATE RANGE INDEX follows_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.since);

// Each user's lists in their own orders: every FOLLOWS carries the ids of its ends (src, the
// follower; dst, the followed), so that a page of a list is a seek in one of these indexes at
// the cursor's position, read in the index's order and stopped at the page's size: the same
// work at any depth of any list (lists/followers_page.cypher). The two by id let the common
// lists walk one list in id order and test each entry against the other list in one seek
// (lists/common_followers.cypher). Edges written before the ends were carried get them once,
// at start-up (schema/follow_ends.cypher).
CREATE RANGE INDEX follows_dst_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.dst, r.since, r.src);

CREATE RANGE INDEX follows_src_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.src, r.since, r.dst);

CREATE RANGE INDEX follows_dst_src IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.dst, r.src);

CREATE RANGE INDEX follows_src_dst IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.src, r.dst);

CREATE CONSTRAINT checkpoint_name_unique IF NOT EXISTS
FOR (c:Checkpoint) REQUIRE c.name IS UNIQUE;

CREATE CONSTRAINT graph_event_id_unique IF NOT EXISTS
FOR (e:GraphEvent) REQUIRE e.id IS UNIQUE;

CREATE RANGE INDEX graph_event_version IF NOT EXISTS
FOR (e:GraphEvent) ON (e.v);

CREATE CONSTRAINT ranker_model_version IF NOT EXISTS
FOR (m:RankerModel) REQUIRE (m.name, m.version) IS UNIQUE;

CREATE CONSTRAINT api_key_id_unique IF NOT EXISTS
FOR (k:ApiKey) REQUIRE k.id IS UNIQUE;

// The keys bound to a user, revoked together when the user is erased
// (moderation/erase_begin.cypher).
CREATE RANGE INDEX api_key_user IF NOT EXISTS
FOR (k:ApiKey) ON (k.user);
