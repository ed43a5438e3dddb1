import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityRendering

/// The generated layout's policy, without sockets: what each presentation shows of three public-looking
/// declarations (Tests/fixtures/kinds), in which order, and what is left out whole.
struct LayoutPlanTests {
    static let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The declared kind in `Tests/fixtures/kinds/<folder>` (its `kind.json` when there is one).
    static func kind(_ folder: String, swiftName: String? = nil) throws -> DeclaredKind {
        let base = repo.appendingPathComponent("Tests/fixtures/kinds/\(folder)")
        let source = try String(contentsOf: base.appendingPathComponent("Attributes.swift"), encoding: .utf8)
        let declaration = try ActivityDeclaration(swiftSource: source, attributesType: swiftName)
        let json = base.appendingPathComponent("kind.json")
        let metadata = try? KindMetadata.parse(String(contentsOf: json, encoding: .utf8), file: json.path, folderName: folder)
        return try DeclaredKind(declaration: declaration, metadata: metadata)
    }

    static func plan(_ kind: DeclaredKind) -> LayoutPlan {
        LayoutPlan(declaration: kind.declaration, metadata: kind.metadata)
    }

    @Test func wordsReadAsPeopleSayThem() {
        #expect(Words.label(ofField: "estimatedDeliveryTime") == "Estimated delivery time")
        #expect(Words.label(ofField: "etaURL") == "ETA URL")
        #expect(Words.label(ofField: "eta") == "ETA" && Words.label(ofField: "rideId") == "Ride ID" && Words.label(ofField: "xl") == "XL")
        #expect(Words.label(ofField: "identity") == "Identity" && Words.label(ofField: "okay") == "Okay")
        #expect(Words.label(ofRawValue: "in_progress") == "In progress" && Words.label(ofRawValue: "enRoute") == "En route")
        #expect(Words.label(ofRawValue: "Your courier is on the way") == "Your courier is on the way")
        #expect(Words.label(ofRawValue: "FedEx") == "FedEx" && Words.label(ofRawValue: "UPS") == "UPS")  // names as written
        #expect(Words.label(ofField: "team_name") == "Team name")
        #expect(Words.label(ofField: "heat2Time") == "Heat 2 time")
        #expect(Words.title(ofStruct: "DeliveryActivityAttributes") == "Delivery activity")
        #expect(Words.title(ofStruct: "PizzaDeliveryAttributes") == "Pizza delivery")
        #expect(Words.title(ofStruct: "Attributes") == "Attributes")
    }

    @Test func theCountdownAndTheStatusLeadThenFieldsInDeclarationOrder() throws {
        let plan = Self.plan(try Self.kind("food-delivery"))
        #expect(plan.title == "Delivery activity")
        let lock = plan.choice(for: .lockScreen)
        #expect(lock.countdown?.key == "estimatedDeliveryTime")
        #expect(lock.status?.key == "status")
        #expect(lock.fields.map(\.key) == ["courierName", "restaurantName", "orderNumber", "items", "totalPrice"])
        #expect(lock.fields.first?.label == "Courier name")
        for presentation in [Presentation.compact, .minimal, .small] {
            let choice = plan.choice(for: presentation)
            #expect(choice.fields.isEmpty && choice.countdown?.key == "estimatedDeliveryTime", "\(presentation)")
        }
    }

    @Test func aDateRangeLeadsAndKindJSONNamesTheTitle() throws {
        let plan = Self.plan(try Self.kind("pizza-delivery", swiftName: "PizzaDeliveryAttributes"))
        #expect(plan.title == "Pizza delivery")
        let lock = plan.choice(for: .lockScreen)
        #expect(lock.countdown?.key == "deliveryTimer" && lock.countdown?.isRange == true)
        #expect(lock.status == nil)
        #expect(lock.fields.map(\.key) == ["driverName", "numberOfPizzas", "totalAmount", "orderNumber"])
    }

