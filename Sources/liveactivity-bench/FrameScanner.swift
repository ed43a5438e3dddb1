import Foundation

/// Finds what the benchmark needs in a server message without decoding its JSON.
///
/// An `updated` event carries the publisher's alert body as a JSON string, so its quotes arrive escaped:
/// `"body":"{\"seq\":12,\"ts\":345}"`. The scanner looks for `seq` and `ts` keys followed by an optional
/// backslash, a quote, a colon and digits, anywhere in the frame (the same rule as the peers' `keys:seq,ts`).
enum FrameScanner {
    /// The sequence number and send timestamp (ns) carried by an `updated` event's alert, if any.
    static func sequenceAndTimestamp(_ bytes: UnsafeRawBufferPointer) -> (seq: Int, ts: UInt64)? {
        guard let seqEnd = find(key: Array("seq".utf8), in: bytes, from: 0),
              let seq = digits(bytes, at: seqEnd),
              let tsEnd = find(key: Array("ts".utf8), in: bytes, from: seqEnd),
              let ts = digits(bytes, at: tsEnd) else { return nil }
        return (Int(seq.value), ts.value)
    }

    /// Whether the frame contains `text` (plain bytes).
    static func contains(_ text: String, in bytes: UnsafeRawBufferPointer) -> Bool {
        let needle = Array(text.utf8)
        return index(of: needle, in: bytes, from: 0) != nil
    }

    /// The string value after `"key":"`, e.g. the `activityId` of an `ack`.
    static func stringValue(_ key: String, in bytes: UnsafeRawBufferPointer) -> String? {
        let needle = Array("\"\(key)\":\"".utf8)
        guard let start = index(of: needle, in: bytes, from: 0) else { return nil }
        var end = start + needle.count
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(start + needle.count)..<end]), as: UTF8.self)
    }

    /// Offset just past `key` + `"` (or `\"`) + `:`, searching from `offset`.
    private static func find(key: [UInt8], in bytes: UnsafeRawBufferPointer, from offset: Int) -> Int? {
        var from = offset
        while let hit = index(of: key, in: bytes, from: from) {
            var cursor = hit + key.count
            if cursor < bytes.count, bytes[cursor] == UInt8(ascii: "\\") { cursor += 1 }
            if cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "\""), bytes[cursor + 1] == UInt8(ascii: ":"),
               hit > 0, bytes[hit - 1] == UInt8(ascii: "\"") {
                return cursor + 2
            }
            from = hit + 1
        }
        return nil
    }

    /// The unsigned integer at `offset`, and the offset after it.
    private static func digits(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> (value: UInt64, end: Int)? {
        var cursor = offset
        var value: UInt64 = 0
        while cursor < bytes.count, bytes[cursor] >= UInt8(ascii: "0"), bytes[cursor] <= UInt8(ascii: "9") {
            value = value &* 10 &+ UInt64(bytes[cursor] - UInt8(ascii: "0"))
            cursor += 1
        }
        return cursor > offset ? (value, cursor) : nil
    }

    /// First offset of `needle` in `bytes` at or after `offset` (memchr on the first byte, then compare).
    private static func index(of needle: [UInt8], in bytes: UnsafeRawBufferPointer, from offset: Int) -> Int? {
        guard let base = bytes.baseAddress, let first = needle.first, needle.count <= bytes.count else { return nil }
        var start = offset
        let last = bytes.count - needle.count
        while start <= last {
            guard let hit = memchr(base + start, Int32(first), last - start + 1) else { return nil }
            let position = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + position, needle, needle.count) == 0 { return position }
            start = position + 1
        }
        return nil
    }
}
