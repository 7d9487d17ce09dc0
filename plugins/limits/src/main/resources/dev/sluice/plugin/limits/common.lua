-- Shared by the limits scripts (prepended to each): the server's clock, budget windows, key lifetimes, numbers.
-- Rates are in microseconds of the server's TIME; budgets in nanos of the currency unit; windows in epoch millis.
local MINUTE = 60000000

local function now_us()
    local t = redis.call('TIME')
    return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

-- A number as Redis stores it: an integer, never an exponent.
local function num(x)
    return string.format('%.0f', x)
end

-- Days since 1970-01-01 of a date of the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
local function days_from_civil(y, m, d)
    if m <= 2 then y = y - 1 end
    local era = math.floor(y / 400)
    local yoe = y - era * 400
    local doy = math.floor((153 * ((m + 9) % 12) + 2) / 5) + d - 1
    local doe = yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy
    return era * 146097 + doe - 719468
end

-- The year and month of a day since 1970-01-01 (civil_from_days).
local function civil_from_days(z)
    z = z + 719468
    local era = math.floor(z / 146097)
    local doe = z - era * 146097
    local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
    local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
    local mp = math.floor((5 * doy + 2) / 153)
    local m = mp < 10 and mp + 3 or mp - 9
    local y = yoe + era * 400
    if m <= 2 then y = y + 1 end
    return y, m
end

-- The budget window [start, stop) holding now_ms: period_ms > 0 are fixed windows since the epoch, 0 calendar months
-- in UTC, as BudgetPeriod computes them.
local function window(period_ms, now_ms)
    if period_ms > 0 then
        local start = math.floor(now_ms / period_ms) * period_ms
        return start, start + period_ms
    end
    local y, m = civil_from_days(math.floor(now_ms / 86400000))
    local start = days_from_civil(y, m, 1) * 86400000
    if m == 12 then y, m = y + 1, 1 else m = m + 1 end
    return start, days_from_civil(y, m, 1) * 86400000
end

-- Makes key live at least ms more; never shortens its life (a budget's spend lives past its window's end).
local function keep(key, ms)
    local ttl = redis.call('PTTL', key)
    if ttl == -1 or (ttl >= 0 and ttl < ms) then
        redis.call('PEXPIRE', key, ms)
    end
end

-- Removes the leases of scope keys (s, l, r) that expired by now, and their budget reservations; returns the
-- reservations left.
local function purge(s, l, r, now, rsv)
    local dead = redis.call('ZRANGEBYSCORE', l, '-inf', now, 'LIMIT', 0, 1000)
    if #dead == 0 then
        return rsv
    end
    for _, member in ipairs(dead) do
        local c = redis.call('HGET', r, member)
        if c then
            rsv = rsv - tonumber(c)
            redis.call('HDEL', r, member)
        end
    end
    redis.call('ZREM', l, unpack(dead))
    if rsv < 0 then rsv = 0 end
    redis.call('HSET', s, 'rsv', num(rsv))
    return rsv
end

-- Settles the batch of reservations that starts at ARGV[a] and KEYS[k] (settle.lua describes the layout): per
-- reservation and scope, the token rate moves by used - reserved tokens, the lease leaves, the reserved cost is given
-- back (unless the lease expired and gave it back already) and the used cost is charged to the current window.
-- Returns the index of the first ARGV and KEYS after the batch.
local function settle_batch(a, k, keep_ms, now_ms)
    local m = tonumber(ARGV[a])
    a = a + 1
    for _ = 1, m do
        local id, delta, used, n = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2]), tonumber(ARGV[a + 3])
        local again = ARGV[a + 4] == '1'
        a = a + 5
        for _ = 1, n do
            local s, l, r = KEYS[k], KEYS[k + 1], KEYS[k + 2]
            local tpm, period = tonumber(ARGV[a]), tonumber(ARGV[a + 1])
            k = k + 3
            a = a + 2
            -- Sent again after a call whose reply never came: it may have run. Only a scope still holding the lease or
            -- its reservation is settled now; in one that holds neither, it ran (or the lease expired): nothing twice.
            if again and not redis.call('ZSCORE', l, id) and redis.call('HEXISTS', r, id) == 0 then
                tpm, period = 0, -1
            end
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
    end
    return a, k
end
