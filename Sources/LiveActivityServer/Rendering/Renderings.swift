import Foundation
import LiveActivityCore
import LiveActivityRendering

/// Static HTML renderings of activities, for iframes, OBS browser sources, kiosks and e-ink displays; and the
/// share links' live page. Owns the stylesheet and icons, read once when the server starts. Handlers run on
/// the service thread.
///
/// - `GET /activities/{id}/render/{lock-screen|compact|minimal|expanded}`: one self-contained document
///   (inline CSS from Public/css/presentations.css; inline SVG icons; no external requests; correct without
///   JavaScript) showing that presentation at request time. Needs a viewer or controller token when the server
///   has one (`Authorization: Bearer …` or `?token=`, which iframes can use). Unknown ids get a 404 page; ended
///   activities render as ended, dismissed ones (still in the history) as dismissed.
/// - `GET /gallery`: every presentation of synthetic activities (each workout and state). No token needed: it
///   shows no live data.
///
/// Query: `theme=light|dark`, `scale=1|2|3`, `now=ISO-8601` (render that instant; no live script),
/// `at=ISO-8601` (the activity as it was then), `live=0` (no script), and rendering settings `tint`, `action`,
/// `keyline`, `accent` (hex colours: `activityBackgroundTint`, `activitySystemActionForegroundColor`,
/// `keylineTint`, island accent) and `url` (`widgetURL`, http(s) or a path).
///
/// These responses carry their own security headers instead of lws's best-practice set (which forbids inline
/// style and framing): see ``HTTPResponse/document(_:html:scriptNonce:contentSecurityPolicy:)``. The documents
/// hold no controls and no secrets beyond what the URL already carries.
struct Renderings {
    /// What renderings see of the server. Closures are called on the service thread.
    struct Context {
        /// The current time (the server's clock).
        var now: () -> Date
        /// Who may see live activities.
        var access: AccessPolicy
        /// The activity with this id, while it is not dismissed.
        var activity: (String) -> Activity?
        /// Reads the store's latest finished activities (up to 500, newest first; empty when the store fails)
        /// off the service thread and hands them to the continuation, which runs on the service thread.
        var recentHistory: (@escaping ([HistoryEntry]) -> Void) -> Void
        /// Reads the activity as it was at an instant from the event log (`at=`; nil before it started) off
        /// the service thread and hands it to the continuation, which runs on the service thread.
        var activityAsOf: (String, Date, @escaping (Activity?) -> Void) -> Void
        /// A fresh script nonce (random, URL-safe).
        var newNonce: () -> String
    }

    /// The assets read at start.
    let assets: RenderAssets
    /// The current kinds (swapped on reload).
    let kinds: () -> KindRegistry
    /// The current kinds' parsed templates (swapped on reload with the kinds).
    let templates: () -> KindTemplates
    /// A published thumbnail's PNG by file name, from the thumbnail cache.
    let thumbnailPNG: @Sendable (String) -> [UInt8]?

    /// Draws the documents with the assets read at start and the current kinds.
    var renderer: ActivityRenderer {
        ActivityRenderer(assets: assets, kinds: kinds(), thumbnailPNG: thumbnailPNG, templates: templates())
    }

    /// Renderings drawn with `assets`, reading kinds' titles and labels from `kinds` and their layouts from
    /// `templates`.
    init(assets: RenderAssets, kinds: @escaping () -> KindRegistry,
         templates: @escaping () -> KindTemplates = { .none },
         thumbnailPNG: @escaping @Sendable (String) -> [UInt8]? = { _ in nil }) {
        self.assets = assets
        self.kinds = kinds
        self.templates = templates
        self.thumbnailPNG = thumbnailPNG
    }

    /// The stylesheet and icons from the public folder, so that page and renderings share one source; read
    /// once, when the server starts. A missing file gives unstyled renderings rather than an error.
    /// - Parameter publicDirectory: the folder served at `/`.
    static func loadAssets(from publicDirectory: URL) -> RenderAssets {
        let css = ["css/presentations.css", "css/workout.css", "css/emoji.css", "css/default-layout.css", "css/frame.css"].map { file in
            (try? String(contentsOf: publicDirectory.appendingPathComponent(file), encoding: .utf8)) ?? ""
        }.joined(separator: "\n")
        var icons: [String: String] = [:]
        let iconFolder = publicDirectory.appendingPathComponent("icons")
        for file in (try? FileManager.default.contentsOfDirectory(atPath: iconFolder.path)) ?? [] where file.hasSuffix(".svg") {
            icons[String(file.dropLast(4))] = try? String(contentsOf: iconFolder.appendingPathComponent(file), encoding: .utf8)
        }
        return RenderAssets(stylesheet: css, icons: icons)
    }

