// popular: the most followed active users (for users who follow nobody yet). Reads every
// user's degree (O(users), each O(1)): the service caches the answer.
// Params: $limit.
MATCH (u:User)
WHERE NOT u:Inactive AND NOT u:Erasing
WITH u.id AS id, COUNT { (u)<-[:FOLLOWS]-() } AS followers
ORDER BY followers DESC, id
LIMIT $limit
RETURN id, followers
