-- Settles a batch of reservations, each in every scope it holds (see settle_batch in common.lua). A lease that expired
-- meanwhile already gave its reservation back: then only the used cost is charged.
-- KEYS: per reservation, per scope its hash, leases and reserved costs (as reserve.lua).
-- ARGV: keep (ms), the number of reservations, then per reservation: request id, used - reserved tokens, used cost,
--       its number of scopes, 1 if it is sent again after a call that may have run (else 0), then per scope: tpm,
--       period (as reserve.lua).
local keep_ms = tonumber(ARGV[1])
local now_ms = math.floor(now_us() / 1000)
settle_batch(2, 1, keep_ms, now_ms)
return 1
