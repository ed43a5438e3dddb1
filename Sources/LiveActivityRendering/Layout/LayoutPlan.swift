import LiveActivityCore

/// What the generated layout shows of a kind, presentation by presentation, decided from the declaration alone
/// (and `kind.json`'s `layout`, `label` and `countdown`), following Apple's HIG for Live Activities: the
/// countdown and the status lead, then the fields in declaration order (the content state's, then the
/// attributes'), as many as fit whole in the presentation's lines; nothing is cut mid-field.
///
/// Pure and without markup: ``GeneratedLayout`` turns a plan into templates.
public struct LayoutPlan: Sendable, Equatable {
    /// One field as the layout shows it.
    public struct Field: Sendable, Equatable {
        /// How a field's value is drawn.
        public enum Shape: Sendable, Equatable {
            /// One line of text (`display.F.text`): text, numbers, `Bool`, enums, arrays of values.
            case text
            /// A `Date` or date range: a countdown while near, a time of day otherwise.
            case date
            /// An array of structs: a heading line, then a row per item (the struct's fields, in order).
            case rows([String])
            /// A struct: its fields on one line, in order.
            case fields([String])
        }

        /// The JSON key.
        public var key: String
        /// The field's name in words ("Estimated delivery time").
        public var label: String
        /// How it is drawn.
        public var shape: Shape
        /// Whether the field is an enum (a candidate for the status).
        public var isEnum: Bool
        /// Whether the field is a date range (`ClosedRange<Date>`, `Range<Date>`).
        public var isRange: Bool
        /// Whether the value is short (a number or a `Bool`): up to three such fields in a row share a line.
        public var isShort = false
        /// Whether the field is optional (may be nil, or left out of a push, at render time).
        public var isOptional = false
        /// Whether the value is an opaque identifier (a `UUID`): rarely what a person wants to see, it comes last.
        public var isIdentifier = false

        /// Lines the field takes: a heading and ``DisplayValues/rowLimit`` rows for an array of structs, else one.
        public var lines: Int {
            if case .rows = shape { return 1 + DisplayValues.rowLimit }
            return 1
        }
    }

    /// What one presentation shows.
    public struct Choice: Sendable, Equatable {
        /// The field shown as the countdown (or time of day while far), if any.
        public var countdown: Field?
        /// The enum field shown as the status, if any.
        public var status: Field?
        /// The other date fields, in order: what the compact, minimal and small presentations show, the first
        /// present one, when the countdown is nil at render time.
        public var otherDates: [Field] = []
        /// The other fields shown, in order (only in the Lock Screen and expanded presentations).
        public var fields: [Field] { lines.flatMap { $0 } }
        /// The same fields by line: one field, or two or three short ones side by side.
        public var lines: [[Field]]

        /// Lines a group of fields takes: a short group one, a single field its own ``Field/lines``.
        public static func cost(_ line: [Field]) -> Int {
            line.count == 1 ? line[0].lines : 1
        }
    }

    /// How many short fields (numbers, `Bool`s) share a line at most.
    public static let shortPerLine = 3

    /// The title: `kind.json`'s `label`, else the struct's name in words without "Attributes".
    public var title: String
    /// The icon every presentation shows (`{{activity.icon}}` when the kind names icons, else a generic one).
    public var icon: String
    /// Every field, in the order the layout considers them: the content state's, then the attributes'.
    public var fields: [Field]
    /// `kind.json`'s choice of fields per presentation.
    public var chosen: [String: [String]]
    /// `kind.json`'s countdown field, if any.
    public var countdownKey: String?

    /// Lines of fields (besides the title row and the status) a presentation's markup holds: the Lock Screen card
    /// (which grows to iOS's 160 pt) fits four or five at most, the expanded island (160 pt) two or three, when no
    /// optional is nil. The markup holds about three times as many, for nil optionals to leave room to; the frame's `stack fit`
    /// leaves out whole, at render time, the ones that do not fit.
    public static func lineBudget(_ presentation: Presentation, hasStatus: Bool) -> Int {
        switch presentation {
        case .lockScreen: hasStatus ? 12 : 13
        case .expanded: hasStatus ? 6 : 7
        case .compact, .minimal, .small: 0
        }
    }

