#!lua flags=no-writes
-- One user's exact counts and its privacy settings, in one call: what a read of the counts for
-- a viewer checks (the owner's counts_visibility). The settings hash is another slot than the
-- user's keys: on Redis Cluster the counts and the settings are read in a pipeline instead.
-- KEYS: meta (one user), the hash of privacy settings
-- ARGV: the user, then the count fields
-- Returns the count fields' values (nil: the user is cold), then the user's settings (nil: the
-- defaults) and whether the settings hash is built (0|1).
local fields = {}
for i = 2, #ARGV do fields[#fields + 1] = ARGV[i] end
local out = redis.call('HMGET', KEYS[1], unpack(fields))
local settings = redis.call('HMGET', KEYS[2], ARGV[1], '')
out[#fields + 1] = settings[1]
out[#fields + 2] = settings[2] and 1 or 0
return out
