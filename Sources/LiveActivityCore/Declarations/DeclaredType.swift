/// The type of a stored property in an app's `ActivityAttributes`, as far as decoding is concerned.
///
/// Structs and enums are named by their qualified name (`IntervalWorkoutAttributes.Plan`) and looked up in
/// ``ActivityDeclaration/structs`` and ``ActivityDeclaration/enums`` (a struct may contain arrays of itself).
public indirect enum DeclaredType: Sendable, Hashable {
    /// `String`.
    case string
    /// A fixed-width integer, by its Swift name: `Int`, `Int8`…`Int64`, `UInt`, `UInt8`…`UInt64`.
    case integer(String)
    /// A floating-point number, by its Swift name: `Double`, `Float`, `CGFloat` (or `TimeInterval`, kept as written).
    case double(String)
    /// `Bool`.
    case bool
    /// `Date`.
    case date
    /// `URL`.
    case url
    /// `ClosedRange<Date>`.
    case closedDateRange
    /// `Range<Date>`.
    case dateRange
    /// `[T]` or `Array<T>`.
    case array(DeclaredType)
    /// `Set<T>`: decodes from a JSON array like an `Array`, and equal elements collapse into one, as the app's
    /// `Set` holds them (the first kept, in the order sent).
    case set(DeclaredType)
    /// `T?` or `Optional<T>`.
    case optional(DeclaredType)
    /// A struct declared in the file, by qualified name.
    case structure(String)
    /// An enum declared in the file, by qualified name: with `String` or integer raw values, or without a raw
    /// type (Swift 5.5's synthesized keyed form, ``DeclaredEnum/isKeyed``).
    case enumeration(String)
    /// `UUID`: a string `UUID(uuidString:)` accepts (upper or lower case), as `UUID(from:)` decodes it.
    case uuid
    /// `Decimal`: a JSON number, as `JSONDecoder` decodes it.
    case decimal
    /// `[K: V]` or `Dictionary<K, V>`, as `Dictionary(from:)` decodes it under `JSONDecoder`: with `String`
    /// keys a JSON object; with `Int` keys a JSON object whose keys are integers written as strings
    /// (`{"1": …}`); with any other key type a flat JSON array of alternating key, value (`["a", 1, "b", 2]`).
    case dictionary(key: DeclaredType, value: DeclaredType)

    /// The type as Swift writes it (`ClosedRange<Date>`, `[Lap]`, `Phase?`), with the last component of
    /// qualified names.
    public var swiftName: String {
        switch self {
        case .string: "String"
        case .integer(let name), .double(let name): name
        case .bool: "Bool"
        case .date: "Date"
        case .url: "URL"
        case .closedDateRange: "ClosedRange<Date>"
        case .dateRange: "Range<Date>"
        case .array(let element): "[\(element.swiftName)]"
        case .set(let element): "Set<\(element.swiftName)>"
        case .optional(let wrapped): "\(wrapped.swiftName)?"
        case .structure(let name), .enumeration(let name): String(name.split(separator: ".").last ?? "")
        case .uuid: "UUID"
        case .decimal: "Decimal"
        case .dictionary(let key, let value): "[\(key.swiftName): \(value.swiftName)]"
        }
    }

    /// The type with any optional wrappers removed.
    public var unwrapped: DeclaredType {
        if case .optional(let wrapped) = self { return wrapped.unwrapped }
        return self
    }

    /// Whether the value may be absent or `null` (an optional).
    public var isOptional: Bool {
        if case .optional = self { return true }
        return false
    }

    /// How a dictionary with this key type is written in JSON: as an object (`String` and `Int` keys, the
    /// two `Dictionary(from:)` reads from a keyed container) or as a flat array of alternating key, value.
    /// An enum key may be an object key too (``DeclaredEnum/isCodingKeyRepresentable``; see
    /// ``ActivityDeclaration/isObjectKey(_:)``).
    public var isObjectKey: Bool { self == .string || self == .integer("Int") }

    /// The inclusive range of an integer type (`Int8`: −128…127), as `Double`s (the JSON number type), or
    /// nil for other types. 64-bit bounds are rounded to the nearest `Double` (2⁶³ is excluded for `Int64`).
    var integerBounds: (lower: Double, upper: Double, upperExclusive: Bool)? {
        guard case .integer(let name) = self else { return nil }
        switch name {
        case "Int8": return (-128, 127, false)
        case "Int16": return (-32_768, 32_767, false)
        case "Int32": return (-2_147_483_648, 2_147_483_647, false)
        case "UInt8": return (0, 255, false)
        case "UInt16": return (0, 65_535, false)
        case "UInt32": return (0, 4_294_967_295, false)
        case "UInt", "UInt64": return (0, 18_446_744_073_709_551_616, true)
        default: return (-9_223_372_036_854_775_808, 9_223_372_036_854_775_808, true)
        }
    }
}