    /// Plans the layout of a declared kind.
    /// - Parameters:
    ///   - declaration: the app's declaration.
    ///   - metadata: the kind's `kind.json` (label, countdown, enum icons, fallback icon, `layout`).
    public init(declaration: ActivityDeclaration, metadata: KindMetadata) {
        title = metadata.labelGiven && metadata.label != declaration.attributesType ? metadata.label : Words.title(ofStruct: declaration.attributesType)
        let hasIcons = metadata.enums.values.contains { $0.contains { $0.icon != nil } }
        icon = hasIcons || metadata.fallbackIcon != "workout" || metadata.name == "workout" ? "{{activity.icon}}" : "activity"
        countdownKey = metadata.countdown
        chosen = metadata.layout
        let skipped: Set<String> = ["pausedAt", metadata.image ?? ""]
        // A key a Mustache path or an HTML attribute cannot hold as it is (a `CodingKeys` raw value with a dot,
        // a space or a quote) is left out of the generated layout; a hand-written template can still show it.
        // Letters and digits of any script are kept (`heureDArrivée`, `café`: Swift identifiers; both renderers
        // read them as they read ASCII ones).
        let usable = { (key: String) in !key.isEmpty && key.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" } }
        fields = (declaration.contentState.fields + declaration.attributes.fields).filter { !skipped.contains($0.key) && usable($0.key) }.map { declared in
            let type = declared.type.unwrapped
            var shape = Field.Shape.text
            switch type {
            case .date, .closedDateRange, .dateRange:
                shape = .date
            case .array(let element), .set(let element):
                if case .structure(let name) = element.unwrapped { shape = .rows(Self.keys(of: name, in: declaration)) }
            case .structure(let name):
                shape = .fields(Self.keys(of: name, in: declaration))
            default:
                break
            }
            var isEnum = false
            if case .enumeration = type { isEnum = true }
            var field = Field(key: declared.key, label: Words.label(ofField: declared.name), shape: shape, isEnum: isEnum,
                              isRange: type == .closedDateRange || type == .dateRange)
            switch type {
            case .integer, .double, .bool: field.isShort = true
            default: break
            }
            field.isOptional = declared.type.isOptional
            field.isIdentifier = type == .uuid
            return field
        }
        var seen = Set<String>()
        fields = fields.filter { seen.insert($0.key).inserted }
    }

    /// What `presentation` shows: the countdown (`kind.json`'s, else the first non-optional `Date` or date range
    /// in declaration order, else the first optional one), the status (the first enum), and the fields that fit whole in its lines, in order, `UUID`s last (two or three
    /// numbers or `Bool`s in a row share a line). With
    /// `kind.json`'s `layout` for it, only the fields it lists, in its order.
    public func choice(for presentation: Presentation) -> Choice {
        var candidates = fields
        if let keys = chosen[presentation.rawValue] {
            candidates = keys.compactMap { key in fields.first { $0.key == key } }
        }
        let dates = candidates.filter { $0.shape == .date }
        let countdown = dates.first { $0.key == countdownKey } ?? dates.first { !$0.isOptional } ?? dates.first
        let status = candidates.first { $0.isEnum }
        var groups: [[Field]] = []
        let ordered = chosen[presentation.rawValue] != nil ? candidates : candidates.filter { !$0.isIdentifier } + candidates.filter(\.isIdentifier)
        for field in ordered where field.key != countdown?.key && field.key != status?.key {
            if field.isShort, let last = groups.last, last.allSatisfy(\.isShort), last.count < Self.shortPerLine {
                groups[groups.count - 1].append(field)
            } else {
                groups.append([field])
            }
        }
        var budget = Self.lineBudget(presentation, hasStatus: status != nil)
        var shown: [[Field]] = []
        for group in groups {
            guard Choice.cost(group) <= budget else { continue }
            shown.append(group)
            budget -= Choice.cost(group)
        }
        return Choice(countdown: countdown, status: status, otherDates: dates.filter { $0.key != countdown?.key }, lines: shown)
    }

    /// The JSON keys of a declared struct's fields, in order (none for a struct the declaration lacks).
    /// The keys of a struct's fields a line shows, in order: not its `URL`s and `UUID`s (a team's logo address
    /// took the rest of "Golden State Warriors · GSW · https://exa…"), unless it has nothing else.
    private static func keys(of structName: String, in declaration: ActivityDeclaration) -> [String] {
        let fields = declaration.structs[structName]?.fields ?? []
        let readable = fields.filter { ![.url, .uuid].contains($0.type.unwrapped) }
        return (readable.isEmpty ? fields : readable).map(\.key)
    }
}
