import Foundation

/// Who may do what: roles from bearer tokens.
///
/// - No token configured: everyone is a controller (the server then refuses to listen beyond loopback).
/// - A controller token only: presenting it makes a controller; presenting nothing makes a viewer.
/// - A viewer token too: presenting nothing makes a client `unauthenticated` until it presents one.
/// A token that matches neither is refused (`unauthorized`), so a typo never silently downgrades.
/// Tokens are compared in constant time.
public struct AccessPolicy: Sendable {
    /// What a client may do.
    public enum Role: String, Sendable, Codable, Comparable {
        /// Must present a token before receiving anything.
        case unauthenticated
        /// May watch: snapshots, events, ticks, list, history, catch-up.
        case viewer
        /// May also start, update, end, pause, resume and extend.
        case controller

        private var rank: Int {
            switch self {
            case .unauthenticated: 0
            case .viewer: 1
            case .controller: 2
            }
        }

        /// Orders roles by what they may do, `unauthenticated` lowest.
        public static func < (a: Role, b: Role) -> Bool { a.rank < b.rank }
    }

    /// The token that grants `controller`; `nil` = none configured.
    public var controllerToken: String?
    /// The token that grants `viewer`; `nil` = watching needs no token.
    public var viewerToken: String?

    /// Creates a policy; empty strings count as not configured.
    public init(controllerToken: String? = nil, viewerToken: String? = nil) {
        self.controllerToken = controllerToken.flatMap { $0.isEmpty ? nil : $0 }
        self.viewerToken = viewerToken.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Whether any token is configured.
    public var isOpen: Bool { controllerToken == nil && viewerToken == nil }

    /// The role for a client that presents `token` (or none).
    /// - Returns: the role, or `nil` when a token was presented and matches none (refuse it).
    public func role(presenting token: String?) -> Role? {
        guard let token, !token.isEmpty else {
            if isOpen { return .controller }
            return viewerToken == nil ? .viewer : .unauthenticated
        }
        if isOpen { return .controller }
        if let controllerToken, Self.constantTimeEquals(token, controllerToken) { return .controller }
        if let viewerToken, Self.constantTimeEquals(token, viewerToken) { return .viewer }
        return nil
    }

    /// Compares two strings in time that depends only on their lengths, not on where they differ.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var difference = UInt8(truncatingIfNeeded: x.count ^ y.count)
        if x.count != y.count { difference |= 1 }
        for index in 0..<max(x.count, y.count) {
            let left = index < x.count ? x[index] : 0
            let right = index < y.count ? y[index] : 0
            difference |= left ^ right
        }
        return difference == 0
    }

    /// Whether `host` is a loopback address or name (`127.0.0.0/8`, `::1`, `localhost`), where an open
    /// server is acceptable.
    public static func isLoopback(_ host: String) -> Bool {
        let name = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        return name == "localhost" || name == "::1" || name.hasPrefix("127.")
    }
}

