struct A: ActivityAttributes {
    struct ContentState: Codable, Hashable {
        var a: Int8 = 1
        let b = 2
        var c: [[Node]?]
        enum CodingKeys: String, CodingKey { case a = "x", c }
    }
    struct Node: Codable, Hashable { var next: [Node]; var level: Level; var at: Range<Date>? }
    enum Level: UInt8, Codable { case low = 1, mid, high = 0x10 }
    typealias Alias = Node
    var alias: Alias
    #if DEBUG
    var debug: Bool
    #elseif os(iOS)
    var other: String
    #endif
    var r = #"raw "}" string"#
}
