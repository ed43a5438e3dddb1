import CLibWebSockets
import Foundation
import LiveActivityCore
import LiveActivityRendering

/// Static HTML renderings of activities, for iframes, OBS browser sources, kiosks and e-ink displays.
/// Service thread only.
///
/// - `GET /activities/{id}/render/{lock-screen|compact|minimal|expanded}`: one self-contained document
///   (inline CSS from Public/css/presentations.css, read at request time; inline SVG icons; no external
///   requests; correct without JavaScript) showing that presentation at request time. Needs a viewer or
///   controller token when the server has one (`Authorization: Bearer …` or `?token=`, which iframes can use).
///   Unknown ids get a 404 page; ended activities render as ended, dismissed ones (still in the history) as
///   dismissed.
/// - `GET /gallery`: every presentation of synthetic activities (each workout and state). No token needed: it
///   shows no live data.
///
/// Query: `theme=light|dark`, `scale=1|2|3`, `now=ISO-8601` (render that instant; no live script),
/// `live=0` (no script), and rendering settings `tint`, `action`, `keyline`, `accent` (hex colours:
/// `activityBackgroundTint`, `activitySystemActionForegroundColor`, `keylineTint`, island accent) and `url`
/// (`widgetURL`, http(s) or a path).
///
/// These responses carry their own security headers instead of lws's best-practice set (which forbids inline
/// style and framing): `style-src 'unsafe-inline'`, scripts only with the response's nonce, `connect-src 'self'`
/// for the live script's refresh, `img-src data:`, and no `frame-ancestors` / `X-Frame-Options`, so that any
/// page may embed them. The documents hold no controls and no secrets beyond what the URL already carries.
extension LiveActivityServer {
    /// Paths this file answers: `/activities/…` and `/gallery`.
    static let renderPrefixes = ["/activities", "/gallery"]

    /// Answers a render or gallery request, or returns nil when `path` is not one.
    /// - Returns: nonzero to close the connection, or nil to let the caller route the request.
    func renderRequest(_ wsi: OpaquePointer, id: UInt64, path: String) -> Int32? {
        guard Self.renderPrefixes.contains(where: { path == $0 || path.hasPrefix($0 + "/") }) else { return nil }
        let renderer = ActivityRenderer(assets: renderAssets())
        let requestTime = clock()
        var options = RenderOptions(
            theme: queryArgument(wsi, "theme").flatMap(RenderTheme.init(rawValue:)),
            scale: queryArgument(wsi, "scale").flatMap(Int.init) ?? 1,
            settings: RenderingSettings(activityBackgroundTint: queryArgument(wsi, "tint"),
                                        activitySystemActionForegroundColor: queryArgument(wsi, "action"),
                                        keylineTint: queryArgument(wsi, "keyline"),
                                        islandAccent: queryArgument(wsi, "accent"),
                                        widgetURL: queryArgument(wsi, "url")))
        guard header(wsi, WSI_TOKEN_GET_URI) != nil else {
            return respondHTML(wsi, id: id, status: 405, html: renderer.notFoundDocument(id: "", options: options, now: requestTime))
        }
        var now = requestTime
        // `at=ISO-8601`: the activity as it was then (its last logged event at or before it), rendered at that instant.
        let atText = queryArgument(wsi, "at")
        let at = atText.flatMap(ISODate.parse)
        if let atText, at == nil {
            return respondHTML(wsi, id: id, status: 400, html: renderer.notFoundDocument(
                id: "(at: expected an ISO-8601 date such as 2026-11-29T17:00:00Z, got \(atText.prefix(40)))", options: options, now: requestTime))
        }
        if let at { now = at }
        if let text = queryArgument(wsi, "now") {
            guard let fixed = ISODate.parse(text) else {
                return respondHTML(wsi, id: id, status: 400, html: renderer.notFoundDocument(
                    id: "(now: expected an ISO-8601 date such as 2026-11-29T17:00:00Z)", options: options, now: requestTime))
            }
            now = fixed
        }
        if path == "/gallery" || path == "/gallery/" {
            return respondHTML(wsi, id: id, status: 200, html: renderer.gallery(options: options, now: now,
                                                                                query: galleryQuery(wsi)))
        }
        let role = configuration.access.role(presenting: presentedToken(wsi))
        guard let role, role != .unauthenticated else {
            return respondHTML(wsi, id: id, status: 401, html: renderer.notFoundDocument(
                id: "(a viewer token is needed: add ?token=… or Authorization: Bearer …)", options: options, now: requestTime))
        }
        // /activities/{id}/render/{presentation}
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 5, parts[1] == "activities", parts[3] == "render",
              let presentation = Presentation(rawValue: String(parts[4])) else {
            return respondHTML(wsi, id: id, status: 404, html: renderer.notFoundDocument(
                id: String(parts.count > 2 ? parts[2] : ""), options: options, now: requestTime))
        }
        let activityId = String(parts[2])
        let fixedInstant = queryArgument(wsi, "now") != nil || at != nil
        options.live = !fixedInstant && queryArgument(wsi, "live") != "0"
        let nonce = options.live ? Digest.randomToken(bytes: 18) : nil
        options.nonce = nonce
        guard let activity = at.map({ activity(activityId, asOf: $0) }) ?? center.activities[activityId] ?? dismissedActivity(activityId) else {
            return respondHTML(wsi, id: id, status: 404, html: renderer.notFoundDocument(id: activityId, options: options, now: now),
                               scriptNonce: nonce)
        }
        return respondHTML(wsi, id: id, status: 200,
                           html: renderer.document(for: activity, presentation: presentation, options: options, now: now),
                           scriptNonce: nonce)
    }

