import Foundation
import Testing
@testable import LiveActivityCore

/// The commonest backend date bug: a declared kind's `Date` sent as Unix seconds, which Swift's default coding
/// reads as seconds since 2001-01-01 (31 years later). iOS applies it, so the verdict stays `applied`, but the
/// push answer warns, naming the field, the year it lands in and the number to send. No sockets; the clock is
/// passed in.
struct UnixSecondsDateTests {
    static let eta = """
        import ActivityKit
        import Foundation
        struct DeliveryAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var eta: Date
                var window: ClosedRange<Date>
            }
            var order: String
        }
        """
    static let startToken = String(repeating: "cd", count: 32)

    static func kind() throws -> DeclaredKind {
        try DeclaredKind(declaration: try ActivityDeclaration(swiftSource: eta), metadata: KindMetadata(name: "delivery"))
    }

    static func state(eta: Double, window: (Double, Double)) -> JSONValue {
        .object(["eta": .number(eta), "window": .array([.number(window.0), .number(window.1)])])
    }

    @Test func aDateInUnixSecondsIsWarnedAboutWithTheNumberToSend() throws {
        let declaration = try Self.kind().declaration
        let unix = t0.timeIntervalSince1970 + 3600
        let ref = t0.timeIntervalSinceReferenceDate + 3600
        let value = Self.state(eta: unix, window: (ref, unix + 7200))
        let warned = try declaration.decode(codable: value, as: .contentState, field: "aps.content-state", now: t0).warnings.map(\.description)
        #expect(warned.count == 2, "\(warned)")
        let eta = warned.first { $0.hasPrefix("aps.content-state.eta:") }
        #expect(eta?.contains("lands in the year 2057") == true, "\(warned)")
        #expect(eta?.contains("looks like Unix seconds") == true && eta?.contains("Swift's Date(from:) counts from 2001-01-01") == true)
        #expect(eta?.contains("send \(Int64(unix - 978_307_200))") == true, "\(warned)")
        #expect(warned.contains { $0.hasPrefix("aps.content-state.window[1]:") && $0.contains("looks like Unix seconds") }, "\(warned)")
        // Without a clock, and for dates sent right, nothing is said; the decoded value is the same either way.
        #expect(try declaration.decode(codable: value, as: .contentState).warnings.isEmpty)
        #expect(try declaration.decode(codable: value, as: .contentState).value == declaration.decode(codable: value, as: .contentState, now: t0).value)
        let right = Self.state(eta: ref, window: (ref, ref + 7200))
        #expect(try declaration.decode(codable: right, as: .contentState, now: t0).warnings.isEmpty)
        // A real date decades ahead whose Unix reading is not about now is not flagged.
        let far = t0.timeIntervalSinceReferenceDate + 25 * 365.25 * 86_400
        #expect(try declaration.decode(codable: Self.state(eta: far, window: (ref, ref)), as: .contentState, now: t0).warnings.isEmpty)
        // Milliseconds keep their own warning.
        let ms = try declaration.decode(codable: Self.state(eta: unix * 1000, window: (ref, ref)), as: .contentState, now: t0).warnings
        #expect(ms.count == 1 && ms[0].message.contains("Unix milliseconds"))
    }

    @Test func thePushIsAppliedWithTheWarning() throws {
        var center = ActivityCenter(kinds: KindRegistry([try Self.kind()]))
        var ids = IDs()
        let unix = t0.timeIntervalSince1970 + 3600
        let ref = t0.timeIntervalSinceReferenceDate
        let text = #"{"aps":{"timestamp":\#(t0.timeIntervalSince1970),"event":"start","attributes-type":"DeliveryAttributes","attributes":{"order":"42"},"content-state":{"eta":\#(unix),"window":[\#(ref),\#(ref + 60)]},"alert":{"title":"Go","body":"Go"}}}"#
        let push = try APNsPush.parse(try JSONValue.parse(Array(text.utf8)))
        let outcome = try center.applyPush(push, pushToken: Self.startToken, pushToStartToken: Self.startToken, now: t0, newID: { ids.make() })
        #expect(outcome.verdict == .applied)
        #expect(outcome.warnings.count == 1 && outcome.warnings[0].contains("aps.content-state.eta") && outcome.warnings[0].contains("looks like Unix seconds"),
                "\(outcome.warnings)")
    }
}
