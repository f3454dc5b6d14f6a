// follower_ids: every follower of a user, streamed (a fan-out refreshes their counts).
// Params: $id.
MATCH (:User {id: $id})<-[:FOLLOWS]-(f:User)
RETURN f.id AS id
