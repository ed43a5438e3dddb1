import Foundation
import Testing

/// The edges of the code, checked on the sources (issue 28) rather than kept by comment:
/// - no target but the lws ones imports CLibWebSockets, calls an `lws_` function or names a `wsi`. SwiftPM hands a
///   target the module maps of its dependencies' dependencies too, so `import CLibWebSockets` would compile in
///   LiveActivityServer (through LiveActivityLWS): this test is what refuses it. Comments and string literals
///   may mention lws; code may not;
/// - every other C library is imported from its adapter folders only (``adapterFolders``): OpenSSL from the
///   crypto and TLS code, nghttp2 from the HTTP/2 listener, SQLite, hiredis, libcurl, libvips and zlib from the
///   targets that wrap them;
/// - `LiveActivityServer` is a composition root: extended nowhere but in its own file, which stays about 300
///   lines (``compositionRootMostLines``).
struct SourceEdgeTests {
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

    /// C module → the folders under `Sources/` whose files may import it (libwebsockets: see ``lwsTargets``).
    static let adapterFolders: [String: [String]] = [
        "CCrypto": ["LiveActivityServer/Crypto/", "LiveActivityServer/HTTP2/"],
        "CNghttp2": ["LiveActivityServer/HTTP2/"],
        "CSQLite": ["LiveActivityStore/"],
        "CHiredis": ["LiveActivityCluster/"],
        "CCurl": ["LiveActivityImages/"],
        "CVips": ["LiveActivityImages/"],
        "CZlib": ["LiveActivityLWS/Compression/"],
        "CLibEv": ["LiveActivityLWS/LWS/EventLoop.swift"],
        "CSendRing": ["LiveActivityLWS/LWS/SendQueue.swift"],
    ]

    @Test func eachCLibraryIsImportedOnlyByItsAdapterFolders() throws {
        let importLine = try NSRegularExpression(pattern: #"^\s*(?:@\w+\s+)*import\s+(C[A-Za-z0-9]+)\b"#, options: .anchorsMatchLines)
        var offences: [String] = []
        guard let files = FileManager.default.enumerator(atPath: Self.sources.path) else { return }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            for match in importLine.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                let module = String(text[Range(match.range(at: 1), in: text)!])
                if module == "CLibWebSockets" { continue }  // noTargetButTheLWSOnesUsesLibwebsockets
                guard let folders = Self.adapterFolders[module] else {
                    offences.append("\(file) imports \(module), which has no adapter folder listed here")
                    continue
                }
                if !folders.contains(where: { file.hasPrefix($0) }) {
                    offences.append("\(file) imports \(module) (allowed in \(folders.joined(separator: ", ")))")
                }
            }
        }
        #expect(offences.isEmpty, "C libraries outside their adapters:\n\(offences.joined(separator: "\n"))")
    }

    /// Most lines `Sources/LiveActivityServer/LiveActivityServer.swift` may have (issue 28: "at most about 300").
    static let compositionRootMostLines = 310

    @Test func theServerClassIsAnExtensionFreeCompositionRoot() throws {
        let extensionLine = try NSRegularExpression(pattern: #"^\s*(?:public\s+|package\s+|internal\s+)?extension\s+LiveActivityServer\b"#,
                                                    options: .anchorsMatchLines)
        var extended: [String] = []
        guard let files = FileManager.default.enumerator(atPath: Self.sources.path) else { return }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOf: Self.sources.appendingPathComponent(file), encoding: .utf8)
            if extensionLine.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil { extended.append(file) }
        }
        #expect(extended.isEmpty, "extension LiveActivityServer outside the composition root: \(extended)")
        let root = try String(contentsOf: Self.sources.appendingPathComponent("LiveActivityServer/LiveActivityServer.swift"), encoding: .utf8)
        let lines = root.split(separator: "\n", omittingEmptySubsequences: false).count
        #expect(lines <= Self.compositionRootMostLines, "LiveActivityServer.swift has \(lines) lines")
    }

    @Test func theCheckSeesCodeAndNotComments() throws {
        #expect(Self.code(of: #"    lws_write(wsi, p, n, raw) // lws_write"#).contains("lws_write("))
        #expect(!Self.code(of: #"    /// One `lws_write` per WRITEABLE"#).contains("lws_"))
        #expect(!Self.code(of: #"    logger.warning("lws_service failed")"#).contains("lws_"))
    }
}
