//
//  WorkoutWidgetAttributes.swift
//  WorkoutWidget
//

import ActivityKit
import WidgetKit

struct WorkoutWidgetAttributes: ActivityAttributes {
    public typealias WorkoutStatus = ContentState

    public struct ContentState: Codable, Hashable {
        // Dynamic stateful properties about your activity go here!
        var workoutTimer: ClosedRange<Date>
    }

    // Fixed non-changing properties about your activity go here!
    var workout: Workout
}

enum Workout: Int, Codable {
    case jogging, aerobics, yoga
}
