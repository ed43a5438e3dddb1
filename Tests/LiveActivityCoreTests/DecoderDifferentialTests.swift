import Foundation
import Testing
@testable import LiveActivityCore

/// Our verdicts proven against the real decoder (issue 27, item 5): the fixture declarations of
/// `Tests/fixtures/decoder-differential` are compiled with the Swift toolchain on the machine into one
/// program that decodes every payload with Foundation's own `JSONDecoder` and prints one verdict per line;
/// ours (``ActivityDeclaration/decode(codable:as:field:)``) must agree on each: applied, or the same
/// `DecodingError` case at the same coding path.
///
/// Payloads are each fixture's hand-written ones (`Name.json`: valid ones and each kind of failure) plus
/// ``PayloadMutations`` of every payload we apply (seeded, so a failure repeats). One compile (about 10 s)
/// and one run serve all pairs. Known difference, counted apart: the Linux `JSONDecoder` of Swift 6.3
/// reports a number that does not fit its type (`300` for `Int8`, `1e39` for `Float`) as `dataCorrupted` at
/// the root ("The given data was not valid JSON."), where we name the field, as Apple's documents it
/// ("Parsed JSON number <300> does not fit in Int8."); the case agrees.
struct DecoderDifferentialTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("fixtures/decoder-differential")

    /// Mutants per payload we apply.
    static let mutantsPerPayload = 10

    struct Pair {
        var root: String
        var part: DeclaredPart
        var payload: JSONValue
        var ours: Verdict
    }

    struct Verdict: Equatable, CustomStringConvertible {
        var kind: String
        var path: [String]
        var debug: String
        static func == (lhs: Verdict, rhs: Verdict) -> Bool { lhs.kind == rhs.kind && lhs.path == rhs.path }
        var description: String { kind + (path.isEmpty ? "" : " at " + path.joined(separator: "/")) + (debug.isEmpty ? "" : " (\(debug))") }
    }

    @Test func verdictsAgreeWithFoundationsJSONDecoder() throws {
        let swiftc = try #require(Self.findSwiftc(), "swiftc not found on PATH or in /opt/swift/usr/bin: the differential test needs the toolchain")
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasSuffix(".swift") }.sorted()
        var pairs: [Pair] = []
        var roots: [String] = []
        for name in names {
            let base = String(name.dropLast(".swift".count))
            let source = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
            let cases = try JSONValue.parse(Array(try Data(contentsOf: Self.folder.appendingPathComponent(base + ".json"))))
            let root = try #require(cases.objectValue?["attributesType"]?.stringValue)
            let declaration = try ActivityDeclaration(swiftSource: source, file: name, attributesType: root)
            roots.append(root)
            for (seedIndex, part) in DeclaredPart.allCases.enumerated() {
                guard case .array(let payloads)? = cases.objectValue?[part.rawValue] else { continue }
                for (index, payload) in payloads.enumerated() {
                    let verdict = Self.ours(declaration, payload, part)
                    pairs.append(Pair(root: root, part: part, payload: payload, ours: verdict))
                    guard verdict.kind == "applied" else { continue }
                    let seed = UInt64(27 &* 1_000_003) &+ UInt64(pairs.count) &* 7919 &+ UInt64(seedIndex * 100 + index)
                    for mutant in PayloadMutations.mutants(of: payload, count: Self.mutantsPerPayload, seed: seed) {
                        pairs.append(Pair(root: root, part: part, payload: mutant, ours: Self.ours(declaration, mutant, part)))
                    }
                }
            }
        }
        let real = try Self.realVerdicts(pairs, roots: roots, sources: names, swiftc: swiftc)
        try #require(real.count == pairs.count, "the decoding program printed \(real.count) verdicts for \(pairs.count) payloads")
        var agreed = 0
        var known = 0
        var disagreements: [String] = []
        for (pair, theirs) in zip(pairs, real) {
            if pair.ours == theirs {
                agreed += 1
            } else if theirs.kind == "dataCorrupted", theirs.path.isEmpty, theirs.debug == "The given data was not valid JSON.",
                      pair.ours.kind == "dataCorrupted", pair.ours.debug.hasPrefix("Parsed JSON number") {
                known += 1
            } else {
                let text = String(decoding: (try? JSONEncoder().encode(pair.payload)) ?? Data(), as: UTF8.self)
                disagreements.append("\(pair.root).\(pair.part.rawValue) \(text): ours \(pair.ours), JSONDecoder \(theirs)")
            }
        }
        let kinds = Dictionary(grouping: real, by: \.kind).mapValues(\.count).sorted { $0.key < $1.key }
        print("decoder differential: \(pairs.count) pairs, \(agreed) agree, \(known) agree up to the known Linux root path, "
              + "\(disagreements.count) disagree; JSONDecoder verdicts: \(kinds.map { "\($0.key) \($0.value)" }.joined(separator: ", "))")
        #expect(pairs.count >= 200)
        #expect(disagreements.isEmpty, Comment(rawValue: "\(disagreements.count) disagreements:\n" + disagreements.prefix(40).joined(separator: "\n")))
        for kind in ["applied", "keyNotFound", "typeMismatch", "valueNotFound", "dataCorrupted"] {
            #expect(kinds.contains { $0.key == kind }, "no pair where JSONDecoder says \(kind)")
        }
    }

    /// Our verdict: applied, or the failure's case and coding path (the absent key last for `keyNotFound`),
    /// array indices as `JSONDecoder` names them (`Index 2`).
    static func ours(_ declaration: ActivityDeclaration, _ payload: JSONValue, _ part: DeclaredPart) -> Verdict {
        do {
            _ = try declaration.decode(codable: payload, as: part)
            return Verdict(kind: "applied", path: [], debug: "")
        } catch {
            let path = error.kind == .keyNotFound ? error.codingPath + [.key(error.key ?? "")] : error.codingPath
            return Verdict(kind: error.kind.rawValue, path: path.map {
                switch $0 {
                case .key(let key): key
                case .index(let index): "Index \(index)"
                }
            }, debug: error.debugDescription)
        }
    }

    // MARK: - The real decoder

    static func findSwiftc() -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init) + ["/opt/swift/usr/bin"]
        return directories.map { "\($0)/swiftc" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Compiles the fixtures with a generated `main.swift` and runs it on every pair.
    static func realVerdicts(_ pairs: [Pair], roots: [String], sources: [String], swiftc: String) throws -> [Verdict] {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("decoder-differential-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        var files: [String] = []
        for name in sources {
            // ActivityKit, SwiftUI and WidgetKit do not exist here: the shim declares ActivityAttributes as ActivityKit does.
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
                .map { ["import ActivityKit", "import SwiftUI", "import WidgetKit"].contains($0.trimmingCharacters(in: .whitespaces)) ? "" : String($0) }
                .joined(separator: "\n")
            let url = work.appendingPathComponent(name)
            try text.write(to: url, atomically: true, encoding: .utf8)
            files.append(url.path)
        }
        let shim = "import Foundation\npublic protocol ActivityAttributes: Decodable, Encodable {\n    associatedtype ContentState: Codable, Hashable\n}\n"
        try shim.write(to: work.appendingPathComponent("ActivityKitShim.swift"), atomically: true, encoding: .utf8)
        try mainProgram(roots: roots).write(to: work.appendingPathComponent("main.swift"), atomically: true, encoding: .utf8)
        let executable = work.appendingPathComponent("decode").path
        let compile = try run(swiftc, ["-Onone", "-module-name", "Differential", "-o", executable,
                                       work.appendingPathComponent("main.swift").path, work.appendingPathComponent("ActivityKitShim.swift").path] + files)
        guard compile.status == 0 else { throw DifferentialError("swiftc failed:\n\(compile.output)") }
        let encoder = JSONEncoder()
        let lines = try pairs.map { pair in "\(pair.root)/\(pair.part.rawValue)\t" + String(decoding: try encoder.encode(pair.payload), as: UTF8.self) }
        let input = work.appendingPathComponent("payloads.txt")
        try (lines.joined(separator: "\n") + "\n").write(to: input, atomically: true, encoding: .utf8)
        let decoded = try run(executable, [input.path])
        guard decoded.status == 0 else { throw DifferentialError("the decoding program failed:\n\(decoded.output)") }
        return decoded.output.split(separator: "\n").compactMap { line in
            guard let object = (try? JSONValue.parse(Array(line.utf8)))?.objectValue, let kind = object["kind"]?.stringValue else { return nil }
            let path: [String] = if case .array(let items)? = object["path"] { items.compactMap(\.stringValue) } else { [] }
            return Verdict(kind: kind, path: path, debug: object["debug"]?.stringValue ?? "")
        }
    }

    static func mainProgram(roots: [String]) -> String {
        let table = roots.map { root in
            "    \"\(root)/attributes\": { _ = try JSONDecoder().decode(\(root).self, from: $0) },\n"
                + "    \"\(root)/contentState\": { _ = try JSONDecoder().decode(\(root).ContentState.self, from: $0) },\n"
        }.joined()
        return """
            import Foundation

            let decoders: [String: (Data) throws -> Void] = [
            \(table)]

            func verdict(_ kind: String, _ path: [any CodingKey], _ debug: String) -> String {
                let object: [String: Any] = ["kind": kind, "path": path.map(\\.stringValue), "debug": debug]
                return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
            }

            let text = try! String(contentsOfFile: CommandLine.arguments[1], encoding: .utf8)
            for entry in text.split(separator: "\\n") {
                let parts = entry.split(separator: "\\t", maxSplits: 1)
                do {
                    try decoders[String(parts[0])]!(Data(parts[1].utf8))
                    print(verdict("applied", [], ""))
                } catch let error as DecodingError {
                    switch error {
                    case .keyNotFound(let key, let context): print(verdict("keyNotFound", context.codingPath + [key], context.debugDescription))
                    case .typeMismatch(_, let context): print(verdict("typeMismatch", context.codingPath, context.debugDescription))
                    case .valueNotFound(_, let context): print(verdict("valueNotFound", context.codingPath, context.debugDescription))
                    case .dataCorrupted(let context): print(verdict("dataCorrupted", context.codingPath, context.debugDescription))
                    @unknown default: print(verdict("unknown", [], "\\(error)"))
                    }
                } catch {
                    print(verdict("other", [], "\\(error)"))
                }
            }

            """
    }

    struct DifferentialError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
