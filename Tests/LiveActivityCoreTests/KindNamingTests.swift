import Testing
@testable import LiveActivityCore

/// The one naming rule of kind folders (issue 27, item 6; `KindNaming.swift`): the folder's name is the wire
/// name unless `kind.json` gives one; the struct's name is always an accepted APNs `attributes-type`.
struct KindNamingTests {
    static let pizza = """
        import ActivityKit
        struct PizzaDeliveryAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var driverName: String }
            var numberOfPizzas: Int
        }
        struct PizzaAdAttributes: ActivityAttributes {
            public struct ContentState: Codable, Hashable { var adName: String }
            var discount: String
        }
        """

    private func kind(_ folderName: String, _ files: [String: String]) throws -> any ActivityKind {
        try KindRegistry.kind(for: try KindFolder.make(name: folderName, path: "k/\(folderName)", files: files))
    }

    private func error(_ folderName: String, _ files: [String: String]) -> String? {
        do {
            _ = try kind(folderName, files)
            return nil
        } catch {
            return "\(error)"
        }
    }

    @Test func theFolderNameIsTheWireNameWithOrWithoutKindJSON() throws {
        let bare = try kind("interval", ["Attributes.swift": DeclarationFixtures.intervalWorkout])
        #expect(bare.attributesType == "interval" && bare.swiftTypeNames == ["IntervalWorkoutAttributes"])
        #expect(bare.metadata.label == "Interval workout")  // the struct name in words, without "Attributes"
        // Adding kind.json for swiftNames or a label does not change the wire name.
        let described = try kind("interval", ["Attributes.swift": DeclarationFixtures.intervalWorkout,
                                              "kind.json": #"{"label": "Intervals", "swiftNames": ["IntervalWorkoutAttributes"]}"#])
        #expect(described.attributesType == "interval")
        let renamed = try kind("interval", ["Attributes.swift": DeclarationFixtures.intervalWorkout, "kind.json": #"{"name": "hiit"}"#])
        #expect(renamed.attributesType == "hiit")
        var registry = KindRegistry([bare])
        #expect(registry.kind(forPushType: "IntervalWorkoutAttributes")?.attributesType == "interval")
        registry = KindRegistry([renamed])
        #expect(registry.kind(forPushType: "IntervalWorkoutAttributes")?.attributesType == "hiit")
    }

    @Test func theStructsNameIsAcceptedAsAWireName() throws {
        let named = try kind("interval", ["Attributes.swift": DeclarationFixtures.intervalWorkout,
                                          "kind.json": #"{"name": "IntervalWorkoutAttributes"}"#])
        #expect(named.attributesType == "IntervalWorkoutAttributes")
        let folder = try kind("IntervalWorkoutAttributes", ["Attributes.swift": DeclarationFixtures.intervalWorkout])
        #expect(folder.attributesType == "IntervalWorkoutAttributes")
        #expect(error("interval", ["Attributes.swift": DeclarationFixtures.intervalWorkout, "kind.json": #"{"name": "Intervals"}"#])
                == #"k/interval/kind.json: "name": "Intervals" is neither a kind name (1…64 of a-z, 0-9, - and _) nor the struct's name "IntervalWorkoutAttributes""#)
        // A folder's own name may be any Swift-like name; one with a space is not a name.
        #expect(try kind("IntervalTimer", ["Attributes.swift": DeclarationFixtures.intervalWorkout]).attributesType == "IntervalTimer")
        #expect(error("My Intervals", ["Attributes.swift": DeclarationFixtures.intervalWorkout])
                == #"k/My Intervals: the folder name "My Intervals" is not a kind name (1…64 of a-z, 0-9, - and _) nor the struct's name "IntervalWorkoutAttributes"; rename the folder, or write kind.json: {"name": "my-intervals"}"#)
    }

    @Test func twoStructsTheErrorSaysWhatToWrite() throws {
        #expect(error("pizza", ["Attributes.swift": Self.pizza])
                == #"k/pizza/Attributes.swift:6: several structs conform to ActivityAttributes ("PizzaDeliveryAttributes", "PizzaAdAttributes"); to read "PizzaDeliveryAttributes", write k/pizza/kind.json: {"swiftNames": ["PizzaDeliveryAttributes"]}"#)
        // Writing exactly that works, and keeps the wire name.
        let first = try kind("pizza", ["Attributes.swift": Self.pizza, "kind.json": #"{"swiftNames": ["PizzaDeliveryAttributes"]}"#])
        #expect(first.attributesType == "pizza" && first.swiftTypeNames == ["PizzaDeliveryAttributes"])
        let second = try kind("pizza", ["Attributes.swift": Self.pizza, "kind.json": #"{"swiftNames": ["PizzaAdAttributes"]}"#])
        #expect(second.attributesType == "pizza" && second.swiftTypeNames == ["PizzaAdAttributes"])
        #expect(error("pizza", ["Attributes.swift": Self.pizza, "kind.json": #"{"label": "Pizza"}"#])?.hasSuffix(
            #"write k/pizza/kind.json: {"swiftNames": ["PizzaDeliveryAttributes"]} (beside its other keys)"#) == true)
    }
}
