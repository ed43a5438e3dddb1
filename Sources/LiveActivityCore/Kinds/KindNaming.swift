/// The one naming rule of kind folders (issue 27): which wire name (`attributesType`) a folder's kind has, and
/// which names an APNs `attributes-type` may use for it.
///
/// - The wire name is the folder's name, unless `kind.json` gives `name`. Adding a `kind.json` (for
///   `swiftNames`, labels, a countdown) never changes it by itself.
/// - A wire name is 1…64 of `a-z`, `0-9`, `-`, `_` (``KindMetadata/isKindName(_:)``), or exactly the name of
///   the Swift struct the folder's `Attributes.swift` declares (`DeliveryAttributes`), in the folder's name or
///   in `kind.json`'s `name`. A folder's own name may also be any Swift-like name (`DeliveryTracker`:
///   ``KindMetadata/isSwiftTypeName(_:)``).
/// - The struct's name is always accepted as an APNs `attributes-type`, beside `kind.json`'s `swiftNames`.
/// - Of several structs conforming to `ActivityAttributes` in one file, `kind.json`'s first `swiftNames` entry
///   names the one read; without it the error says the exact `kind.json` to write.
extension KindMetadata {
    /// Whether `name` is a kind name: 1…64 of `a-z`, `0-9`, `-` and `_`.
    public static func isKindName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64
            && name.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "-" || $0 == "_") }
    }

    /// Whether `name` is a plain Swift type name (`DeliveryAttributes`): ASCII letters, digits and `_`, not
    /// starting with a digit, at most 64 bytes.
    public static func isSwiftTypeName(_ name: String) -> Bool {
        guard let first = name.first, !first.isNumber, name.utf8.count <= 64 else { return false }
        return name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }

    /// The `kind.json` text that names `structName` as the struct to read: `{"swiftNames": ["PizzaDeliveryAttributes"]}`
    /// (without `name`, the wire name stays the folder's).
    public static func kindJSONNaming(_ structName: String) -> String {
        #"{"swiftNames": ["\#(structName)"]}"#
    }
}

extension KindFolder {
    /// The folder's own name, the last component of ``path`` (`Kinds/workout` → `workout`).
    var folderName: String { path.split(separator: "/").last.map(String.init) ?? path }
}
