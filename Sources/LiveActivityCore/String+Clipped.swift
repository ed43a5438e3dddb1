extension StringProtocol {
    /// The first `limit` characters, then `…` when there were more: a value sent by a client, quoted in an
    /// error message, shown cut but never silently (`aaaa…`).
    package func clipped(to limit: Int) -> String {
        count > limit ? "\(prefix(limit))…" : String(self)
    }
}
