import Foundation

/// A message from a client, parsed and validated (see docs/PROTOCOL.md, "Client → server").
public struct ClientMessage: Sendable {
    /// The `attributesType` of a `start` that names none: the reference app's workout kind (the protocol's
    /// first version had no other), as `Kinds/workout/kind.json` names it.
    public static let defaultAttributesType = "workout"

    /// What the client asks for.
    public enum Command: Sendable {
        /// `start`: request a new activity.
        case start(StartCommand)
        /// `update`: replace an activity's content.
        case update(UpdateCommand)
        /// `end` / `stop`: end one or all activities.
        case end(EndCommand)
        /// `pause`: freeze an activity's countdown.
        case pause(activityId: String)
        /// `resume`: run a paused countdown again, moving its end by the paused time.
        case resume(activityId: String)
        /// `extend`: move a countdown's end by `seconds` (negative shortens, never below now).
        case extend(activityId: String, seconds: TimeInterval)
        /// `list`: send a snapshot.
        case list
        /// `hello`: present a token (browsers cannot set headers on WebSocket).
        case hello(token: String)
        /// `share`: make a read-only link to one activity.
        case share(activityId: String, expiresIn: TimeInterval?)
        /// `unshare`: revoke a link at once.
        case unshare(shareId: String)
        /// `shares`: list the live links (of one activity, or all).
        case shares(activityId: String?)
        /// `push`: an APNs Live Activity payload, as-is, addressed to a push token. Its optional `priority`
        /// (1, 5 or 10) is validated here and read by the inspector from ``ClientMessage/pushPriority``.
        case push(pushToken: String, payload: JSONValue)
        /// `catchUp`: send every event after `since` (or a reset snapshot when the log no longer has them, or
        /// `log` names another log).
        case catchUp(since: UInt64, log: String?)
        /// `history`: send finished activities, newest first.
        case history(HistoryQuery)
        /// `inspect`: send the push inspector's records after `since` (all kept when `nil`), then every new
        /// one as it happens (docs/PROTOCOL.md, "The push inspector").
        case inspect(since: UInt64?)
    }

    /// The client's `requestId` (string or number), echoed in `ack` / `error`; `nil` when absent.
    public var requestId: JSONValue?
    /// The command, or why it was refused.
    public var command: Result<Command, ProtocolError>
    /// The message as received (for the push inspector); `nil` when it is not JSON.
    public var raw: JSONValue? = nil
    /// Bytes of the text `raw` was read from (0 when not parsed from text): re-encoding `raw` gives at most
    /// about four times as many (`1e15` becomes `1000000000000000`), so six times this bounds its encoded size.
    public var rawByteCount = 0

    /// A `push` message's `priority` (the `apns-priority` it would be sent with: 1, 5 or 10), validated by
    /// ``parse(_:)``; `nil` when absent (APNs's default, 10).
    public var pushPriority: Int? {
        guard case .object(let object)? = raw, case .number(let priority)? = object["priority"] else { return nil }
        return Int(priority)
    }

    /// Every `type` the server accepts.
    public static let types = ["start", "update", "end", "stop", "pause", "resume", "extend", "list", "catchUp", "history", "hello", "push", "share", "unshare", "shares", "inspect"]

    /// Parses one text frame.
    ///
    /// Never throws: a bad message yields `command = .failure(error)`, keeping the `requestId` when it
    /// could be read, so the error can be matched to its request.
    /// - Parameters:
    ///   - bytes: the UTF-8 payload of one complete WebSocket text message.
    ///   - kinds: the kinds a `start` may name (its `attributesType`).
    public static func parse(_ bytes: some Collection<UInt8>, kinds: KindRegistry) -> ClientMessage {
        let value: JSONValue
        do { value = try JSONValue.parse(bytes) } catch {
            return ClientMessage(requestId: salvagedRequestId(bytes), command: .failure(error))
        }
        var requestId: JSONValue?
        if case .object(let object) = value, let id = object["requestId"] {
            switch id {
            case .string, .number: requestId = id
            case .null: requestId = nil
            default:
                return ClientMessage(requestId: nil, command: .failure(.wrongType("requestId", expected: "a string or a number", got: id)))
            }
        }
        var message: ClientMessage
        do {
            message = ClientMessage(requestId: requestId, command: .success(try command(from: value, kinds: kinds)), raw: value)
        } catch {
            message = ClientMessage(requestId: requestId, command: .failure(error), raw: value)
        }
        message.rawByteCount = bytes.count
        return message
    }

