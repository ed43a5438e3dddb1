/// Why a Swift `ActivityAttributes` declaration cannot be read, located like a compiler diagnostic.
///
/// ``description`` is `file:line: message`, e.g.
/// `Attributes.swift:12: unsupported type "Color" for property "tint" (supported: …)`.
public struct DeclarationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file name given to the reader (`Attributes.swift` by default).
    public var file: String
    /// 1-based line of the construct at fault.
    public var line: Int
    /// What is wrong, in words, naming the construct.
    public var message: String

    /// Creates an error.
    public init(file: String, line: Int, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message`.
    public var description: String { "\(file):\(line): \(message)" }

    /// `invalid_field` for `field` (the request field that carried the source), with ``description`` as the reason.
    public func protocolError(field: String) -> ProtocolError {
        .invalid(field, description)
    }
}
