import Foundation
import Testing

/// The edge to libwebsockets, checked on the sources (issue 28): no target but the lws ones imports
/// CLibWebSockets, calls an `lws_` function or names a `wsi`. SwiftPM hands a target the module maps of its
/// dependencies' dependencies too, so `import CLibWebSockets` would compile in LiveActivityServer (through
/// LiveActivityLWS): this test is what refuses it. Comments and string literals may mention lws; code may not.
struct LWSEdgeTests {
    /// The targets allowed to use libwebsockets: the server's and the client's adapters, the C memory they
    /// share, the load generator, and the module map itself.
    static let lwsTargets: Set<String> = ["LiveActivityLWS", "LiveActivityClientLWS", "LWSSupport", "liveactivity-bench", "CLibWebSockets"]

    /// `Sources/` of this checkout.
    static let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources")

    /// A line's code: without its `//` comment and with string literals emptied (a rough cut, enough here:
    /// no source line puts `//` inside a string before an lws name).
    static func code(of line: String) -> String {
        var text = line
        if let comment = text.range(of: "//") { text = String(text[..<comment.lowerBound]) }
        return text.replacingOccurrences(of: #""(?:\\.|[^"\\])*""#, with: "\"\"", options: .regularExpression)
    }

    @Test func noTargetButTheLWSOnesUsesLibwebsockets() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.sources.path)
        #expect(targets.contains("LiveActivityServer") && targets.contains("LiveActivityLWS"), "Sources/ not found at \(Self.sources.path)")
        let forbidden = try NSRegularExpression(pattern: #"\blws_[a-z_0-9]+\s*\(|\bwsi\b|^\s*(@testable\s+)?import\s+(CLibWebSockets|LWSSupport)\b"#)
        var offences: [String] = []
        for target in targets.sorted() where !Self.lwsTargets.contains(target) {
            let root = Self.sources.appendingPathComponent(target)
            guard let files = FileManager.default.enumerator(atPath: root.path) else { continue }
            for case let file as String in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: root.appendingPathComponent(file), encoding: .utf8)
                for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                    let code = Self.code(of: String(line))
                    if forbidden.firstMatch(in: code, range: NSRange(code.startIndex..., in: code)) != nil {
                        offences.append("\(target)/\(file):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
                    }
                }
            }
        }
        #expect(offences.isEmpty, "libwebsockets outside its targets:\n\(offences.joined(separator: "\n"))")
    }

    @Test func theCheckSeesCodeAndNotComments() throws {
        #expect(Self.code(of: #"    lws_write(wsi, p, n, raw) // lws_write"#).contains("lws_write("))
        #expect(!Self.code(of: #"    /// One `lws_write` per WRITEABLE"#).contains("lws_"))
        #expect(!Self.code(of: #"    logger.warning("lws_service failed")"#).contains("lws_"))
    }
}