    private static func command(from value: JSONValue, kinds: KindRegistry) throws(ProtocolError) -> Command {
        let message = try FieldReader(value, path: "")
        guard let type = try message.string("type", maxLength: 64) else { throw .missing("type") }
        switch type {
        case "start": return .start(try StartCommand(message, kinds: kinds))
        case "update": return .update(try UpdateCommand(message))
        case "end", "stop": return .end(try EndCommand(message))
        case "pause": return .pause(activityId: try activityID(message))
        case "resume": return .resume(activityId: try activityID(message))
        case "extend":
            let id = try activityID(message)
            guard let seconds = try message.number("seconds") else { throw .missing("seconds") }
            guard seconds != 0, abs(seconds) <= Lifetime.maximumActive else {
                throw .invalid("seconds", "expected a non-zero number of seconds within ±\(Int(Lifetime.maximumActive)), got \(seconds.jsonText)")
            }
            return .extend(activityId: id, seconds: seconds)
        case "list": return .list
        case "share": return .share(activityId: try activityID(message), expiresIn: try Share.expiresIn(message))
        case "unshare":
            guard let id = try message.string("shareId", maxLength: 64) else { throw .missing("shareId") }
            return .unshare(shareId: id)
        case "shares": return .shares(activityId: try message.string("activityId", maxLength: 128))
        case "push":
            guard let pushToken = try message.string("pushToken", maxLength: 128) else { throw .missing("pushToken") }
            let priority = try message.number("priority")
            if let priority, ![1, 5, 10].contains(priority) {
                throw .invalid("priority", "expected an apns-priority of 1, 5 or 10, got \(priority.jsonText)")
            }
            return .push(pushToken: pushToken, payload: try message.required("payload"))
        case "hello":
            guard let token = try message.string("token", maxLength: 512) else { throw .missing("token") }
            return .hello(token: token)
        case "catchUp": return .catchUp(since: try sequence(message, "since"), log: try message.string("log", maxLength: 64))
        case "history": return .history(try HistoryQuery(message))
        case "inspect": return .inspect(since: try message.value("since").map { _ throws(ProtocolError) in try sequence(message, "since") })
        default:
            throw ProtocolError(.unknownType, field: "type",
                                message: "type: unknown message type \"\(type)\"; expected one of \(types.joined(separator: ", "))")
        }
    }
}

extension ClientMessage.Command {
    /// Whether the command changes activities, which only controllers may do.
    public var isControl: Bool {
        switch self {
        case .start, .update, .end, .pause, .resume, .extend, .push, .share, .unshare, .shares: true
        case .list, .hello, .catchUp, .history, .inspect: false
        }
    }
}

extension ClientMessage {
    /// Reads the required `activityId`.
    static func activityID(_ message: FieldReader) throws(ProtocolError) -> String {
        guard let id = try message.string("activityId", maxLength: 128) else { throw .missing("activityId") }
        return id
    }

    /// Reads a sequence number: a whole number from 0 to 2^53 − 1. JSON numbers are read as doubles, exact only
    /// that far (2^64 − 1 and 2^64 are the same double), so a larger one is refused rather than guessed; `/ws?since=`
    /// reads its text exactly, up to 2^64 − 1. A server's sequence never comes near either bound.
    static func sequence(_ message: FieldReader, _ key: String) throws(ProtocolError) -> UInt64 {
        guard let number = try message.number(key) else { throw .missing(message.path(key)) }
        guard number >= 0, number.rounded() == number, number <= 9_007_199_254_740_991 else {
            throw .invalid(message.path(key), "expected a whole number from 0 to 9007199254740991 (2^53 − 1, the largest a JSON number carries exactly), got \(number.jsonText)")
        }
        return UInt64(number)
    }
}

/// `history` (and `GET /api/history`): which finished activities to return.
public struct HistoryQuery: Sendable, Equatable {
    /// Most entries to return: 1…500, default 50.
    public var limit: Int
    /// Only activities that ended before this instant (UTC), for paging; `nil` = the newest.
    public var before: Date?
    /// With `before`: the id of the previous page's last entry, so entries that ended at the same instant
    /// are not skipped.
    public var beforeId: String?

    /// Largest accepted `limit`.
    public static let maximumLimit = 500

    /// Creates a query.
    public init(limit: Int = 50, before: Date? = nil, beforeId: String? = nil) {
        self.limit = limit
        self.before = before
        self.beforeId = beforeId
    }

    init(_ message: FieldReader) throws(ProtocolError) {
        self.init(limit: try Self.limit(try message.number("limit"), field: message.path("limit")), before: try message.date("before"),
                  beforeId: try message.string("beforeId", maxLength: 128))
    }

    /// Validates a limit: a whole number from 1 to ``maximumLimit``; 50 when absent.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `field`.
    public static func limit(_ value: Double?, field: String) throws(ProtocolError) -> Int {
        guard let value else { return 50 }
        guard value.rounded() == value, value >= 1, value <= Double(maximumLimit) else {
            throw .invalid(field, "expected a whole number from 1 to \(maximumLimit), got \(value.jsonText)")
        }
        return Int(value)
    }
}

