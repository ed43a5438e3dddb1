/// The Redis keys one cluster uses, all under one prefix (default `liveactivity:`).
struct RedisKeys {
    let prefix: String
    /// String: the last sequence number handed out.
    var sequence: String { prefix + "sequence" }
    /// Stream: the event log; entry ids are `<sequence>-0`, field `e` holds the stored event.
    var events: String { prefix + "events" }
    /// Hash: activity id → stored activity, for activities not dismissed.
    var activities: String { prefix + "activities" }
    /// Hash: activity id → stored activity, as it ended.
    var history: String { prefix + "history" }
    /// Sorted set: activity id scored by its end (Unix seconds), for paging history.
    var historyByEnd: String { prefix + "history-by-end" }
    /// Hash: share id → share JSON.
    var shares: String { prefix + "shares" }
    /// Hash: broadcast channel id → channel JSON (dates in Unix seconds).
    var channels: String { prefix + "channels" }
    /// String: the event log's identity.
    var logID: String { prefix + "log-id" }
    /// String: the cluster's push-to-start token.
    var pushToStartToken: String { prefix + "push-to-start-token" }
}
