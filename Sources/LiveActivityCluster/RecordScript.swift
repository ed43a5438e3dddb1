/// The Lua script that records a batch of events atomically, if and only if nobody recorded anything since
/// the caller's last sequence (optimistic concurrency: the loser gets `CONFLICT <sequence>`, catches up and
/// retries). This is what makes `sequence` global and every deadline fire once in the cluster.
///
/// KEYS: sequence, events, activities, history, historyByEnd.
/// ARGV: expected sequence, event count, stream max length, then per event: sequence, activity id, kind,
/// stored event, stored activity, end date (Unix seconds, or "" when not `ended`).
enum RecordScript {
    static let source = """
    local current = tonumber(redis.call('GET', KEYS[1]) or '0')
    if current ~= tonumber(ARGV[1]) then
      return redis.error_reply('CONFLICT ' .. current)
    end
    local count = tonumber(ARGV[2])
    local index = 4
    local last = current
    for _ = 1, count do
      local sequence, id, kind = ARGV[index], ARGV[index + 1], ARGV[index + 2]
      local event, activity, ended = ARGV[index + 3], ARGV[index + 4], ARGV[index + 5]
      redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], sequence .. '-0', 'e', event)
      if kind == 'dismissed' then
        redis.call('HDEL', KEYS[3], id)
      else
        redis.call('HSET', KEYS[3], id, activity)
      end
      if ended ~= '' then
        redis.call('HSET', KEYS[4], id, activity)
        redis.call('ZADD', KEYS[5], ended, id)
      end
      last = tonumber(sequence)
      index = index + 6
    end
    redis.call('SET', KEYS[1], last)
    return last
    """
}
