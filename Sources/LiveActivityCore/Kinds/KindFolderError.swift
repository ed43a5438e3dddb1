/// Why a kind folder could not be read: the file, the line when known, and the reason.
///
/// A bad folder never stops the server: the loader logs this and skips the folder, and the other kinds keep working.
public struct KindFolderError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file's path, e.g. `Kinds/workout/kind.json`.
    public var file: String
    /// The 1-based line, when the problem has one.
    public var line: Int?
    /// What is wrong, e.g. `not valid JSON: …`.
    public var message: String

    /// Creates an error.
    public init(file: String, line: Int?, message: String) {
        self.file = file
        self.line = line
        self.message = message
    }

    /// `file:line: message` (or `file: message`), the form compilers use.
    public var description: String {
        "\(file)\(line.map { ":\($0)" } ?? ""): \(message)"
    }
}
