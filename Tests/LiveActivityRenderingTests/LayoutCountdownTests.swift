import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering

/// Which date leads (the first non-optional one, else the first optional one) and what the small presentations
/// show when the chosen date is nil at render time (the next present date, else the status): never nothing.
struct LayoutCountdownTests {
    static let source = """
    import ActivityKit
    struct RideAttributes: ActivityAttributes {
        public struct ContentState: Codable, Hashable {
            var eta: Date
            var pickupWindow: ClosedRange<Date>?
            var status: RideStatus
        }
        enum RideStatus: String, Codable, Hashable { case enRoute, arrived }
        var rideId: UUID
    }
    """

    static func renderer(countdown: String?) throws -> (ActivityRenderer, DeclaredKind) {
        let declaration = try ActivityDeclaration(swiftSource: source)
        var metadata = KindMetadata(name: "ride")
        metadata.countdown = countdown
        let kind = try DeclaredKind(declaration: declaration, metadata: metadata)
        let registry = KindRegistry([kind])
        return (ActivityRenderer(assets: RenderAssets(stylesheet: "", icons: [:]), kinds: registry,
                                 templates: KindTemplates.none.withGenerated(for: registry)), kind)
    }

    @Test func theFirstNonOptionalDateLeadsOverAnOptionalRange() throws {
        let declaration = try ActivityDeclaration(swiftSource: Self.source)
        let plan = LayoutPlan(declaration: declaration, metadata: KindMetadata(name: "ride"))
        for presentation in Presentation.allCases {
            let choice = plan.choice(for: presentation)
            #expect(choice.countdown?.key == "eta", "\(presentation)")
            #expect(choice.otherDates.map(\.key) == ["pickupWindow"], "\(presentation)")
        }
    }

    @Test func aNilCountdownFallsBackToTheNextDateElseTheStatus() throws {
        let (renderer, kind) = try Self.renderer(countdown: "pickupWindow")  // kind.json chose the optional one
        let t0 = Date(timeIntervalSince1970: 1_796_119_800)
        let state: JSONValue = .object(["eta": .string(ISODate.format(t0 + 9 * 60)), "status": .string("enRoute")])
        let activity = Activity(id: "r1", attributesType: kind.attributesType, attributes: .object(["rideId": .string(UUID().uuidString)]),
                                content: ActivityContent(state: state, staleDate: nil), timer: nil, startDate: t0)
        for presentation in [Presentation.compact, .minimal, .small] {
            let html = renderer.fragment(for: activity, presentation: presentation, now: t0)
            #expect(html.contains(#"data-countdown="eta""#) && html.contains(">9:00<"), "\(presentation): \(html)")
        }
        // The enum's identifier raw value in words, the UUID's label an acronym.
        let lock = renderer.fragment(for: activity, presentation: .lockScreen, now: t0)
        #expect(lock.contains(">En route<") && !lock.contains(">enRoute<") && lock.contains(">Ride ID<"), "\(lock)")
    }

    /// A field named in another script's letters (`heureDArrivée`, a Swift identifier) is shown and may lead as
    /// the countdown (it was left out of every presentation, the countdown too). From the new-user trial.
    @Test func fieldsNamedInAccentedLettersAreShown() throws {
        let source = """
        import ActivityKit
        struct TrainArrivalAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var heureDArrivée: Date; var quai: String }
            var numéroDuTrain: String
        }
        """
        let declaration = try ActivityDeclaration(swiftSource: source)
        let kind = try DeclaredKind(declaration: declaration, metadata: KindMetadata(name: "arrivee"))
        #expect(kind.metadata.countdown == "heureDArrivée")
        let plan = LayoutPlan(declaration: declaration, metadata: kind.metadata)
        #expect(plan.choice(for: .lockScreen).countdown?.key == "heureDArrivée")
        #expect(plan.choice(for: .lockScreen).fields.map(\.key) == ["quai", "numéroDuTrain"])
        let registry = KindRegistry([kind])
        let renderer = ActivityRenderer(assets: RenderAssets(stylesheet: "", icons: [:]), kinds: registry,
                                        templates: KindTemplates.none.withGenerated(for: registry))
        let t0 = Date(timeIntervalSince1970: 1_796_119_800)
        let activity = Activity(id: "t1", attributesType: "arrivee", attributes: .object(["numéroDuTrain": .string("TGV 6611")]),
                                content: ActivityContent(state: .object(["heureDArrivée": .string(ISODate.format(t0 + 42 * 60)),
                                                                         "quai": .string("Voie 7")]), staleDate: nil),
                                timer: nil, startDate: t0)
        let lock = renderer.fragment(for: activity, presentation: .lockScreen, now: t0)
        #expect(lock.contains(">42:00<") && lock.contains(">Numéro du train<") && lock.contains(">TGV 6611<"), "\(lock)")
    }

    @Test func identifiersComeLastUnlessKindJSONOrdersTheFields() throws {
        let source = Self.source.replacingOccurrences(of: "var rideId: UUID", with: "var rideId: UUID\n    var pickupAddress: String")
        let plan = LayoutPlan(declaration: try ActivityDeclaration(swiftSource: source), metadata: KindMetadata(name: "ride"))
        #expect(plan.choice(for: .lockScreen).fields.map(\.key) == ["pickupWindow", "pickupAddress", "rideId"])
        var metadata = KindMetadata(name: "ride")
        metadata.layout = ["lock-screen": ["rideId", "pickupAddress"]]
        let chosen = LayoutPlan(declaration: try ActivityDeclaration(swiftSource: source), metadata: metadata)
        #expect(chosen.choice(for: .lockScreen).fields.map(\.key) == ["rideId", "pickupAddress"])
    }
}
