// user_count: how many users exist (answered from Neo4j's count store, O(1)).
MATCH (u:User)
RETURN count(u) AS users
