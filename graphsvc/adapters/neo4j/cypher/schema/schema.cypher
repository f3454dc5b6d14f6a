// Applied at every start-up; each statement is idempotent.
CREATE CONSTRAINT user_id_unique IF NOT EXISTS
FOR (u:User) REQUIRE u.id IS UNIQUE;

CREATE RANGE INDEX follows_since IF NOT EXISTS
FOR ()-[r:FOLLOWS]-() ON (r.since);

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