/// How a request gives new content: in full, or by the `durationSeconds` shortcut.
public enum ContentInput: Sendable {
    /// A whole `ActivityContent` object, validated against the activity's kind when applied.
    case content(JSONValue, field: String)
    /// A countdown of this many seconds from now; the stale date is the countdown's end.
    case duration(TimeInterval, relevanceScore: Double)
    /// Content already validated (from an APNs payload).
    case resolved(ActivityContent, TimerRange?)

    /// Longest countdown the shortcut accepts, in seconds (the 8-hour activity lifetime).
    public static let maximumDuration = Lifetime.maximumActive

    /// Reads `content` or the `durationSeconds` shortcut (with its `relevanceScore`); `nil` when neither is given.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `durationSeconds` when both are given (they are
    ///   alternatives; docs/PROTOCOL.md documents no precedence), or when the duration is out of range.
    static func read(from message: FieldReader) throws(ProtocolError) -> ContentInput? {
        if message.value("content") != nil, message.value("durationSeconds") != nil {
            throw .invalid(message.path("durationSeconds"),
                           "\(message.path("content")) and \(message.path("durationSeconds")) are mutually exclusive; give one of them")
        }
        if let content = message.value("content") {
            return .content(content, field: message.path("content"))
        }
        guard let seconds = try message.number("durationSeconds") else { return nil }
        guard seconds > 0, seconds <= maximumDuration else {
            throw .invalid(message.path("durationSeconds"), "must be more than 0 and at most \(Int(maximumDuration)) seconds, got \(seconds.jsonText)")
        }
        return .duration(seconds, relevanceScore: try message.number("relevanceScore") ?? 0)
    }

    /// Resolves the input into content for an activity of `kind`.
    /// - Parameter now: the current time (UTC), the start of a `duration` countdown, and the centre of the
    ///   ``DateWindow`` that a whole `content`'s dates (countdown, pause, stale date) must lie in.
    /// - Throws: ``ProtocolError`` naming the bad field (`invalid_field` for a date outside the window).
    public func resolve(for kind: any ActivityKind, now: Date) throws(ProtocolError) -> (ActivityContent, TimerRange?) {
        switch self {
        case .resolved(let content, let timer):
            return (content, timer)
        case .duration(let seconds, let relevance):
            guard let (state, timer) = kind.state(counting: seconds, from: now) else {
                throw .invalid("durationSeconds", kind.metadata.countdown == nil
                    ? "\(kind.attributesType) activities have no countdown; send content"
                    : "\(kind.attributesType) activities take no durationSeconds (their kind.json would say \"durationShortcut\": true); send content")
            }
            return (ActivityContent(state: state, staleDate: timer.end, relevanceScore: relevance), timer)
        case .content(let value, let field):
            let content = try FieldReader(value, path: field)
            let received = try content.required("state")
            try ContentLimits.check(state: received, field: content.path("state"))
            let (state, timer) = try kind.state(from: received, field: content.path("state"))
            let staleDate = try content.date("staleDate")
            let relevance = try content.number("relevanceScore") ?? 0
            let timerField = content.path("state") + "." + kind.timerKey
            try DateWindow.check(timer, field: timerField, pausedField: content.path("state") + ".pausedAt", now: now)
            try DateWindow.check(staleDate, field: content.path("staleDate"), now: now)
            return (ActivityContent(state: state, staleDate: staleDate, relevanceScore: relevance), timer)
        }
    }
}

/// Size limits on content, as ActivityKit enforces them.
public enum ContentLimits {
    /// Largest encoded `ContentState`, in bytes (ActivityKit: "must not exceed 4 KB").
    public static let maximumStateBytes = 4096

    static func check(state: JSONValue, field: String) throws(ProtocolError) {
        var text = JSONTextWriter(capacity: 1024)
        let size = (try? text.value(state)) != nil ? text.bytes.count : 0
        if size > maximumStateBytes {
            throw ProtocolError(.limitExceeded, field: field,
                                message: "\(field): content state is \(size) bytes encoded; the limit is \(maximumStateBytes)")
        }
    }
}

/// `start`: request a new activity.
public struct StartCommand: Sendable {
    /// The kind named by `attributesType` (default `workout`).
    public var kind: any ActivityKind
    /// The normalised attributes.
    public var attributes: JSONValue
    /// The initial content.
    public var content: ContentInput
    /// When to start (UTC); a future date creates a `pending` activity, `nil` or a past date starts at once.
    public var startDate: Date?
    /// The broadcast channel the activity subscribes to (`channelId`; iOS 18 `PushType.channel`), if any.
    public var channelId: String?

    /// Creates a command from validated parts.
    public init(kind: any ActivityKind, attributes: JSONValue, content: ContentInput, startDate: Date? = nil,
                channelId: String? = nil) {
        self.kind = kind
        self.attributes = attributes
        self.content = content
        self.startDate = startDate
        self.channelId = channelId
    }

