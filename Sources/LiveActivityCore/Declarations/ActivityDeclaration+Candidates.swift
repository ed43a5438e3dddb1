/// A top-level field that a template may bind to, with the struct it belongs to.
public struct DeclaredCandidate: Sendable, Hashable {
    /// The struct holding the field.
    public var part: DeclaredPart
    /// The field (its JSON key, Swift name and type).
    public var field: DeclaredField
}

extension ActivityDeclaration {
    /// The fields that can drive a countdown: `ClosedRange<Date>`, `Range<Date>` and `Date` fields (optional or
    /// not) at the top level of `ContentState`, in declaration order.
    public var countdownCandidates: [DeclaredCandidate] {
        contentState.fields.filter { [.closedDateRange, .dateRange, .date].contains($0.type.unwrapped) }
            .map { DeclaredCandidate(part: .contentState, field: $0) }
    }

    /// The fields that can name an image: `URL` fields (optional or not) at the top level of the attributes,
    /// then of `ContentState`, in declaration order.
    public var imageCandidates: [DeclaredCandidate] {
        DeclaredPart.allCases.flatMap { part in
            root(part).fields.filter { $0.type.unwrapped == .url }.map { DeclaredCandidate(part: part, field: $0) }
        }
    }
}
