import Foundation

/// What a kind folder's `kind.json` says about a kind: its names, its countdown, and how to label it.
///
/// The JSON shape (every key but `name` optional):
/// ```json
/// {"name": "workout", "label": "Workout", "swiftNames": ["WorkoutWidgetAttributes"], "countdown": "workoutTimer",
///  "durationShortcut": true, "title": "{{workout.label}}", "image": null, "fallbackIcon": "workout",
///  "enums": {"workout": [{"value": "jogging", "rawValue": 0, "label": "Jogging", "icon": "jogging"}]},
///  "limits": {"attributes": {"name": {"minLength": 1, "maxLength": 64}}, "state": {}}}
/// ```
/// docs/TEMPLATES.md documents each key.
public struct KindMetadata: Sendable, Equatable {
    /// One value of an enum field: its value on the wire, the app's raw value, and how it is shown.
    public struct EnumValue: Sendable, Equatable {
        /// The value as this protocol sends it, e.g. `"jogging"`.
        public var value: String
        /// The Swift raw value (`Int` raw values: 0, 1, 2…), if it differs from ``value``.
        public var rawValue: JSONValue?
        /// The label shown for it, e.g. `"Jogging"`.
        public var label: String
        /// Whether the protocol sends and accepts the value by its name (``value``, `"jogging"`), the raw value
        /// being the app's (`kind.json`'s entries, `String` raw values); or only by its raw value, the name
        /// labelling it and nothing more (`"sentAs": "rawValue"`: an enum declared with an `Int` raw value that
        /// `kind.json` does not list, whose values stay the app's numbers on the wire).
        public var sentAsName: Bool = true
        /// The icon's name (a `Public/icons/{icon}.svg`), e.g. `"jogging"`.
        public var icon: String?
        /// A keyed enum case's associated values (Swift 5.5's synthesized `Codable`, `{"delayed": {"minutes": 25}}`),
        /// in declaration order: each its key in the case's object (its label, or `_0`, `_1`… when unlabelled) and
        /// its label in words ("Minutes"; empty when unlabelled). The renderers show a case as its label, then
        /// these values: "Delayed · Minutes 25". Empty for raw-value enums and cases without associated values.
        public var associatedValues: [AssociatedValue] = []

        /// Creates a value.
        public init(value: String, rawValue: JSONValue? = nil, label: String, icon: String? = nil, associatedValues: [AssociatedValue] = [],
                    sentAsName: Bool = true) {
            self.value = value
            self.rawValue = rawValue
            self.sentAsName = sentAsName
            self.label = label
            self.icon = icon
            self.associatedValues = associatedValues
        }
    }

    /// One associated value of a keyed enum case (``EnumValue/associatedValues``).
    public struct AssociatedValue: Sendable, Equatable {
        /// Its key in the case's JSON object: the Swift label, or `_0`, `_1`… by position.
        public var key: String
        /// Its label in words ("Closes in"), or empty for an unlabelled value (shown as the value alone).
        public var label: String
        /// For a value of a raw-value enum, each raw value as text (`"home"`, `"2"`) and the words shown for it
        /// ("Home"; an `Int` raw value's case name, "XL"); empty otherwise, the value then shown as it is.
        public var valueLabels: [String: String]

        /// Creates one.
        public init(key: String, label: String, valueLabels: [String: String] = [:]) {
            self.key = key
            self.label = label
            self.valueLabels = valueLabels
        }
    }

    /// The `attributesType` name on the wire, e.g. `"workout"`: 1…64 of `a-z`, `0-9`, `-`, `_`.
    public var name: String
    /// The kind's name as people read it, e.g. `"Workout"` (the dashboard's kind picker).
    public var label: String
    /// Whether ``label`` was given (by `kind.json`) rather than made from ``name``.
    public var labelGiven: Bool
    /// The Swift type names an APNs `attributes-type` may use, e.g. `WorkoutWidgetAttributes`.
    public var swiftNames: [String]
    /// The state field that is the countdown (a `Date`, `ClosedRange<Date>` or `Range<Date>`), if any.
    public var countdown: String?
    /// Whether `durationSeconds` may stand for a countdown from now (needs ``countdown``).
    public var durationShortcut: Bool
    /// The template of the name lists show (share list, page titles), e.g. `"{{workout.label}}"` or
    /// `"{{name}}"`: `{{path}}` is replaced by the render context's value at that path (see ``KindTitle``).
    public var title: String?
    /// The attributes field holding an image URL (shown through the thumbnail pipeline), if any.
    public var image: String?
    /// The icon shown when there is no enum icon or image, e.g. `"workout"` or `"photo"`.
    public var fallbackIcon: String
    /// Labels and icons of the enum fields' values, by attribute field name, in declaration order.
    public var enums: [String: [EnumValue]]
    /// How a dictionary field is written in JSON (``DeclaredType/dictionary(key:value:)``).
    public enum DictionaryForm: String, Sendable, Equatable {
        /// A JSON object (`String` and `Int` keys).
        case object
        /// A flat JSON array of alternating key, value (any other key type).
        case array
    }