    init(_ message: FieldReader, kinds: KindRegistry) throws(ProtocolError) {
        let typeName = try message.string("attributesType", maxLength: 64) ?? ClientMessage.defaultAttributesType
        kind = try kinds.kind(named: typeName, field: "attributesType")
        attributes = try kind.attributes(from: try message.required("attributes"), field: "attributes")
        guard let content = try ContentInput.read(from: message) else { throw .missing("content") }
        self.content = content
        startDate = try message.date("startDate")
        if let channel = try message.string("channelId", maxLength: 128) {
            guard BroadcastChannel.isWellFormedID(channel) else {
                throw .invalid("channelId", "\"\(channel.clipped(to: 64))\" is not a channel ID (base64 of 16 bytes, from POST /1/apps/{bundleId}/channels)")
            }
            channelId = channel
        }
    }
}

/// `update`: replace an activity's content, optionally with an alert.
public struct UpdateCommand: Sendable {
    /// The activity to update.
    public var activityId: String
    /// The new content.
    public var content: ContentInput
    /// The alert to show with it, if any.
    public var alert: AlertConfiguration?

    /// Creates a command from validated parts.
    public init(activityId: String, content: ContentInput, alert: AlertConfiguration? = nil) {
        self.activityId = activityId
        self.content = content
        self.alert = alert
    }

    init(_ message: FieldReader) throws(ProtocolError) {
        activityId = try ClientMessage.activityID(message)
        guard let content = try ContentInput.read(from: message) else { throw .missing("content") }
        self.content = content
        if let alert = try message.object("alert") {
            guard let title = try alert.string("title", maxLength: 256) else { throw .missing(alert.path("title")) }
            guard let body = try alert.string("body", maxLength: 1024) else { throw .missing(alert.path("body")) }
            self.alert = AlertConfiguration(title: title, body: body, sound: try alert.string("sound", maxLength: 256))
        }
    }
}

/// `end` / `stop`: end one activity or all of them.
public struct EndCommand: Sendable {
    /// Which activities to end.
    public enum Target: Sendable, Equatable {
        /// The activity with this id.
        case one(String)
        /// Every activity not yet dismissed.
        case all
    }

    /// Which activities to end.
    public var target: Target
    /// Final content, if given.
    public var content: ContentInput?
    /// When to dismiss; `.default` when absent.
    public var dismissalPolicy: DismissalPolicy

    /// Creates a command from validated parts.
    public init(target: Target, content: ContentInput? = nil, dismissalPolicy: DismissalPolicy = .default) {
        self.target = target
        self.content = content
        self.dismissalPolicy = dismissalPolicy
    }

    /// Reads `activityId` or `"all": true`, never both.
    /// - Throws: ``ProtocolError`` `invalid_field` naming `all` when both are given (they are alternatives,
    ///   and silently ending every activity would lose the one named), `missing_field` naming `activityId`
    ///   when neither is.
    init(_ message: FieldReader) throws(ProtocolError) {
        if try message.bool("all") == true {
            if message.value("activityId") != nil {
                throw .invalid(message.path("all"),
                               "\(message.path("activityId")) and \(message.path("all")) are mutually exclusive; give one of them")
            }
            target = .all
        } else if let id = try message.string("activityId", maxLength: 128) {
            target = .one(id)
        } else {
            throw ProtocolError(.missingField, field: "activityId", message: "activityId: required field is missing (or send \"all\": true)")
        }
        content = try ContentInput.read(from: message)
        dismissalPolicy = try Self.policy(message)
    }

    private static func policy(_ message: FieldReader) throws(ProtocolError) -> DismissalPolicy {
        let field = message.path("dismissalPolicy")
        switch message.value("dismissalPolicy") {
        case nil: return .default
        case .string("default"): return .default
        case .string("immediate"): return .immediate
        case .object:
            let after = try message.object("dismissalPolicy")!
            guard let date = try after.date("after") else { throw .missing(after.path("after")) }
            return .after(date)
        case let other?:
            throw .invalid(field, "expected \"default\", \"immediate\" or {\"after\": ISO-8601 date}, got \(FieldReader.show(other))")
        }
    }
}

extension ClientMessage.Command {
    /// The message `type` that carries this command, for messages to people.
    public var name: String {
        switch self {
        case .start: "start"
        case .update: "update"
        case .end: "end"
        case .pause: "pause"
        case .resume: "resume"
        case .extend: "extend"
        case .list: "list"
        case .hello: "hello"
        case .push: "push"
        case .share: "share"
        case .unshare: "unshare"
        case .shares: "shares"
        case .catchUp: "catchUp"
        case .history: "history"
        case .inspect: "inspect"
        }
    }
}
