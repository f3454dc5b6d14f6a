// edge_count: how many follow edges the graph holds (Neo4j's count store: O(1)).
// Params: none. Returns: edges.
MATCH ()-[r:FOLLOWS]->()
RETURN count(r) AS edges