    /// The share page of `share`'s activity: `?presentation=lock-screen|compact|minimal|expanded` shows one
    /// presentation on a transparent background (an OBS or iframe source), `?theme=`, `?scale=` as for
    /// renderings; live over `/ws?share=…`.
    func shareDocument(_ wsi: OpaquePointer, id: UInt64, activity: Activity, token: String) -> Int32 {
        let presentation = queryArgument(wsi, "presentation").flatMap(Presentation.init(rawValue:))
        var options = RenderOptions(theme: queryArgument(wsi, "theme").flatMap(RenderTheme.init(rawValue:)),
                                    scale: queryArgument(wsi, "scale").flatMap(Int.init) ?? 1, live: true,
                                    nonce: Digest.randomToken(bytes: 18))
        options.socketPath = "/ws?share=" + token
        options.transparent = presentation != nil
        let html = ActivityRenderer(assets: renderAssets()).shareDocument(for: activity, presentation: presentation, options: options, now: clock())
        return respondHTML(wsi, id: id, status: 200, html: html, scriptNonce: options.nonce)
    }

    /// The stylesheet and icons, read from the public folder at request time (so page and renderings share one
    /// source). A missing file gives an unstyled rendering rather than an error.
    private func renderAssets() -> RenderAssets {
        let root = configuration.publicDirectory
        let css = (try? String(contentsOf: root.appendingPathComponent("css/presentations.css"), encoding: .utf8)) ?? ""
        var icons: [String: String] = [:]
        for name in ["jogging", "aerobics", "yoga", "workout", "timer"] {
            icons[name] = try? String(contentsOf: root.appendingPathComponent("icons/\(name).svg"), encoding: .utf8)
        }
        return RenderAssets(stylesheet: css, icons: icons)
    }

    /// An activity dismissed since it ended, rebuilt from the history (nil when the id is not there either).
    private func dismissedActivity(_ id: String) -> Activity? {
        guard !id.isEmpty, let entry = (try? store.history(limit: 500, before: nil))?.first(where: { $0.id == id }) else { return nil }
        let planned = entry.plannedDurationSeconds ?? entry.actualDurationSeconds
        let timer = TimerRange(start: entry.startDate, end: entry.startDate.addingTimeInterval(max(0, planned)))
        return Activity(id: entry.id, attributesType: entry.attributesType, attributes: entry.attributes,
                        content: ActivityContent(state: .null, staleDate: nil), timer: timer, activityState: .dismissed,
                        startDate: entry.startDate, endDate: entry.endDate, dismissalDate: entry.endDate,
                        endReason: entry.endReason)
    }

    /// The gallery's query parameters other than `theme`, to keep on its theme links (URL-encoded).
    private func galleryQuery(_ wsi: OpaquePointer) -> String {
        ["now", "scale", "tint", "action", "keyline", "accent"].compactMap { name in
            queryArgument(wsi, name).map { value in
                "\(name)=" + (value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(.init(charactersIn: "-._~:"))) ?? "")
            }
        }.joined(separator: "&")
    }

    /// Writes an HTML response with this route's own headers (bypassing lws's best-practice security headers,
    /// which `lws_add_http_header_status` adds and which forbid inline styles and framing), and queues the body.
    /// - Parameter scriptNonce: the nonce the document's one inline script carries, or nil for no script.
    /// - Returns: nonzero to close the connection.
    /// - Parameter contentSecurityPolicy: another policy than the renderings' (the inspector page's).
    func respondHTML(_ wsi: OpaquePointer, id: UInt64, status: UInt32, html: String, scriptNonce: String? = nil,
                     contentSecurityPolicy: String? = nil) -> Int32 {
        let body = Array(html.utf8)
        let script = scriptNonce.map { "'nonce-\($0)'" } ?? "'none'"
        let headers: [(String, String)] = [
            ("content-security-policy", contentSecurityPolicy ?? ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                + "script-src \(script); connect-src 'self' ws: wss:; base-uri 'none'; form-action 'none'")),
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "no-referrer"),
        ]
        return respond(wsi, id: id, status: status, body: body, contentType: "text/html; charset=utf-8",
                       headers: headers, ownStatusLine: true)
    }
}
