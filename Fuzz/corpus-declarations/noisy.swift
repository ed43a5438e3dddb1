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