    /// Registers the gallery, the render route, and the documents' 404 / 405 under `/activities` and `/gallery`.
    func register(on router: inout Router, context: Context) {
        for path in ["/gallery", "/gallery/"] {
            router.add([.get], path) { request in gallery(request, context: context) }
        }
        router.add([.get], "/activities/{id}/render/{presentation}") { request, responder in
            render(request, context: context, responder: responder)
        }
        for prefix in ["/activities", "/gallery"] {
            router.onMiss(under: prefix) { request, miss in self.miss(request, miss, context: context) }
        }
    }

    // MARK: Routes

    /// `GET /gallery`: every presentation of synthetic activities.
    func gallery(_ request: HTTPRequest, context: Context) -> HTTPResponse {
        switch prelude(request, context: context) {
        case .failure(let refusal): return refusal.response
        case .success(let setting):
            return .document(.ok, html: renderer.gallery(options: setting.options, now: setting.now, query: Self.galleryQuery(request)))
        }
    }

    /// `GET /activities/{id}/render/{presentation}`: 200, 400 (bad `now` / `at`), 401, 404 (unknown id or
    /// presentation). A live activity is drawn at once; one of the past (`at=`, or dismissed) once the event
    /// log or the history is read, off the service thread.
    func render(_ request: HTTPRequest, context: Context, responder: HTTPResponder) {
        var setting: Setting
        switch prelude(request, context: context) {
        case .failure(let refusal): return responder.respond(refusal.response)
        case .success(let value): setting = value
        }
        if let refusal = refuseStranger(request, setting, context: context) { return responder.respond(refusal) }
        let activityId = request.parameters["id"] ?? ""
        guard let presentation = request.parameters["presentation"].flatMap(Presentation.init(rawValue:)) else {
            let names = Presentation.allCases.map(\.rawValue).joined(separator: ", ")
            let asked = String((request.parameters["presentation"] ?? "").prefix(40))
            return responder.respond(.document(.notFound, html: renderer.refusalDocument(
                title: "Unknown presentation", message: "There is no presentation \"\(asked)\"; the presentations are \(names).",
                options: setting.options, now: setting.requestTime)))
        }
        var options = setting.options
        let fixedInstant = request.query("now") != nil || setting.at != nil
        options.live = !fixedInstant && request.query("live") != "0"
        let nonce = options.live ? context.newNonce() : nil
        options.nonce = nonce
        let draw = { (found: Activity?) in
            guard let activity = found else {
                return responder.respond(.document(.notFound, html: renderer.notFoundDocument(id: activityId, options: options, now: setting.now),
                                                   scriptNonce: nonce))
            }
            responder.respond(.document(.ok, html: renderer.document(for: activity, presentation: presentation, options: options, now: setting.now),
                                        scriptNonce: nonce))
        }
        if let at = setting.at {
            context.activityAsOf(activityId, at, draw)
        } else if let live = context.activity(activityId) {
            draw(live)
        } else {
            dismissedActivity(activityId, context: context, then: draw)
        }
    }

    /// The documents' 404 and 405: 405 at once; 404 after the same checks as a render (bad `now` / `at`:
    /// 400; no token: 401), naming the id the path gave (`/activities/{id}/…`).
    func miss(_ request: HTTPRequest, _ miss: Router.Miss, context: Context) -> HTTPResponse {
        let options = Self.options(request)
        if case .methodNotAllowed = miss {
            return .document(.methodNotAllowed, html: renderer.refusalDocument(
                title: "Method not allowed", message: "\(request.method.rawValue): a rendering is read with GET", options: options, now: context.now()))
        }
        switch prelude(request, context: context) {
        case .failure(let refusal): return refusal.response
        case .success(let setting):
            if let refusal = refuseStranger(request, setting, context: context) { return refusal }
            let segments = request.segments
            return .document(.notFound, html: renderer.notFoundDocument(id: String(segments.count > 1 ? segments[1] : ""),
                                                                        options: setting.options, now: setting.requestTime))
        }
    }

    /// The share page of a shared activity: `?presentation=lock-screen|compact|minimal|expanded` shows one
    /// presentation on a transparent background (an OBS or iframe source), `?theme=`, `?scale=` as for
    /// renderings; live over `/ws?share=…`.
    /// - Parameters:
    ///   - activity: the shared activity.
    ///   - token: the share's token (for the page's WebSocket).
    ///   - request: the `GET /s/{token}` request, for its query.
    func sharePage(_ activity: Activity, token: String, request: HTTPRequest, context: Context) -> HTTPResponse {
        let presentation = request.query("presentation").flatMap(Presentation.init(rawValue:))
        var options = RenderOptions(theme: request.query("theme").flatMap(RenderTheme.init(rawValue:)),
                                    scale: request.query("scale").flatMap(Int.init) ?? 1, live: true,
                                    nonce: context.newNonce())
        options.socketPath = "/ws?share=" + token
        options.transparent = presentation != nil
        let html = renderer.shareDocument(for: activity, presentation: presentation, options: options, now: context.now())
        return .document(.ok, html: html, scriptNonce: options.nonce)
    }