    @Test func arraysOfStructsAreRowsAndWhatDoesNotFitIsLeftOutWhole() throws {
        let plan = Self.plan(try Self.kind("sports-results"))
        let finishers = try #require(plan.fields.first { $0.key == "finishers" })
        #expect(finishers.shape == .rows(["place", "athlete", "school", "mark"]) && finishers.lines == 3)
        let expanded = plan.choice(for: .expanded)
        #expect(expanded.status?.key == "eventStatus")
        // Six lines with a status: currentEvent (1), finishers (3); teamScores (3) is left out whole; heat,
        // windSpeed and isFinal (short) share one line; meetName. The frame's `stack fit` leaves out at render
        // time what does not fit.
        #expect(expanded.fields.map(\.key) == ["currentEvent", "finishers", "heat", "windSpeed", "isFinal", "meetName"])
        #expect(expanded.lines.map { $0.map(\.key) }[2] == ["heat", "windSpeed", "isFinal"])
        let lock = plan.choice(for: .lockScreen)
        #expect(lock.fields.map(\.key) == ["currentEvent", "finishers", "teamScores", "heat", "windSpeed", "isFinal", "meetName", "venue", "sport"])
        #expect(lock.lines.reduce(0) { $0 + LayoutPlan.Choice.cost($1) } <= LayoutPlan.lineBudget(.lockScreen, hasStatus: true))
    }

    @Test func kindJSONChoosesAndOrdersTheFieldsPerPresentation() throws {
        let kind = try Self.kind("food-delivery")
        var metadata = kind.metadata
        metadata.layout = ["lock-screen": ["items", "status", "nothing"], "compact": ["status"]]
        let plan = LayoutPlan(declaration: kind.declaration, metadata: metadata)
        let lock = plan.choice(for: .lockScreen)
        #expect(lock.countdown == nil && lock.status?.key == "status" && lock.fields.map(\.key) == ["items"])
        let compact = plan.choice(for: .compact)
        #expect(compact.countdown == nil && compact.status?.key == "status")
        #expect(GeneratedLayout.template(plan, .compact).contains("{{display.status.text}}"))
        #expect(plan.choice(for: .expanded).countdown?.key == "estimatedDeliveryTime")
    }

