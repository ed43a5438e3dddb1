import CSQLite

/// A failed SQLite call: the result code, SQLite's message and the statement, if any.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    /// The SQLite result code (https://sqlite.org/rescode.html), e.g. 8 = SQLITE_READONLY, 13 = SQLITE_FULL.
    public let code: Int32
    /// SQLite's explanation.
    public let message: String
    /// The SQL that failed, if a statement did.
    public let sql: String?

    /// `SQLite error 8 (attempt to write a readonly database) in: INSERT …`.
    public var description: String {
        "SQLite error \(code) (\(message))" + (sql.map { " in: \($0.prefix(80))" } ?? "")
    }

    init(code: Int32, connection: OpaquePointer?, sql: String? = nil, message: String) {
        self.code = code
        self.message = message
        self.sql = sql
    }

    init(code: Int32, connection: OpaquePointer?, sql: String? = nil) {
        self.code = code
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        self.sql = sql
    }
}
