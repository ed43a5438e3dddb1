import CSQLite
import Foundation

/// One SQLite connection, with its prepared statements cached (by the address of their SQL literal).
///
/// Not thread-safe: one thread at a time (its owner serialises access; see ``SQLiteActivityStore``).
final class Database {
    private let connection: OpaquePointer
    /// Prepared statements by the address of their SQL literal: found without hashing the text (a group's
    /// record runs four or five lookups an event; hashing each statement's text was 3 % of the store
    /// thread). The same text at two addresses is prepared twice, which is harmless.
    private var statements: [UInt: Statement] = [:]

    /// Opens the database file at `path`: read-write (creating it if needed), or read-only.
    /// - Parameter readOnly: open an existing file for reading only (`SQLITE_OPEN_READONLY`): a second
    ///   connection that reads while another writes (WAL mode lets them run at once).
    /// - Throws: ``SQLiteError`` when it cannot be opened.
    init(path: String, readOnly: Bool = false) throws {
        var handle: OpaquePointer?
        let flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_FULLMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(code: code, connection: handle)
            sqlite3_close(handle)
            throw error
        }
        connection = handle
        sqlite3_busy_timeout(connection, 2000)
        sqlite3_extended_result_codes(connection, 1)
    }

    deinit {
        statements.removeAll()
        sqlite3_close(connection)
    }

    /// Runs one or more SQL statements that return no rows.
    /// - Throws: ``SQLiteError``.
    func execute(_ sql: String) throws {
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: connection, sql: sql) }
    }

    /// The cached prepared statement for `sql`, reset and with bindings cleared.
    /// - Parameter sql: a literal (its address is the cache key).
    /// - Throws: ``SQLiteError`` when the SQL does not compile.
    func statement(_ sql: StaticString) throws -> Statement {
        let key = UInt(bitPattern: sql.utf8Start)
        if let cached = statements[key] {
            cached.reset()
            return cached
        }
        let statement = try Statement(connection: connection, sql: "\(sql)")
        statements[key] = statement
        return statement
    }

    /// Runs `body` in one transaction (`BEGIN IMMEDIATE` … `COMMIT`), rolling back if it throws. The three
    /// statements are prepared once and kept, as every other (`sqlite3_exec` compiled them on every call).
    /// - Throws: what `body` throws, or ``SQLiteError`` from BEGIN/COMMIT.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try statement("BEGIN IMMEDIATE").run()
        do {
            let result = try body()
            try statement("COMMIT").run()
            return result
        } catch {
            try? statement("ROLLBACK").run()
            throw error
        }
    }
}
