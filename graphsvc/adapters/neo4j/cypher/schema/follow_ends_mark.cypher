// follow_ends_mark: record that every FOLLOWS carries its ends' ids (follow_ends.cypher ran to
// its end), so later starts skip that walk of every edge.
// Locking: the Checkpoint node named 'follow_ends' (created once).
// Params: none. Returns nothing.
MERGE (cp:Checkpoint {name: 'follow_ends'})
