// The emoji app's ActivityAttributes (the seed article's remote-image activity): a named period with a
// remote thumbnail, and an emoji as its changing state. As kind.json's limits bound it: `name` is
// 1…64 characters, `image` an optional http(s) URL, `endTime` not before `startTime`; `emoji` one grapheme
// cluster or a short text of at most 16 characters.
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
