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
