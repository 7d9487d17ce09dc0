-- Settles the reservations this replica finished since its last call (a batch as settle.lua's, often empty), then
-- reserves one request, a concurrency lease, TOKENS tokens and COST of the budget in every scope, all or nothing.
-- KEYS: per scope its hash (rt, tt: GCRA arrival times; rsv: reserved cost; w, sp: budget window start and spend),
--       its leases (a sorted set of request ids scored by expiry) and its reserved costs (a hash by request id); then
--       the settled reservations' keys, as settle.lua's.
-- ARGV: request id, lease (us), keep (ms), tokens, cost, number of scopes, then per scope: rpm, tpm, max_concurrent,
--       budget, period (-1: no budget, 0: calendar month, else its length in ms); then the batch to settle, as
--       settle.lua's ARGV after keep.
-- Returns {1} when admitted, else {0, scope index (from 0), reason, retry after (us), requests limit, remaining,
-- reset (us), tokens limit, remaining, reset (us)}, a limit of -1 meaning none. Reasons: 1 requests, 2 tokens,
-- 3 tokens too large, 4 concurrency, 5 budget.
local id = ARGV[1]
local lease = tonumber(ARGV[2])
local keep_ms = tonumber(ARGV[3])
local tokens = tonumber(ARGV[4])
local cost = tonumber(ARGV[5])
local n = tonumber(ARGV[6])
local now = now_us()
local now_ms = math.floor(now / 1000)
-- Settled first: what they free (slots, reservations) counts for this request.
settle_batch(7 + 5 * n, 3 * n + 1, keep_ms, now_ms)

local function status(tat, limit)
    if limit <= 0 then
        return -1, 0, 0
    end
    local used = math.max(0, tat - now)
    local remaining = math.floor((MINUTE - used) / (MINUTE / limit))
    return limit, math.max(0, math.min(limit, remaining)), used
end

local function refuse(i, reason, retry, rt, rpm, tt, tpm)
    local rl, rr, rs = status(rt, rpm)
    local tl, tr, ts = status(tt, tpm)
    return {0, i - 1, reason, math.ceil(retry), rl, rr, math.ceil(rs), tl, tr, math.ceil(ts)}
end

local plan = {}
for i = 1, n do
    local s, l, r = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
    local a = 6 + 5 * (i - 1)
    local rpm, tpm, conc = tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
    local budget, period = tonumber(ARGV[a + 4]), tonumber(ARGV[a + 5])
    local state = redis.call('HMGET', s, 'rt', 'tt', 'rsv', 'w', 'sp')
    local rt, tt, rsv = tonumber(state[1]) or 0, tonumber(state[2]) or 0, tonumber(state[3]) or 0
    local leased = conc > 0 or period >= 0
    if leased then
        rsv = purge(s, l, r, now, rsv)
    end
    if conc > 0 and redis.call('ZCARD', l) >= conc then
        return {0, i - 1, 4, 0, -1, 0, 0, -1, 0, 0}
    end
    local p = {leased = leased}
    if rpm > 0 then
        p.rt = math.max(rt, now) + MINUTE / rpm
        local over = p.rt - now - MINUTE
        if over > 0 then
            return refuse(i, 1, over, rt, rpm, tt, tpm)
        end
    end
    if tpm > 0 and tokens > 0 then
        if tokens > tpm then
            return refuse(i, 3, 0, rt, rpm, tt, tpm)
        end
        p.tt = math.max(tt, now) + tokens * MINUTE / tpm
        local over = p.tt - now - MINUTE
        if over > 0 then
            return refuse(i, 2, over, rt, rpm, tt, tpm)
        end
    end
    if period >= 0 then
        local start, stop = window(period, now_ms)
        local sp = 0
        if tonumber(state[4]) == start then
            sp = tonumber(state[5]) or 0
        end
        -- The one check that makes overspending impossible: made and applied in this one script.
        if sp + rsv + cost > budget then
            return {0, i - 1, 5, math.max(1, stop - now_ms) * 1000, -1, 0, 0, -1, 0, 0}
        end
        p.w, p.stop, p.sp, p.rsv = start, stop, sp, rsv
    end
    plan[i] = p
end

for i = 1, n do
    local s, l, r = KEYS[3 * i - 2], KEYS[3 * i - 1], KEYS[3 * i]
    local p = plan[i]
    if p.rt then
        redis.call('HSET', s, 'rt', num(p.rt))
    end
    if p.tt then
        redis.call('HSET', s, 'tt', num(p.tt))
    end
    if p.leased then
        redis.call('ZADD', l, now + lease, id)
        keep(l, keep_ms)
    end
    if p.w then
        redis.call('HSET', s, 'w', num(p.w), 'sp', num(p.sp), 'rsv', num(p.rsv + cost))
        if cost > 0 then
            redis.call('HSET', r, id, ARGV[5])
            keep(r, keep_ms)
        end
        -- The spend outlives the window by an hour, whatever the idle time: budgets survive restarts and quiet days.
        keep(s, math.max(keep_ms, p.stop - now_ms + 3600000))
    else
        keep(s, keep_ms)
    end
end
return {1}
