-- Settles one reservation in every scope: the reserved tokens and cost leave, the used ones are charged, the lease
-- is removed. A lease that expired meanwhile already gave its reservation back: then only the used cost is charged.
-- KEYS: per scope its hash, leases and reserved costs (as reserve.lua).
-- ARGV: request id, keep (ms), used - reserved tokens, used cost, then per scope: tpm, period (as reserve.lua).
local id = ARGV[1]
local keep_ms = tonumber(ARGV[2])
local delta = tonumber(ARGV[3])
local used = tonumber(ARGV[4])
local n = #KEYS / 3
local now = now_us()
local now_ms = math.floor(now / 1000)
for i = 1, n do
    local s, l, r = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
    local a = 4 + 2 * (i - 1)
    local tpm, period = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
    if tpm > 0 and delta ~= 0 then
        local tt = tonumber(redis.call('HGET', s, 'tt'))
        if tt then
            redis.call('HSET', s, 'tt', num(tt + delta * MINUTE / tpm))
        end
    end
    redis.call('ZREM', l, id)
    if period >= 0 then
        local state = redis.call('HMGET', s, 'rsv', 'w', 'sp')
        local rsv = tonumber(state[1]) or 0
        local c = redis.call('HGET', r, id)
        if c then
            rsv = math.max(0, rsv - tonumber(c))
            redis.call('HDEL', r, id)
        end
        local start, stop = window(period, now_ms)
        local sp = 0
        if tonumber(state[2]) == start then
            sp = tonumber(state[3]) or 0
        end
        redis.call('HSET', s, 'w', num(start), 'sp', num(sp + used), 'rsv', num(rsv))
        keep(s, math.max(keep_ms, stop - now_ms + 3600000))
    end
end
return 1
