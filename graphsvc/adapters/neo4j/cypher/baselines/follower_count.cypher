// follower_count: how many follow $id (Neo4j's degree store: O(1) for dense nodes).
// The Neo4j-only baseline of the benchmark; the service reads counts from the mirror.
MATCH (u:User {id: $id})
RETURN COUNT { (u)<-[:FOLLOWS]-() } AS followers
