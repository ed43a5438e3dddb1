import Testing
@testable import LiveActivityCore

/// Which kind a folder makes: a declared one (the built-in kinds too), or a `file:line: message` error.
struct KindRegistryFolderTests {
    @Test func aFolderWithoutAttributesSwiftIsRefusedWhateverItsName() throws {
        let folder = KindFolder(path: "Kinds/workout", metadata: KindMetadata(name: "workout"))
        #expect(throws: KindFolderError.self) { _ = try KindRegistry.kind(for: folder) }
    }

    @Test func aFolderWithAttributesSwiftIsADeclaredKind() throws {
        let folder = try KindFolder.make(name: "interval", path: "k/interval",
                                         files: ["Attributes.swift": DeclarationFixtures.intervalWorkout])
        let kind = try KindRegistry.kind(for: folder)
        #expect(kind is DeclaredKind)
        #expect(kind.attributesType == "interval")  // no kind.json: the folder's name (KindNamingTests)
        #expect(kind.swiftTypeNames == ["IntervalWorkoutAttributes"])
    }

    @Test func aMalformedDeclarationNamesFileAndLine() throws {
        let source = "import ActivityKit\n\nstruct A: ActivityAttributes {\n    public struct ContentState: Codable, Hashable {\n        var tint: Color\n    }\n}\n"
        let folder = try KindFolder.make(name: "broken", path: "k/broken", files: ["Attributes.swift": source])
        #expect {
            _ = try KindRegistry.kind(for: folder)
        } throws: { error in
            (error as? KindFolderError)?.description.hasPrefix("k/broken/Attributes.swift:5: ") == true
        }
    }

    @Test func aBadCountdownNamesKindJSON() throws {
        let folder = try KindFolder.make(name: "interval", path: "k/interval",
                                         files: ["Attributes.swift": DeclarationFixtures.intervalWorkout,
                                                 "kind.json": #"{"name": "interval", "countdown": "phase"}"#])
        #expect {
            _ = try KindRegistry.kind(for: folder)
        } throws: { error in
            (error as? KindFolderError)?.file == "k/interval/kind.json"
        }
    }

    @Test func aFolderWithNeitherIsRefused() throws {
        let folder = try KindFolder.make(name: "x", path: "k/x", files: [:])
        #expect(throws: KindFolderError.self) { _ = try KindRegistry.kind(for: folder) }
    }
}
