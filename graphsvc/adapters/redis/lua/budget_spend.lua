-- Spend a request budget's window: the `limits` library's fixed window (its incr_expire), on
-- the same keys, for the multiplexed connections (multiplexed.py).
-- KEYS: the window's counter
-- ARGV: the window in seconds, what the request costs
-- Returns the requests counted in the window so far.
local amount = tonumber(ARGV[2])
local current = redis.call('INCRBY', KEYS[1], amount)
if current == amount then
  redis.call('EXPIRE', KEYS[1], ARGV[1])
end
return current
