import ActivityKit
import Foundation

struct IntervalWorkoutAttributes: ActivityAttributes {
    public struct ContentState: Codable, Hashable {
        var heartRate: Int
        var distance: Double
        var phase: Phase
        var interval: ClosedRange<Date>
        var note: String?
    }
    enum Plan: String, Codable { case fiveByFive = "5x5", pyramid, tabata }
    var athlete: String
    var plan: Plan
}
enum Phase: String, Codable, Hashable { case warmUp = "warm-up", work, rest, coolDown = "cool-down" }
