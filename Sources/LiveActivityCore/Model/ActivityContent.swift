import Foundation

/// The dynamic part of an activity, as ActivityKit's `ActivityContent<State>`.
///
/// Source: https://developer.apple.com/documentation/activitykit/activitycontent
public struct ActivityContent: Sendable, Hashable, Encodable {
    /// The `ContentState`, normalised by the activity's ``ActivityKind``.
    public var state: JSONValue
    /// When the content goes out of date (UTC); `nil` = never.
    public var staleDate: Date?
    /// Orders several activities: higher comes first. Default 0.
    public var relevanceScore: Double

    /// Creates content.
    public init(state: JSONValue, staleDate: Date?, relevanceScore: Double = 0) {
        self.state = state
        self.staleDate = staleDate
        self.relevanceScore = relevanceScore
    }

    private enum CodingKeys: String, CodingKey { case state, staleDate, relevanceScore }

    /// Encodes `{state, staleDate, relevanceScore}`; `staleDate` is written as `null` when absent.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(staleDate, forKey: .staleDate)
        try container.encode(JSONValue.number(relevanceScore), forKey: .relevanceScore)
    }

    /// The same object as a JSON value, equal to what ``encode(to:)`` writes parsed back (dates as the wire's
    /// ISO-8601 strings), built without encoding: the inspector keeps one per change.
    public var jsonValue: JSONValue {
        .object(["state": state, "staleDate": staleDate.map { .string(ISODate.format($0)) } ?? .null,
                 "relevanceScore": .number(relevanceScore)])
    }
}