    // MARK: Shared checks

    /// What every rendering request settles first.
    struct Setting {
        /// Theme, scale and colours from the query.
        var options: RenderOptions
        /// When the request came in.
        var requestTime: Date
        /// The instant to render: `now=`, else `at=`, else the request time.
        var now: Date
        /// `at=`: the instant whose state of the activity to show.
        var at: Date?
    }

    /// A finished answer that ends a request early.
    struct Refusal: Error {
        /// The answer.
        var response: HTTPResponse
    }

    /// Reads the options, `at` and `now`.
    /// - Returns: the setting, or a 400 document for an unreadable `at` or `now`.
    private func prelude(_ request: HTTPRequest, context: Context) -> Result<Setting, Refusal> {
        let requestTime = context.now()
        let options = Self.options(request)
        var now = requestTime
        // `at=ISO-8601`: the activity as it was then (its last logged event at or before it), rendered at that instant.
        let atText = request.query("at")
        let at = atText.flatMap(ISODate.parse)
        if let atText, at == nil {
            return .failure(Refusal(response: .document(.badRequest, html: renderer.refusalDocument(
                title: "Bad request", message: "at: expected an ISO-8601 date such as 2026-11-29T17:00:00Z, got \"\(atText.clipped(to: 40))\"",
                options: options, now: requestTime))))
        }
        if let at { now = at }
        if let text = request.query("now") {
            guard let fixed = ISODate.parse(text) else {
                return .failure(Refusal(response: .document(.badRequest, html: renderer.refusalDocument(
                    title: "Bad request", message: "now: expected an ISO-8601 date such as 2026-11-29T17:00:00Z, got \"\(text.clipped(to: 40))\"",
                    options: options, now: requestTime))))
            }
            now = fixed
        }
        return .success(Setting(options: options, requestTime: requestTime, now: now, at: at))
    }

    /// A 401 document when the request's token grants no viewer role, else nil.
    private func refuseStranger(_ request: HTTPRequest, _ setting: Setting, context: Context) -> HTTPResponse? {
        let role = context.access.role(presenting: request.presentedToken)
        guard role == nil || role == .unauthenticated else { return nil }
        return .document(.unauthorized, html: renderer.refusalDocument(
            title: "Unauthorized", message: "token: a viewer token is needed (add ?token=… or Authorization: Bearer …)",
            options: setting.options, now: setting.requestTime))
    }

    /// Theme, scale and rendering settings from the query.
    private static func options(_ request: HTTPRequest) -> RenderOptions {
        RenderOptions(theme: request.query("theme").flatMap(RenderTheme.init(rawValue:)),
                      scale: request.query("scale").flatMap(Int.init) ?? 1,
                      settings: RenderingSettings(activityBackgroundTint: request.query("tint"),
                                                  activitySystemActionForegroundColor: request.query("action"),
                                                  keylineTint: request.query("keyline"),
                                                  islandAccent: request.query("accent"),
                                                  widgetURL: request.query("url")))
    }

    /// An activity dismissed since it ended, rebuilt from the history (nil when the id is not there either),
    /// handed to `then` once the history is read.
    private func dismissedActivity(_ id: String, context: Context, then: @escaping (Activity?) -> Void) {
        guard !id.isEmpty else { return then(nil) }
        context.recentHistory { history in then(history.first { $0.id == id }.map(rebuilt)) }
    }

    /// The activity a history entry describes, dismissed, with its countdown where its kind keeps one.
    private func rebuilt(_ entry: HistoryEntry) -> Activity {
        let planned = entry.plannedDurationSeconds ?? entry.actualDurationSeconds
        let timer = TimerRange(start: entry.startDate, end: entry.startDate.addingTimeInterval(max(0, planned)))
        // The templates read the countdown from the state, as the protocol sends it.
        var state = JSONValue.null
        if let field = kinds().metadata(named: entry.attributesType)?.countdown {
            state = .object([field: .object(["start": .string(ISODate.format(timer.start)), "end": .string(ISODate.format(timer.end))])])
        }
        return Activity(id: entry.id, attributesType: entry.attributesType, attributes: entry.attributes,
                        content: ActivityContent(state: state, staleDate: nil), timer: timer, activityState: .dismissed,
                        startDate: entry.startDate, endDate: entry.endDate, dismissalDate: entry.endDate,
                        endReason: entry.endReason)
    }

    /// The gallery's query parameters other than `theme`, to keep on its theme links (URL-encoded).
    private static func galleryQuery(_ request: HTTPRequest) -> String {
        ["now", "scale", "tint", "action", "keyline", "accent"].compactMap { name in
            request.query(name).map { value in
                "\(name)=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~:"))) ?? "")
            }
        }.joined(separator: "&")
    }
}
