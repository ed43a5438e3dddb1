import CSQLite
import Foundation

/// A prepared SQLite statement; finalized in `deinit`.
final class Statement {
    private let handle: OpaquePointer
    private let connection: OpaquePointer
    let sql: String

    init(connection: OpaquePointer, sql: String) throws {
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &handle, nil)
        guard code == SQLITE_OK, let handle else { throw SQLiteError(code: code, connection: connection, sql: sql) }
        self.handle = handle
        self.connection = connection
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement for another run and clears its bindings.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// A value that can be bound to a `?` parameter.
    enum Value {
        case int(Int64)
        case double(Double)
        case text(String)
        case null
    }

    /// Binds `values` to parameters 1…n.
    /// - Throws: ``SQLiteError``.
    @discardableResult
    func bind(_ values: Value...) throws -> Statement {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let code: Int32
            switch value {
            case .int(let number): code = sqlite3_bind_int64(handle, index, number)
            case .double(let number): code = sqlite3_bind_double(handle, index, number)
            case .text(let text): code = sqlite3_bind_text(handle, index, text, -1, csqlite_transient())
            case .null: code = sqlite3_bind_null(handle, index)
            }
            guard code == SQLITE_OK else { throw SQLiteError(code: code, connection: connection, sql: sql) }
        }
        return self
    }

    /// Runs a statement that returns no rows.
    /// - Throws: ``SQLiteError``.
    func run() throws {
        // Reset however it ends, as ``query(_:)`` does: a failed COMMIT left unreset stays mid-way.
        defer { sqlite3_reset(handle) }
        let code = sqlite3_step(handle)
        guard code == SQLITE_DONE || code == SQLITE_ROW else { throw SQLiteError(code: code, connection: connection, sql: sql) }
    }

    /// Runs a query, calling `row` for each result row.
    /// - Throws: ``SQLiteError``, or what `row` throws.
    func query(_ row: (Row) throws -> Void) throws {
        // Reset however it ends: a statement left mid-way keeps its read transaction open.
        defer { sqlite3_reset(handle) }
        while true {
            let code = sqlite3_step(handle)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw SQLiteError(code: code, connection: connection, sql: sql) }
            try row(Row(handle: handle))
        }
    }

    /// One result row; valid only inside ``query(_:)``'s callback.
    struct Row {
        let handle: OpaquePointer
        /// Column `index` (from 0) as an integer.
        func int(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }
        /// Column `index` as a double.
        func double(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }
        /// Column `index` as text (empty when NULL).
        func text(_ index: Int32) -> String {
            guard let bytes = sqlite3_column_text(handle, index) else { return "" }
            return String(cString: bytes)
        }
        /// Whether column `index` is NULL.
        func isNull(_ index: Int32) -> Bool { sqlite3_column_type(handle, index) == SQLITE_NULL }
    }
}
