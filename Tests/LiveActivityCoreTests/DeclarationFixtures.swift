/// `Attributes.swift` files as apps write them, for the declaration tests.
enum DeclarationFixtures {
    /// Issue 17's example kind.
    static let intervalWorkout = """
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
        """

    /// The reference workout app's declaration (its `Workout` enum lives in another file of the app, pasted here).
    static let workoutWidget = """
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
        """

    /// The emoji kind, as `Kinds/emoji/Attributes.swift` declares it.
    static let emoji = """
        import ActivityKit
        import Foundation

        struct EmojiAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var emoji: String
            }

            var startTime: Date
            var endTime: Date
            var name: String
            var image: URL?
        }
        """

    /// Everything the reader must skip, around a small declaration.
    static let noisy = ##"""
        import ActivityKit
        import struct Foundation.Date
        /* A block comment with a brace { and /* a nested one } */ still a comment */
        /// Doc comment: struct Fake: ActivityAttributes {
        @available(iOS 16.1, *)
        @MainActor
        public struct DeliveryAttributes: ActivityAttributes {
            public typealias Status = ContentState
            public struct ContentState: Codable, Hashable {
                public var stage: Stage
                var eta: Date
                var window: Range<Date>?
                private(set) var courier: Courier
                var stops: [Stop] = []
                var label: String { "\(stage) {" }
                var shouted: String {
                    get { label.uppercased() }
                }
                var progress: Double = 0 {
                    didSet { print("}") }
                }
                static var preview = ContentState(stage: .packed, eta: .now, window: nil, courier: .init(name: "x"), stops: [])
                let kind = "delivery"
                func describe() -> String {
                    let text = """
                        multi-line } with "quotes" and \(stage)
                        """
                    return text + #"raw "}" \#(eta)"#
                }
                enum CodingKeys: String, CodingKey {
                    case stage = "status", eta, window, courier, stops
                }
            }
            struct Courier: Codable, Hashable { var name: String; var phone: String? = nil }
            var orderNumber: Int64
            #if os(iOS)
            var store: String
            #else
            var store: Int
            #endif
            var items: Array<Item>
            var logo: Optional<URL>
            mutating func reset() { orderNumber = 0 }
        }
        enum Stage: String, Codable { case packed, shipped = "on-the-way", delivered }
        struct Item: Codable, Hashable {
            var sku: String
            var count: UInt8
            var tags: [String]?
        }
        extension DeliveryAttributes {
            struct Stop: Codable, Hashable { var at: Date; var done: Bool }
        }
        struct DeliveryView: View {
            var context: Color
            var body: some View { Text("}") }
        }
        """##
}