/// One decoded stored property of a struct.
public struct DeclaredField: Sendable, Hashable {
    /// The property's Swift name (`heartRate`).
    public var name: String
    /// The JSON key it is decoded from: the name, or its `CodingKeys` raw value.
    public var key: String
    /// Its type.
    public var type: DeclaredType
    /// Whether it has an initial value (`var x: Int = 3`): still required by synthesized `Codable`.
    public var hasDefault: Bool
    /// 1-based line of the declaration.
    public var line: Int
}

/// A struct declared in the app's file, as synthesized `Codable` decodes it.
public struct DeclaredStruct: Sendable, Hashable {
    /// The qualified name (`IntervalWorkoutAttributes.ContentState`).
    public var name: String
    /// The fields decoded, in declaration order.
    public var fields: [DeclaredField]
    /// Stored properties that are not decoded: a `let` with an initial value, or one left out of `CodingKeys`.
    public var ignored: [String]
    /// 1-based line of the declaration.
    public var line: Int

    /// The last component of ``name`` (`ContentState`).
    public var swiftName: String { String(name.split(separator: ".").last ?? "") }

    /// The field decoded from JSON key `key`.
    public func field(forKey key: String) -> DeclaredField? { fields.first { $0.key == key } }
}

/// An enum declared in the app's file: with raw values (`enum Phase: String, Codable`), decoded from its raw
/// value, or without a raw type (`enum Stage: Codable { case ordered, late(minutes: Int) }`), decoded in
/// Swift 5.5's synthesized keyed form (``isKeyed``).
public struct DeclaredEnum: Sendable, Hashable {
    /// One case and its raw value.
    public struct Case: Sendable, Hashable {
        /// The case name (`warmUp`).
        public var name: String
        /// Its raw value: `.string("warm-up")` or `.number(2)`; for a keyed enum, the case name as a string
        /// (the JSON key it is written under).
        public var rawValue: JSONValue
        /// A keyed enum's associated values, in order, each as a field of the case's nested object: keyed by
        /// its label, or `_0`, `_1`… by position when unlabelled (Swift 5.5's synthesized `Codable`). Empty
        /// for a raw-value enum and for a case without associated values.
        public var payload: [DeclaredField] = []
    }

    /// The qualified name (`IntervalWorkoutAttributes.Plan`).
    public var name: String
    /// The raw type: `.string` or `.integer(name)` (`.string` for a keyed enum, whose case names are keys).
    public var rawType: DeclaredType
    /// The cases, in declaration order.
    public var cases: [Case]
    /// 1-based line of the declaration.
    public var line: Int
    /// Whether the enum has no raw type and decodes in Swift 5.5's synthesized form: a JSON object with exactly
    /// one key, the case name, whose value is an object of the case's associated values (``Case/payload``):
    /// `{"ordered": {}}`, `{"late": {"minutes": 5}}`, `{"moved": {"_0": "Main St"}}`.
    public var isKeyed: Bool = false
    /// Whether the enum declares `CodingKeyRepresentable` (with a `String` or `Int` raw type, whose default
    /// implementation Swift provides): a dictionary keyed by it is then a JSON object keyed by raw values.
    public var isCodingKeyRepresentable: Bool = false

    /// The last component of ``name`` (`Plan`).
    public var swiftName: String { String(name.split(separator: ".").last ?? "") }

    /// The case whose raw value is `value`, or nil.
    public func `case`(rawValue value: JSONValue) -> Case? { cases.first { $0.rawValue == value } }
}
