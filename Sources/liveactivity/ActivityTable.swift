import Foundation
import LiveActivityClient

/// The human table of activities shown by `list` and `watch`: id, activity (the workout, or the kind), state,
/// remaining time, relevance. A paused countdown shows `,paused` after the state, and its time left frozen. An
/// activity the server marked (`kindProblem`) shows `,marked` after its state and, on the next line,
/// `  marked: <reason>` (the reason `kinds check --server` prints).
enum ActivityTable {
    /// Renders `activities` in the given order, one line each after a header line (two for a marked one).
    /// - Parameters:
    ///   - activities: the rows, already in presentation order.
    ///   - serverNow: the server's current time, for the countdowns.
    /// - Returns: the table, ending with a newline.
    static func render(_ activities: [ActivitySummary], serverNow: Date) -> String {
        let header = ["ID", "ACTIVITY", "STATE", "REMAINING", "RELEVANCE"]
        let rows = activities.map { activity in
            [activity.id, activity.title,
             activity.state + (activity.isRunning && activity.pausedAt != nil ? ",paused" : "")
                + (activity.kindProblem == nil ? "" : ",marked"),
             activity.remainingSeconds(at: serverNow).map(clock) ?? "-", number(activity.relevanceScore)]
        }
        var widths = header.map(\.count)
        for row in rows {
            for (column, cell) in row.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var text = ""
        let problems = [nil] + activities.map(\.kindProblem)
        for (row, problem) in zip([header] + rows, problems) {
            let cells = row.enumerated().map { column, cell in
                column == row.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }
            text += cells.joined(separator: "  ") + "\n"
            if let problem { text += "  marked: \(problem)\n" }
        }
        return text
    }

    /// Seconds as `m:ss` below an hour and `h:mm:ss` from an hour on (`1:10:00`, not `70:00`; a day-long
    /// countdown read `1000:10`), as the dashboard and the renderings show a countdown.
    static func clock(_ seconds: Int) -> String {
        let (hours, minutes, rest) = (seconds / 3600, seconds % 3600 / 60, seconds % 60)
        let ss = "\(rest < 10 ? "0" : "")\(rest)"
        return hours > 0 ? "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(ss)" : "\(minutes):\(ss)"
    }

    /// A number without a needless fraction: `0`, `50`, `2.5`.
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}

/// Writes `text` to standard output at once (unbuffered).
/// - Returns: false when standard output is closed (for example the reader of a pipe exited).
@discardableResult
func writeOutput(_ text: String) -> Bool {
    do {
        try FileHandle.standardOutput.write(contentsOf: Data(text.utf8))
        return true
    } catch {
        return false
    }
}
