/// The route table: which handler answers a method and path, and what 404 or 405 says when none does.
///
/// Routes are registered as a set of methods and a path pattern of `/`-separated segments: a literal
/// (`api`), a parameter (`{id}`: any one non-empty segment, read as `request.parameters["id"]`), or, last
/// only, `**` (the rest of the path, zero or more segments, read as `request.parameters["**"]`). A pattern
/// ending in `/` has an empty last segment and matches only paths that end in `/` (`/gallery/`), so a
/// trailing slash is a route of its own, as it always was here.
///
/// Dispatch takes the best match, whatever the order of registration: of the patterns matching the path, the
/// one whose segments are more specific from the left (literal over parameter over `**`), registered for the
/// request's method. HEAD is answered by a GET route (the adapter then writes no body). When that pattern is
/// not registered for the method, the answer is 405 with an `allow` header listing the methods it is (RFC 9110
/// §15.5.6), even when a less specific pattern takes the method; when none matches, 404. Either is worded by
/// the miss handler of the longest registered prefix (``onMiss(under:_:)``), so each feature words its own
/// refusals.
///
/// Built once before the server listens; read-only afterwards. Handlers run on the service thread.
package struct Router {
    /// A route's handler: answers through the responder, now or later.
    package typealias Handler = (HTTPRequest, HTTPResponder) -> Void
    /// Words a 404 or 405; the router adds the `allow` header to a 405. It may answer otherwise when a check
    /// comes first (401 before saying what does not exist).
    package typealias MissHandler = (HTTPRequest, Miss) -> HTTPResponse

    /// Why no route answers.
    package enum Miss: Equatable, Sendable {
        /// No pattern matches the path (404).
        case notFound
        /// Patterns match the path, but none takes the method; these methods would be (405).
        case methodNotAllowed(allowed: Set<HTTPMethod>)
    }

    /// One segment of a pattern.
    package enum Segment: Equatable, Sendable {
        /// Matches exactly this text.
        case literal(String)
        /// Matches any one non-empty segment and names it.
        case parameter(String)
        /// Matches the rest of the path (last segment only).
        case rest

        /// How specific it is: literal 2, parameter 1, rest 0.
        package var rank: Int {
            switch self {
            case .literal: 2
            case .parameter: 1
            case .rest: 0
            }
        }
    }

    /// A registered route.
    package struct Route {
        /// Methods it answers.
        package var methods: Set<HTTPMethod>
        /// The pattern as registered (`/3/device/{token}`).
        package var pattern: String
        /// Its segments.
        package var segments: [Segment]
        /// What answers.
        package var handler: Handler
    }

    /// What the table decided for one request.
    package enum Resolution {
        /// This route answers, with these path parameters.
        case route(Route, parameters: [String: String])
        /// None does; the miss handler words the answer (nil: none registered for the path).
        case miss(Miss, MissHandler?)
    }

    /// The routes, in the order registered (which decides nothing).
    package private(set) var routes: [Route] = []
    /// Miss handlers by path prefix (segments; empty for `/`).
    private var missHandlers: [(prefix: [String], handler: MissHandler)] = []

    /// An empty table.
    package init() {}

    // MARK: Registration

    /// Adds a route whose handler answers through a responder (possibly later).
    /// - Parameters:
    ///   - methods: the methods it answers (not empty).
    ///   - pattern: the path pattern, starting with `/` and a literal segment (the adapter claims paths by
    ///     their first segment).
    ///   - handler: what answers.
    /// - Precondition: the pattern is well-formed, and no route with the same shape of segments takes any of
    ///   these methods (a programmer's error: which one answers would be ambiguous).
    package mutating func add(_ methods: Set<HTTPMethod>, _ pattern: String, _ handler: @escaping Handler) {
        let segments = Self.parse(pattern)
        precondition(!methods.isEmpty, "route \(pattern) takes no method")
        if case .literal(let first)? = segments.first {
            precondition(!first.isEmpty, "route \(pattern) must start with a literal segment")
        } else {
            preconditionFailure("route \(pattern) must start with a literal segment")
        }
        for route in routes where Self.sameShape(route.segments, segments) {
            precondition(route.methods.isDisjoint(with: methods), "routes \(route.pattern) and \(pattern) overlap")
        }
        routes.append(Route(methods: methods, pattern: pattern, segments: segments, handler: handler))
    }

    /// Adds a route whose handler answers at once.
    package mutating func add(_ methods: Set<HTTPMethod>, _ pattern: String, respond: @escaping (HTTPRequest) -> HTTPResponse) {
        add(methods, pattern) { request, responder in responder.respond(respond(request)) }
    }

    /// Words the 404s and 405s of paths under `prefix` (`/3`, or `/` for every path): the handler of the
    /// longest registered prefix answers.
    /// - Precondition: no handler is registered for that prefix yet.
    package mutating func onMiss(under prefix: String, _ handler: @escaping MissHandler) {
        let segments = prefix == "/" ? [] : Self.segments(of: prefix).map(String.init)
        precondition(!missHandlers.contains { $0.prefix == segments }, "two miss handlers under \(prefix)")
        missHandlers.append((segments, handler))
    }

    // MARK: Dispatch

    /// Decides who answers `method` on `path`. Pure: calls no handler.
    package func resolve(_ method: HTTPMethod, path: String) -> Resolution {
        let pathSegments = Self.segments(of: path)
        var matching: [(route: Route, parameters: [String: String])] = []
        for route in routes {
            if let parameters = Self.match(route.segments, pathSegments) { matching.append((route, parameters)) }
        }
        let miss: Miss
        if let closest = matching.max(by: { Self.lessSpecific($0.route.segments, than: $1.route.segments) }) {
            // The most specific pattern matching the path says what the path is; a less specific one (a
            // catch-all) does not answer for it, whatever the method (GET /api/activities/{id}/shares is a
            // 405 naming POST, not an unknown activity "{id}/shares").
            let deciding = matching.filter { Self.sameShape($0.route.segments, closest.route.segments) }
            if let taking = deciding.first(where: { $0.route.methods.contains(method) || (method == .head && $0.route.methods.contains(.get)) }) {
                return .route(taking.route, parameters: taking.parameters)
            }
            var allowed = deciding.reduce(into: Set<HTTPMethod>()) { $0.formUnion($1.route.methods) }
            if allowed.contains(.get) { allowed.insert(.head) }
            miss = .methodNotAllowed(allowed: allowed)
        } else {
            miss = .notFound
        }
        let handler = missHandlers
            .filter { $0.prefix.count <= pathSegments.count && zip($0.prefix, pathSegments).allSatisfy { $0 == $1 } }
            .max { $0.prefix.count < $1.prefix.count }?.handler
        return .miss(miss, handler)
    }

    /// Answers `request`: the best route's handler, or the miss handler's 404 / 405 (with `allow`).
    /// Service thread only.
    package func dispatch(_ request: HTTPRequest, _ responder: HTTPResponder) {
        switch resolve(request.method, path: request.path) {
        case .route(let route, let parameters):
            var request = request
            request.parameters = parameters
            route.handler(request, responder)
        case .miss(let miss, let handler):
            var response = handler?(request, miss) ?? Self.plainMiss(miss)
            if case .methodNotAllowed(let allowed) = miss, response.status == .methodNotAllowed {
                response.headers.append(("allow", HTTPMethod.list(allowed)))
            }
            responder.respond(response)
        }
    }

    /// The paths the table answers, as lws mount points: `/` and each pattern's (or miss prefix's) first
    /// segment, sorted (`/3`, `/api`, …). Everything else is the static files'.
    package var mountpoints: [String] {
        var firsts = Set<String>()
        for route in routes { if case .literal(let first)? = route.segments.first { firsts.insert(first) } }
        for miss in missHandlers { if let first = miss.prefix.first { firsts.insert(first) } }
        return firsts.sorted().map { "/" + $0 }
    }

    /// Whether `path` is the table's (its first segment is a mount point's) rather than a static file's.
    package func claims(_ path: String) -> Bool {
        guard let first = Self.segments(of: path).first, !first.isEmpty else { return false }
        return routes.contains { $0.segments.first == .literal(String(first)) }
            || missHandlers.contains { $0.prefix.first == String(first) }
    }

    // MARK: Matching

    /// `/a/b/` → `["a", "b", ""]`; `/` and `` → `[""]`.
    package static func segments(of path: String) -> [Substring] {
        let trimmed = path.hasPrefix("/") ? path.dropFirst() : Substring(path)
        return trimmed.split(separator: "/", omittingEmptySubsequences: false)
    }

    /// The segments of a pattern.
    /// - Precondition: it starts with `/`, `**` comes last, braces only wrap a whole segment's name.
    private static func parse(_ pattern: String) -> [Segment] {
        precondition(pattern.hasPrefix("/"), "route \(pattern) must start with /")
        let parts = segments(of: pattern)
        return parts.enumerated().map { index, part in
            if part == "**" {
                precondition(index == parts.count - 1, "** must be the last segment of \(pattern)")
                return .rest
            }
            if part.hasPrefix("{"), part.hasSuffix("}"), part.count > 2 { return .parameter(String(part.dropFirst().dropLast())) }
            precondition(!part.contains("{") && !part.contains("}") && !part.contains("*"), "bad segment \(part) in \(pattern)")
            return .literal(String(part))
        }
    }

    /// The parameters when `pattern` matches `path`, else nil.
    private static func match(_ pattern: [Segment], _ path: [Substring]) -> [String: String]? {
        var parameters: [String: String] = [:]
        for (index, segment) in pattern.enumerated() {
            if case .rest = segment {
                parameters["**"] = path.dropFirst(index).joined(separator: "/")
                return parameters
            }
            guard index < path.count else { return nil }
            switch segment {
            case .literal(let text): guard path[index] == text else { return nil }
            case .parameter(let name):
                guard !path[index].isEmpty else { return nil }
                parameters[name] = String(path[index])
            case .rest: break
            }
        }
        return pattern.count == path.count ? parameters : nil
    }

    /// Whether `a` is less specific than `b`, two patterns matching the same path: at the first segment where
    /// their kinds differ, `a`'s ranks lower. When one is the other plus a last `**` (which then matched no
    /// segment: `/images/**` and `/images` on `/images`), the longer one is the less specific.
    private static func lessSpecific(_ a: [Segment], than b: [Segment]) -> Bool {
        for (x, y) in zip(a, b) where x.rank != y.rank { return x.rank < y.rank }
        return a.count > b.count
    }

    /// Whether two patterns would match the same paths (same literals, parameters and rest in the same places).
    private static func sameShape(_ a: [Segment], _ b: [Segment]) -> Bool {
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { x, y in
            switch (x, y) {
            case (.literal(let p), .literal(let q)): p == q
            case (.parameter, .parameter), (.rest, .rest): true
            default: false
            }
        }
    }

    /// A plain 404 / 405 for paths no miss handler covers.
    private static func plainMiss(_ miss: Miss) -> HTTPResponse {
        let text = miss == .notFound ? "not found\n" : "method not allowed\n"
        return HTTPResponse(status: miss == .notFound ? .notFound : .methodNotAllowed, contentType: "text/plain; charset=utf-8",
                            body: Array(text.utf8))
    }
}
