-- timeline_reopen: the timeline an erasure closed goes, so the next user with the id starts with
-- nothing of the erased one's: its posts, post states, mode and tombstones. Only while the
-- mode still says 'erased': once the next user published (which reopens it), its posts stay,
-- whoever of the erasure and a publish of the id comes last.
-- KEYS: po:{a}, ps:{a}, fm:{a}, pd:{a}
-- Returns 1 when it reopened the timeline, 0 when it was not closed.
if redis.call('HGET', KEYS[3], 'mode') ~= 'erased' then
  return 0
end
redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
return 1
