/// WebSocket close codes the server sends (RFC 6455 §7.4.1 and the IANA registry).
package enum CloseCode: UInt16, Sendable {
    /// 1000: normal closure.
    case normal = 1000
    /// 1001: going away (the server shuts down).
    case goingAway = 1001
    /// 1008: policy violation (flooding, a share link that ended).
    case policyViolation = 1008
    /// 1009: message too big (over `--max-message-bytes`).
    case messageTooBig = 1009
    /// 1013: try again later (the client fell more than `--max-queued-bytes` behind; resume with `since`).
    case tryAgainLater = 1013
}
