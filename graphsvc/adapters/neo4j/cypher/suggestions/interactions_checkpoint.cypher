// interactions_checkpoint: the id of the last interaction-buffer entry applied ('' for none).
OPTIONAL MATCH (cp:Checkpoint {name: 'interactions'})
RETURN coalesce(cp.last, '') AS last