    @Test func displayValuesFormatEachShape() {
        let now: Int64 = 1_796_119_800_000 // 2026-12-01T10:10:00Z
        let fields: [String: JSONValue] = [
            "eta": .string("2026-12-01T10:28:00.000Z"), "later": .string("2026-12-01T17:46:00.000Z"),
            "items": .array(["Margherita", "Pepperoni", "Garlic bread", "Tiramisu"].map(JSONValue.string)),
            "price": .number(38.5), "points": .number(12500), "ratio": .number(3.14159), "final": .bool(false),
            "gone": .null, "empty": .array([]), "note": .string(""),
            "rows": .array([.object(["place": .number(1), "name": .string("Maya")]), .object(["place": .number(2), "name": .null]),
                            .object(["place": .number(3)])]),
        ]
        let display = DisplayValues.build(fields, context: [:], kind: KindMetadata(name: "x"), nowMs: now,
                                          startMs: now - 600_000, freezeMs: nil, offsetMinutes: 60)
        #expect(display["eta"] == .object(["text": .string("11:28"), "short": .string("11:28"), "countdown": .string("18:00"), "near": .bool(true),
                                           "progress": .number(357)]))
        #expect(display["later"]?["near"] == .bool(false) && display["later"]?["text"] == .string("18:46"))
        #expect(display["items"]?["text"] == .string("Margherita, Pepperoni +2"))
        #expect(display["price"]?["text"] == .string("38.5") && display["points"]?["text"] == .string("12,500"))
        #expect(display["ratio"]?["text"] == .string("3.14") && display["final"]?["text"] == .string("No"))
        #expect(display["gone"] == nil && display["empty"] == nil && display["note"] == nil)
        #expect(display["rows"]?["more"] == .string("+1 more"))
        guard case .array(let rows)? = display["rows"]?["rows"] else { Issue.record("no rows"); return }
        #expect(rows.count == 2 && rows[1]["fields"] == JSONValue.object(["place": .string("2")]))
    }

    @Test func theRendererDrawsTheFrameAroundTheGeneratedLayout() throws {
        let kind = try Self.kind("food-delivery")
        let t0 = Date(timeIntervalSince1970: 1_796_119_800)
        let eta = ISODate.format(t0 + 18 * 60)
        let activity = Activity(id: "d1", attributesType: kind.attributesType,
                                attributes: .object(["restaurantName": .string("Luigi's"), "orderNumber": .string("A-1042"),
                                                     "items": .array(["Margherita", "Pepperoni", "Garlic bread"].map(JSONValue.string)), "totalPrice": .number(38.5)]),
                                content: ActivityContent(state: .object(["status": .string("Your courier is on the way"),
                                                                         "estimatedDeliveryTime": .string(eta)]), staleDate: nil),
                                timer: nil, startDate: t0)
        let renderer = ActivityRenderer(assets: RenderAssets(stylesheet: "", icons: [:]), kinds: KindRegistry([kind]))
        let lock = renderer.fragment(for: activity, presentation: .lockScreen, now: t0)
        #expect(lock.hasPrefix(#"<article class="lock-screen la-frame" data-kind="DeliveryActivityAttributes""#))
        #expect(lock.contains(">Delivery activity<") && lock.contains(">Your courier is on the way<"))
        #expect(lock.contains(#"data-countdown="estimatedDeliveryTime" data-start=""#) && lock.contains(">18:00<"))
        #expect(lock.contains(">Margherita, Pepperoni +1<") && lock.contains(">Courier name<") == false)  // nil: left out
        #expect(!lock.contains("DeliveryActivityAttributes<") && !lock.contains(eta))
        let minimal = renderer.fragment(for: activity, presentation: .minimal, now: t0)
        #expect(minimal.hasPrefix(#"<div class="island-minimal la-frame""#) && minimal.contains(">18:00<"))
        let compact = renderer.fragment(for: activity, presentation: .compact, now: t0)
        #expect(compact.contains(#"<span class="camera" aria-hidden="true"></span></div>"#))
    }

    /// An enum without a raw type whose cases carry associated values was left out (its JSON is an object, and
    /// the layout showed the status from `display.F.text`); a dictionary with enum keys (a flat JSON array) read
    /// as a list, "economy, 12 +2"; a far range in the compact island was cut to "18:05 …"; a struct's line
    /// spent its room on a logo's URL.
    @Test func keyedEnumsDictionariesAndFarRangesAreShownWhole() throws {
        let source = """
        import ActivityKit
        struct FlightAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var gateStatus: GateStatus
                var departure: ClosedRange<Date>
                var seatsLeft: [CabinClass: Int]
                var fares: [String: Double]
            }
            enum GateStatus: Codable, Hashable {
                case onTime
                case delayed(minutes: Int)
                case gateChanged(String)
            }
            enum CabinClass: String, Codable, Hashable { case economy, business }
            struct Airline: Codable, Hashable { var name: String; var logo: URL; var id: UUID }
            var flightNumber: String
            var airline: Airline
        }
        """
        let kind = try DeclaredKind(declaration: try ActivityDeclaration(swiftSource: source), metadata: nil)
        // A struct's line leaves its URLs and UUIDs out ("Lufthansa", not "Lufthansa · https://exa…").
        #expect(Self.plan(kind).fields.first { $0.key == "airline" }?.shape == .fields(["name"]))
        #expect(kind.metadata.enums["gateStatus"]?.map(\.label) == ["On time", "Delayed", "Gate changed"])
        #expect(kind.metadata.enums["gateStatus"]?[1].associatedValues == [KindMetadata.AssociatedValue(key: "minutes", label: "Minutes")])
        #expect(kind.metadata.enums["gateStatus"]?[2].associatedValues == [KindMetadata.AssociatedValue(key: "_0", label: "")])
        #expect(kind.metadata.dictionaries == ["seatsLeft": .array, "fares": .object])
        let t0 = Date(timeIntervalSince1970: 1_796_119_800) // 10:10 UTC
        let renderer = ActivityRenderer(assets: RenderAssets(stylesheet: "", icons: [:]), kinds: KindRegistry([kind]),
                                        templates: KindTemplates.none.withGenerated(for: KindRegistry([kind])))
        func activity(_ status: JSONValue) -> Activity {
            Activity(id: "f1", attributesType: kind.attributesType, attributes: .object(["flightNumber": .string("LH 400")]),
                     content: ActivityContent(state: .object([
                        "gateStatus": status, "seatsLeft": .array([.string("economy"), .number(12), .string("business"), .number(2)]),
                        "fares": .object(["economy": .number(199.5)]),
                        "departure": .object(["start": .string(ISODate.format(t0)), "end": .string(ISODate.format(t0 + 3 * 3600))]),
                     ]), staleDate: nil), timer: nil, startDate: t0)
        }
        let lock = renderer.fragment(for: activity(.object(["delayed": .object(["minutes": .number(25)])])), presentation: .lockScreen, now: t0)
        // The CabinClass keys in words, as the enum's own values are; the String keys as they are.
        #expect(lock.contains(">Delayed · Minutes 25<") && lock.contains(">Economy 12, Business 2<") && lock.contains(">economy 199.5<"))
        let moved = renderer.fragment(for: activity(.object(["gateChanged": .object(["_0": .string("B42")])])), presentation: .expanded, now: t0)
        #expect(moved.contains(">Gate changed · B42<"))
        let compact = renderer.fragment(for: activity(.object(["onTime": .object([:])])), presentation: .compact, now: t0)
        #expect(compact.contains(">13:10<") && !compact.contains("10:10 – 13:10"))
        let minimal = renderer.fragment(for: activity(.object(["onTime": .object([:])])), presentation: .minimal, now: t0)
        #expect(minimal.contains(">13:10<"))
    }

    @Test func aTemplateWithItsOwnFrameIsKeptAndColoursComeFromKindJSON() throws {
        #expect(ActivityRenderer.drawsOwnFrame(#"<article class="lock-screen kind-workout" data-x="1">"#))
        #expect(!ActivityRenderer.drawsOwnFrame(#"<div class="row"><span class="label">x</span></div>"#))
        let pizza = try Self.kind("pizza-delivery", swiftName: "PizzaDeliveryAttributes")
        let rules = ActivityRenderer.kindColourRules(KindRegistry([pizza]))
        #expect(rules == #"[data-kind="pizza-delivery"] { --kind-tint: #b3261e; --kind-foreground: #fff; --activity-system-action-foreground: #ffffff; }"#)
        #expect(KindColours.foreground(on: "#f4f4f7") == "#000")
    }

    @Test func everyGeneratedTemplateParsesAndIsDrawnInItsFrame() throws {
        let kinds = [try Self.kind("food-delivery"), try Self.kind("pizza-delivery", swiftName: "PizzaDeliveryAttributes"),
                     try Self.kind("sports-results")]
        let registry = KindRegistry(kinds)
        let templates = KindTemplates.none.withGenerated(for: registry)
        let frames: [Presentation: String] = [.lockScreen: #"<article class="lock-screen la-frame""#, .compact: #"<div class="island-compact la-frame""#,
                                              .minimal: #"<div class="island-minimal la-frame""#, .expanded: #"<div class="island-expanded la-frame""#,
                                              .small: #"<div class="activity-small la-frame""#]
        let t0 = Date(timeIntervalSince1970: 1_796_119_800)
        for kind in kinds {
            let activity = Activity(id: "x", attributesType: kind.attributesType, attributes: .object([:]),
                                    content: ActivityContent(state: .object([:]), staleDate: nil), timer: nil, startDate: t0)
            let renderer = ActivityRenderer(assets: RenderAssets(stylesheet: "", icons: [:]), kinds: registry, templates: templates)
            for presentation in Presentation.allCases {
                #expect(templates.text(kind: kind.attributesType, presentation: presentation)?.contains("Generated from the declaration") == true)
                let html = renderer.fragment(for: activity, presentation: presentation, now: t0)
                #expect(html.hasPrefix(frames[presentation]!), "\(kind.attributesType) \(presentation)")
            }
        }
    }

    @Test func keysNoPathCanHoldAreLeftOut() throws {
        let source = """
        import ActivityKit
        struct OddAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable {
                var eta: Date
                var note: String
                enum CodingKeys: String, CodingKey { case eta = "eta.time", note = "note" }
            }
            var name: String
        }
        """
        let declaration = try ActivityDeclaration(swiftSource: source)
        let plan = LayoutPlan(declaration: declaration, metadata: KindMetadata(name: "odd"))
        #expect(plan.fields.map(\.key) == ["note", "name"])
    }
}
