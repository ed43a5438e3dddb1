// The workout app's ActivityAttributes, as the seed app declares it (WorkoutWidgetAttributes).
//
// On this server's wire the state also carries `pausedAt` (an ISO-8601 date, optional): the instant a
// paused countdown froze (docs/PROTOCOL.md, `pause` / `resume`). The app's own type has no such field and
// ignores it when decoding, as Swift ignores unknown keys.
import ActivityKit
import Foundation

enum Workout: Int, Codable, Hashable {
    case jogging, aerobics, yoga
}

struct WorkoutWidgetAttributes: ActivityAttributes {
    public typealias WorkoutStatus = ContentState

    public struct ContentState: Codable, Hashable {
        var workoutTimer: ClosedRange<Date>
    }

    var workout: Workout
}