    /// The top-level fields that are dictionaries (`[K: V]`), by key, with how each is written (`GET /kinds`:
    /// `"dictionaries": {"seatsLeft": "array"}`). The renderers show them as pairs, "economy 12, business 2",
    /// where the list or struct their JSON looks like would mislead.
    public var dictionaries: [String: DictionaryForm] = [:]
    /// The top-level collections of a raw-value enum, by key (`[Level]`, `[Tier: Int]`, `[Int: Stage]`): its raw
    /// values in words, for a list's elements and a dictionary's values, and for a dictionary's keys (`GET /kinds`:
    /// `"elementLabels": {"levels": {"values": {"-3": "Low"}}}`), so that the renderers show "Low, High" where the
    /// JSON says `[-3, 3]`.
    public var elementLabels: [String: ElementLabels] = [:]

    /// A collection's words for its keys and its elements or values, each by raw value as text (``labelKey(_:)``).
    public struct ElementLabels: Sendable, Equatable {
        /// A dictionary's keys (`"1"` → "Standard").
        public var keys: [String: String] = [:]
        /// A list's elements, a dictionary's values.
        public var values: [String: String] = [:]

        /// Creates the labels.
        public init(keys: [String: String] = [:], values: [String: String] = [:]) {
            self.keys = keys
            self.values = values
        }
    }

    /// How a raw value is looked up in such labels (and in ``AssociatedValue/valueLabels``): a string as it is, a
    /// whole number as its digits (`-3`, `1000`); nil for anything else.
    public static func labelKey(_ value: JSONValue) -> String? {
        switch value {
        case .string(let text): return text
        case .number(let number) where number.rounded() == number && abs(number) < 1e15: return String(Int64(number))
        case .bigInteger(let digits): return digits
        default: return nil
        }
    }
    /// Bounds on fields beyond their Swift types (``FieldLimits``), by part and then field key.
    public var limits: [DeclaredPart: [String: FieldLimits]]
    /// Per presentation (`"lock-screen"`, `"compact"`…), the fields the generated layout shows, in order
    /// (`kind.json`'s `layout`); a presentation not listed shows the layout's own choice.
    public var layout: [String: [String]] = [:]
    /// The Lock Screen card's colour in the generated frame (`kind.json`'s `activityBackgroundTint`, as
    /// SwiftUI's `.activityBackgroundTint(_:)`): `#rgb`, `#rrggbb` or `#rrggbbaa`; `nil` for the system's.
    public var activityBackgroundTint: String?
    /// The colour of the system's action button beside the card (`kind.json`'s
    /// `activitySystemActionForegroundColor`, as `.activitySystemActionForegroundColor(_:)`); `nil` for the system's.
    public var activitySystemActionForegroundColor: String?

    /// Creates metadata.
    public init(name: String, label: String? = nil, swiftNames: [String] = [], countdown: String? = nil, durationShortcut: Bool = false,
                title: String? = nil, image: String? = nil, fallbackIcon: String = "workout",
                enums: [String: [EnumValue]] = [:], limits: [DeclaredPart: [String: FieldLimits]] = [:]) {
        self.name = name
        self.label = label ?? (name.prefix(1).uppercased() + name.dropFirst())
        self.labelGiven = label != nil
        self.swiftNames = swiftNames
        self.countdown = countdown
        self.durationShortcut = durationShortcut
        self.title = title
        self.image = image
        self.fallbackIcon = fallbackIcon
        self.enums = enums
        self.limits = limits
    }

    /// The label of `value` in the enum field `field`, or `nil` when `kind.json` gives none.
    public func label(of value: String, in field: String) -> String? {
        enums[field]?.first { $0.value == value }?.label
    }

    /// The icon of `value` in the enum field `field`, or `nil` when `kind.json` gives none.
    public func icon(of value: String, in field: String) -> String? {
        enums[field]?.first { $0.value == value }?.icon
    }
}
