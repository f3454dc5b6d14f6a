// erase_begin: mark a user for erasure (label :Erasing): from now on no follow to or from it
// is accepted (follow.cypher), and the erasure resumes after a crash until the node is gone.
// Params: $id. No row for an unknown user.
MATCH (x:User {id: $id})
SET x:Erasing
RETURN x.id AS id
