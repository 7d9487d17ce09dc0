-- Renews the leases of one replica's live requests: each lease's expiry moves to now + lease, if it still exists (an
-- expired lease is gone for good, and its request no longer counts). The scope's keys are kept alive with it.
-- KEYS: per lease its scope's hash, leases and reserved costs (as reserve.lua).
-- ARGV: lease (us), keep (ms), then per lease the request id.
-- Returns how many leases were renewed.
local lease = tonumber(ARGV[1])
local keep_ms = tonumber(ARGV[2])
local expiry = now_us() + lease
local renewed = 0
for j = 1, #KEYS / 3 do
    local s, l, r = KEYS[3 * j - 2], KEYS[3 * j - 1], KEYS[3 * j]
    if redis.call('ZADD', l, 'XX', 'CH', expiry, ARGV[2 + j]) == 1 then
        renewed = renewed + 1
    end
    keep(s, keep_ms)
    keep(l, keep_ms)
    keep(r, keep_ms)
end
return renewed
