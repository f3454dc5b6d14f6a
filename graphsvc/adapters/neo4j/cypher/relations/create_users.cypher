// create_users: the second statement of a batch of edge writes, when lock_users.cypher found
// users that the batch's follows or blocks need and that do not exist yet. Creating a node
// locks it, and they are created in the order given (sorted), so batches creating the same
// new users wait for each other in one order. A user another batch created meanwhile is found
// (the MERGE waits for that batch's commit).
// Params: $ids (sorted user ids). Returns created (how many nodes are new).
UNWIND $ids AS id
MERGE (u:User {id: id})
ON CREATE SET u.new = true
WITH u, u.new IS NOT NULL AS created
REMOVE u.new
RETURN count(CASE WHEN created THEN 1 END) AS created
