import CHiredis

/// One Redis reply (RESP2), copied out of hiredis's memory.
public enum RedisReply: Sendable, Equatable {
    case string(String)
    case integer(Int64)
    case array([RedisReply])
    case null
    case status(String)
    case error(String)

    init(_ reply: UnsafeMutablePointer<redisReply>) {
        let value = reply.pointee
        switch value.type {
        case REDIS_REPLY_STRING:
            self = .string(String(decoding: UnsafeRawBufferPointer(start: value.str, count: value.len), as: UTF8.self))
        case REDIS_REPLY_STATUS:
            self = .status(String(decoding: UnsafeRawBufferPointer(start: value.str, count: value.len), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            self = .error(String(decoding: UnsafeRawBufferPointer(start: value.str, count: value.len), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            self = .integer(value.integer)
        case REDIS_REPLY_ARRAY:
            self = .array((0..<value.elements).map { RedisReply(chiredis_element(reply, $0)) })
        default:
            self = .null
        }
    }

    /// The text of a string or status reply.
    public var text: String? {
        switch self {
        case .string(let text), .status(let text): text
        case .integer(let number): String(number)
        default: nil
        }
    }

    /// The elements of an array reply (empty for null).
    public var elements: [RedisReply] {
        if case .array(let elements) = self { return elements }
        return []
    }
}
