// load_users: make sure every user of a bulk-load batch exists.
// Params: $ids (list of user ids).
UNWIND $ids AS uid
MERGE (:User {id: uid})
