-- Reads scopes for the admin endpoint, writing nothing but the purge of expired leases.
-- KEYS: per scope its hash, leases and reserved costs (as reserve.lua).
-- Returns {now (us), then per scope: leases, rt, tt, rsv, w, sp}, -1 for what is not there.
local now = now_us()
local out = {now}
for i = 1, #KEYS / 3 do
    local s, l, r = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
    local state = redis.call('HMGET', s, 'rt', 'tt', 'rsv', 'w', 'sp')
    local rsv = purge(s, l, r, now, tonumber(state[3]) or 0)
    table.insert(out, redis.call('ZCARD', l))
    table.insert(out, tonumber(state[1]) or -1)
    table.insert(out, tonumber(state[2]) or -1)
    table.insert(out, rsv)
    table.insert(out, tonumber(state[4]) or -1)
    table.insert(out, tonumber(state[5]) or 0)
end
return out
