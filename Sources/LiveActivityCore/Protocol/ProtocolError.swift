/// A request the server refuses, as sent to the client in an `error` message.
///
/// `field` is the dotted path of the offending field (`content.state.workoutTimer.end`) when there is one,
/// and `message` is a sentence for people that starts with that path.
public struct ProtocolError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The machine-readable reason, sent as the `code` string.
    public enum Code: String, Sendable {
        /// The frame is not JSON, or not a JSON object.
        case invalidJSON = "invalid_json"
        /// `type` names no known message.
        case unknownType = "unknown_type"
        /// A required field is absent.
        case missingField = "missing_field"
        /// A field has the wrong type or an unacceptable value.
        case invalidField = "invalid_field"
        /// `activityId` names no activity (never started, or already dismissed).
        case unknownActivity = "unknown_activity"
        /// The activity has ended; ActivityKit ignores updates to ended activities.
        case activityEnded = "activity_ended"
        /// The activity is not in a state that allows this (pausing a paused countdown, resuming a running one).
        case invalidState = "invalid_state"
        /// The connection's role may not do this (a viewer sending a control message).
        case forbidden = "forbidden"
        /// A token is needed, or the one presented matches none.
        case unauthorized = "unauthorized"
        /// Too many messages too fast on this connection; slow down.
        case rateLimited = "rate_limited"
        /// A size or count limit was reached.
        case limitExceeded = "limit_exceeded"
        /// The store could not record the change; nothing changed and nothing was acknowledged.
        case storageUnavailable = "storage_unavailable"
        /// A binary frame arrived where the protocol only uses text frames.
        case unsupportedFrame = "unsupported_frame"
    }

    /// The reason code.
    public var code: Code
    /// Dotted path of the offending field, if any.
    public var field: String?
    /// Human-readable explanation naming the field.
    public var message: String

    /// Creates an error.
    public init(_ code: Code, field: String?, message: String) {
        self.code = code
        self.field = field
        self.message = message
    }

    /// `field: message`.
    public var description: String { message }

    /// `missing_field` for `field`.
    public static func missing(_ field: String) -> ProtocolError {
        ProtocolError(.missingField, field: field, message: "\(field): required field is missing")
    }

    /// `invalid_field` for `field`, with `reason` after the field's path.
    public static func invalid(_ field: String, _ reason: String) -> ProtocolError {
        ProtocolError(.invalidField, field: field, message: "\(field): \(reason)")
    }

    static func wrongType(_ field: String, expected: String, got value: JSONValue) -> ProtocolError {
        invalid(field, "expected \(expected), got \(value.typeName)")
    }
}
