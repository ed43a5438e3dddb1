/// A command-line mistake; the message names the option or argument. Both executables exit with status 2.
public struct UsageError: Error, Sendable {
    /// What is wrong, e.g. `unknown option "--foo"` or `--port must be a whole number …`.
    public var message: String

    /// Creates an error with `message`.
    public init(_ message: String) { self.message = message }
}

/// The arguments of one command, read front to back; accepts `--name value` and `--name=value`, and
/// takes everything after `--` as positional.
public struct ArgumentList: Sendable {
    private var items: [String]
    private var index = 0
    /// The value given as `--name=value` for the option just read, if any.
    private var inlineValue: String?
    private var afterDoubleDash = false

    /// One command-line argument.
    public enum Argument: Sendable, Equatable {
        /// An option name (`--port`, `-h`), without any `=value`.
        case option(String)
        /// Anything else.
        case positional(String)
    }

    /// Creates a reader over `items` (the arguments after the program and command names).
    public init(_ items: [String]) { self.items = items }

    /// The next argument; nil at the end.
    public mutating func next() -> Argument? {
        inlineValue = nil
        while index < items.count {
            let item = items[index]
            index += 1
            if afterDoubleDash { return .positional(item) }
            if item == "--" {
                afterDoubleDash = true
                continue
            }
            if item.hasPrefix("--"), let equals = item.firstIndex(of: "=") {
                inlineValue = String(item[item.index(after: equals)...])
                return .option(String(item[..<equals]))
            }
            if item.hasPrefix("-"), item.count > 1 { return .option(item) }
            return .positional(item)
        }
        return nil
    }

    /// The next argument for a command that takes options only: its name, or nil at the end.
    /// - Throws: ``UsageError`` for a positional argument.
    public mutating func nextOption() throws(UsageError) -> String? {
        switch next() {
        case .option(let name): return name
        case .positional(let text): throw UsageError("unexpected argument \"\(text)\"")
        case nil: return nil
        }
    }

    /// Reads a flag (an option without a value).
    /// - Returns: true.
    /// - Throws: ``UsageError`` when it was given as `--name=value`.
    public func flag(_ name: String) throws(UsageError) -> Bool {
        try requireNoValue(name)
        return true
    }

    /// The value of option `name`: its `=value`, else the next argument (even one starting with `-`).
    /// - Throws: ``UsageError`` when none is left.
    public mutating func value(for name: String) throws(UsageError) -> String {
        if let inlineValue {
            self.inlineValue = nil
            return inlineValue
        }
        guard index < items.count else { throw UsageError("\(name) needs a value") }
        index += 1
        return items[index - 1]
    }

    /// The value of option `name` as a finite decimal number of at least `minimum` (units are the option's).
    /// - Throws: ``UsageError`` naming `name` and the text given.
    public mutating func number(for name: String, minimum: Double) throws(UsageError) -> Double {
        let text = try value(for: name)
        guard let number = Double(text), number.isFinite, number >= minimum else {
            throw UsageError("\(name) must be a number of at least \(Self.plain(minimum)), got \"\(text)\"")
        }
        return number
    }

    /// The value of option `name` as a whole number of at least `minimum`.
    /// - Throws: ``UsageError`` naming `name` and the text given.
    public mutating func whole(for name: String, minimum: Int) throws(UsageError) -> Int {
        let text = try value(for: name)
        guard let number = Int(text), number >= minimum else {
            throw UsageError("\(name) must be a whole number of at least \(minimum), got \"\(text)\"")
        }
        return number
    }

    /// The value of option `name`, which must be `on` or `off`.
    /// - Throws: ``UsageError`` naming `name` and the text given.
    public mutating func onOff(for name: String) throws(UsageError) -> Bool {
        switch try value(for: name) {
        case "on": return true
        case "off": return false
        case let other: throw UsageError("\(name) must be on or off, got \"\(other)\"")
        }
    }

    /// Refuses an `=value` on an option that takes none.
    /// - Throws: ``UsageError`` naming `name`.
    public func requireNoValue(_ name: String) throws(UsageError) {
        if inlineValue != nil { throw UsageError("\(name) takes no value") }
    }

    /// `minimum` without a needless `.0` (`1024`, `0.1`).
    private static func plain(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
