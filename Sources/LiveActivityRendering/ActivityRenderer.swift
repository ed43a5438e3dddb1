import Foundation
import LiveActivityCore

/// Turns activities into self-contained HTML: the Lock Screen view and the Dynamic Island presentations,
/// one per document (`GET /activities/{id}/render/{presentation}`), or all of them (`GET /gallery`).
///
/// Pure: no I/O and no clock; the caller passes the stylesheet and icons (``RenderAssets``) and the instant.
/// The markup uses the dashboard's class names, so Public/css/presentations.css styles both. Every string that
/// comes from an activity is HTML-escaped. Documents make no external requests: CSS and SVG are inline.
public struct ActivityRenderer: Sendable {
    /// The stylesheet and icons inlined into every document.
    public var assets: RenderAssets
    /// The kinds whose metadata (title, labels, icons, image field) the renderings read.
    public var kinds: KindRegistry
    /// A published thumbnail's PNG by file name (`{key}@2x.png`), inlined as a `data:` URL so the documents
    /// still make no requests; `nil` (or a missing file) shows the kind's fallback icon. Called on the caller's thread.
    public var thumbnailPNG: @Sendable (String) -> [UInt8]?
    /// The kinds' parsed templates; a kind without one for a presentation gets the generated default layout.
    public var templates: KindTemplates

    /// Creates a renderer.
    /// - Parameters:
    ///   - assets: the stylesheet and icons.
    ///   - kinds: the kinds to read titles and labels from.
    ///   - thumbnailPNG: reads a thumbnail's PNG by file name; the default reads none.
    ///   - templates: the kinds' parsed templates; the default has none (every kind gets the default layout).
    public init(assets: RenderAssets, kinds: KindRegistry, thumbnailPNG: @escaping @Sendable (String) -> [UInt8]? = { _ in nil },
                templates: KindTemplates = .none) {
        self.assets = assets
        self.templates = templates
        self.kinds = kinds
        self.thumbnailPNG = thumbnailPNG
    }

    /// What `activity` shows at `now`, read with its kind's metadata.
    func facts(_ activity: Activity, now: Date) -> ActivityFacts {
        ActivityFacts(activity, now: now, kind: kinds.metadata(named: activity.attributesType))
    }

    // MARK: Documents

    /// One presentation of one activity as a complete HTML document.
    /// - Parameters:
    ///   - activity: the activity as stored (an ended or dismissed one renders as such).
    ///   - presentation: which view to draw.
    ///   - options: theme, scale, live script, rendering settings.
    ///   - now: the instant to show (the request time, or the `?now=` parameter).
    /// - Returns: UTF-8 HTML text.
    public func document(for activity: Activity, presentation: Presentation, options: RenderOptions, now: Date) -> String {
        let facts = self.facts(activity, now: now)
        let markup = fragment(facts, presentation, headingTag: "h1")
        let body = """
        <main class="render-stage render-\(presentation.rawValue)" data-signature="\(HTML.escape(facts.signature))" \
        data-activity-state="\(facts.state.rawValue)">
        \(headingIfMissing(facts, markup))\(link(options.settings.widgetURL, label: facts.summary, markup))
        </main>
        <p id="announcer" class="visually-hidden" role="status" aria-live="polite"></p>
        """
        return page(title: "\(facts.heading) · \(presentation.title)", bodyClass: "render", body: body,
                    options: options, now: now)
    }

    /// A shared activity's page (`/s/{token}`): one presentation, or, when `presentation` is nil, the Lock
    /// Screen with the Dynamic Island's compact and expanded presentations.
    public func shareDocument(for activity: Activity, presentation: Presentation?, options: RenderOptions, now: Date) -> String {
        let facts = self.facts(activity, now: now)
        let shown = presentation.map { [$0] } ?? [.lockScreen, .compact, .expanded]
        let parts = shown.map { fragment(facts, $0, headingTag: $0 == .lockScreen ? "h1" : "p") }.joined(separator: "\n")
        let body = """
        <main class="render-stage render-share\(presentation.map { " render-\($0.rawValue)" } ?? "")" \
        data-signature="\(HTML.escape(facts.signature))" data-activity-state="\(facts.state.rawValue)">
        \(headingIfMissing(facts, parts))\(parts)
        </main>
        <p id="announcer" class="visually-hidden" role="status" aria-live="polite"></p>
        """
        return page(title: "\(facts.heading), shared", bodyClass: "render share", body: body, options: options, now: now)
    }

    /// The document for an id that matches no activity (send it with status 404).
    public func notFoundDocument(id: String, options: RenderOptions, now: Date) -> String {
        let body = """
        <main class="render-stage render-missing" data-signature="missing" data-activity-state="missing">
        <h1 class="missing-title">No Live Activity</h1>
        <p class="missing-text">There is no activity with id <code>\(HTML.escape(id.clipped(to: 200)))</code>: \
        it was never started, or it was dismissed long ago.</p>
        </main>
        <p id="announcer" class="visually-hidden" role="status" aria-live="polite"></p>
        """
        return page(title: "No Live Activity", bodyClass: "render", body: body, options: options, now: now)
    }

    /// The document for a render request refused before any activity is looked up (send it with its
    /// status: 400 for a bad query parameter, 401 without a viewer token, 405 for a method other than GET):
    /// a heading and one sentence naming the field and what it expected.
    /// - Parameters:
    ///   - title: the heading, e.g. `Bad request`.
    ///   - message: the reason, e.g. `now: expected an ISO-8601 date such as 2026-11-29T17:00:00Z`.
    public func refusalDocument(title: String, message: String, options: RenderOptions, now: Date) -> String {
        let body = """
        <main class="render-stage render-missing" data-signature="refused" data-activity-state="missing">
        <h1 class="missing-title">\(HTML.escape(title))</h1>
        <p class="missing-text">\(HTML.escape(message.clipped(to: 300)))</p>
        </main>
        <p id="announcer" class="visually-hidden" role="status" aria-live="polite"></p>
        """
        return page(title: title, bodyClass: "render", body: body, options: options, now: now)
    }

    // MARK: Fragments

    /// The markup of one presentation (no document around it).
    /// - Parameter headingTag: the element holding the workout name on the Lock Screen (`h1`, `h3`, `p`…).
    public func fragment(for activity: Activity, presentation: Presentation, now: Date, headingTag: String = "p") -> String {
        fragment(facts(activity, now: now), presentation, headingTag: headingTag)
    }

    /// The kind's template for `presentation` drawn over `facts` (``templateFragment(_:_:)``) in the renderer's
    /// frame; a declared kind without a usable template gets its generated layout (``GeneratedLayout``), and a
    /// kind the server does not know the plain default list.
    func fragment(_ facts: ActivityFacts, _ presentation: Presentation, headingTag: String) -> String {
        if let template = templates.template(kind: facts.kind.name, presentation: presentation)
            ?? KindTemplates.generated(kind: facts.kind.name, presentation: presentation, in: kinds) {
            return Self.framed(templateFragment(template, facts), presentation: presentation, context: facts.context, kind: facts.kind.name)
        }
        let tag = ["h1", "h2", "h3", "h4", "p"].contains(headingTag) ? headingTag : "p"
        return defaultFragment(facts, presentation, headingTag: tag)
    }

    /// A visually hidden `<h1>` naming the activity, for a document whose markup (a kind's template) has none.
    private func headingIfMissing(_ facts: ActivityFacts, _ markup: String) -> String {
        markup.contains("<h1") ? "" : "<h1 class=\"visually-hidden\">\(HTML.escape(facts.heading))</h1>"
    }

    /// Wraps markup in the widget URL's link, when there is one.
    private func link(_ url: String?, label: String, _ markup: String) -> String {
        guard let url else { return markup }
        return "<a class=\"widget-link\" href=\"\(HTML.escape(url))\" aria-label=\"\(HTML.escape(label))\">\(markup)</a>"
    }

    // MARK: Page

    /// A whole document: inline presentations.css, the page chrome, the settings, and (when live) the script.
    /// Its icon is an empty `data:` URL, so that no browser asks for `/favicon.ico` (which the renderings' `img-src data:` policy would refuse, and Firefox reports).
    func page(title: String, bodyClass: String, body: String, options: RenderOptions, now: Date) -> String {
        let theme = options.theme.map { " data-theme=\"\($0.rawValue)\"" } ?? ""
        let scheme = options.theme?.rawValue ?? "light dark"
        let settings = options.settings.customProperties
        let overrides = settings.isEmpty ? "" : "\n:root { \(settings) }"
        let colours = Self.kindColourRules(kinds)
        let kindRules = colours.isEmpty ? "" : "\n" + HTML.styleSafe(colours)
        var script = ""
        if options.live, let nonce = options.nonce, nonce.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+/=-_".contains($0)) }) {
            script = "\n<script nonce=\"\(nonce)\">\(Self.liveScript)</script>"
        }
        let nowMs = Int64((now.timeIntervalSince1970 * 1000).rounded())
        let socket = options.socketPath.map { " data-socket=\"\(HTML.escape($0))\"" } ?? ""
        let transparent = options.transparent ? "\nhtml, body { background: transparent !important; }" : ""
        return """
        <!doctype html>
        <html lang="en"\(theme)\(socket) data-server-now="\(nowMs)" data-live="\(options.live ? "true" : "false")">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="\(scheme)">
        <meta name="referrer" content="no-referrer">
        <link rel="icon" href="data:,">
        <title>\(HTML.escape(title))</title>
        <style>
        \(HTML.styleSafe(assets.stylesheet))
        \(Self.documentStyle)\(kindRules)\(HTML.styleSafe(overrides))\(transparent)
        </style>
        </head>
        <body class="\(bodyClass) scale-\(options.scale)">
        \(body)\(script)
        </body>
        </html>

        """
    }

    /// Styles for the page around the presentations (not the presentations themselves).
    static let documentStyle = """
    /* ---- Rendering document (ActivityRenderer) ---- */
    :root { --render-bg: #f2f2f7; --render-fg: #1c1c1e; --render-muted: #5b5b63; }
    @media (prefers-color-scheme: dark) { :root:not([data-theme="light"]) { --render-bg: #1c1c1e; --render-fg: #f2f2f7; --render-muted: #aeaeb5; } }
    :root[data-theme="dark"] { --render-bg: #1c1c1e; --render-fg: #f2f2f7; --render-muted: #aeaeb5; }
    *, *::before, *::after { box-sizing: border-box; }
    html { background: var(--render-bg); color: var(--render-fg); }
    body { margin: 0; font: 16px/1.4 var(--sans); }
    .render-stage { display: inline-flex; flex-direction: column; align-items: center; padding: 14px; }
    .render-lock-screen, .render-missing { width: var(--phone-width); padding: var(--lock-margin); }
    .render-missing { align-items: flex-start; }
    .missing-title { margin: 0 0 8px; font-size: 20px; }
    .missing-text { margin: 0; color: var(--render-muted); overflow-wrap: anywhere; }
    .scale-2 .render-stage, .scale-2 .gallery { zoom: 2; }
    .scale-3 .render-stage, .scale-3 .gallery { zoom: 3; }
    .widget-link { display: block; color: inherit; text-decoration: none; border-radius: var(--lock-radius); }
    .widget-link:focus-visible { outline: 3px solid var(--island-accent-strong); outline-offset: 3px; }
    .visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
      clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
    .gallery { padding: 16px; max-width: 1400px; }
    .gallery h1 { margin: 0 0 4px; font-size: 24px; }
    .gallery-intro { margin: 0 0 16px; color: var(--render-muted); }
    .gallery-intro a { color: inherit; }
    .gallery-intro a:focus-visible { outline: 3px solid var(--island-accent-strong); outline-offset: 2px; }
    .gallery h2 { margin: 24px 0 8px; font-size: 20px; }
    .gallery-case { margin: 0 0 16px; padding: 12px 0 0; border-top: 1px solid color-mix(in srgb, var(--render-fg) 15%, transparent); }
    .gallery-case h3 { margin: 0 0 8px; font-size: 15px; color: var(--render-muted); font-weight: 600; }
    .gallery-row { display: flex; flex-wrap: wrap; align-items: flex-start; gap: 16px 24px; }
    .gallery-row figure { margin: 0; display: flex; flex-direction: column; align-items: center; gap: 6px; padding: 4px; }
    .gallery-row figure.lock { width: var(--lock-width); max-width: 100%; }
    .gallery-row figcaption { font-size: 12px; color: var(--render-muted); }
    @media (max-width: 420px) { .gallery { padding: 8px; } .gallery-row figure.lock { width: 100%; } }
    """

    /// Keeps a rendering live when scripts run: ticks every `[data-countdown]` (and `[data-progress]` bar) from its
    /// data attributes every 250 ms,
    /// and re-fetches the document every 5 s to pick up state changes, announcing those (not the ticks); with
    /// a `data-socket` path it also re-fetches at once on every `activity` event from that WebSocket, and drops
    /// and reopens a socket silent for 2.5 heartbeat intervals (the interval from its first message's
    /// `heartbeatSeconds`, or a `heartbeat`); `html[data-socket-state]` says `open` or `closed`.
    static let liveScript = """
    (() => {
      const root = document.documentElement;
      let offset = Number(root.dataset.serverNow) - Date.now();
      const pad = (n) => String(n).padStart(2, "0");
      const fmt = (s) => { const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
        return h > 0 ? `${h}:${pad(m)}:${pad(s % 60)}` : `${m}:${pad(s % 60)}`; };
      function tick() {
        const now = Date.now() + offset;
        for (const el of document.querySelectorAll("[data-countdown][data-end], [data-progress][data-end]")) {
          let ref = now;
          if (el.dataset.freeze) ref = Math.min(ref, Number(el.dataset.freeze));
          const start = Number(el.dataset.start), end = Number(el.dataset.end);
          ref = Math.max(ref, start);
          if (el.dataset.progress !== undefined) {
            const done = end <= start ? 1000 : Math.min(1000, Math.max(0, Math.trunc((ref - start) * 1000 / (end - start))));
            if (Number(el.getAttribute("value")) !== done) el.setAttribute("value", String(done));
            continue;
          }
          const text = fmt(Math.max(0, Math.ceil((end - ref) / 1000)));
          if (el.textContent !== text) el.textContent = text;
        }
      }
      async function refresh() {
        try {
          const response = await fetch(location.href, { cache: "no-store", credentials: "same-origin" });
          const doc = new DOMParser().parseFromString(await response.text(), "text/html");
          const next = doc.querySelector("main"), current = document.querySelector("main");
          const serverNow = Number(doc.documentElement.dataset.serverNow);
          if (Number.isFinite(serverNow)) offset = serverNow - Date.now();
          if (!next || !current || next.dataset.signature === current.dataset.signature) return;
          const changed = next.dataset.activityState !== current.dataset.activityState;
          current.replaceWith(document.adoptNode(next));
          const label = next.querySelector("[aria-label]");
          const announcer = document.getElementById("announcer");
          if (changed && announcer) announcer.textContent = label ? label.getAttribute("aria-label") : document.title;
          tick();
        } catch (_) { /* offline: keep ticking */ }
      }
      const socketPath = root.dataset.socket;
      if (socketPath) {
        let delay = 500, deadAfterMs = 0;
        const open = () => {
          const ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + socketPath);
          let heardAt = Date.now();
          const closed = (code) => {
            clearInterval(watch);
            root.dataset.socketState = "closed";
            if (code === 1008) { location.reload(); return; }
            setTimeout(open, delay);
            delay = Math.min(delay * 2, 5000);
          };
          const watch = setInterval(() => {
            if (!deadAfterMs || Date.now() - heardAt <= deadAfterMs) return;
            ws.onopen = ws.onmessage = ws.onclose = null;
            ws.close();
            closed(0);
          }, 250);
          ws.onopen = () => { delay = 500; heardAt = Date.now(); root.dataset.socketState = "open"; };
          ws.onmessage = (event) => {
            heardAt = Date.now();
            try {
              const message = JSON.parse(event.data);
              const seconds = Number(message.type === "heartbeat" ? message.intervalSeconds : message.heartbeatSeconds);
              if (seconds > 0) deadAfterMs = seconds * 2500;
              if (message.type === "activity") refresh();
            } catch (_) { /* not JSON */ }
          };
          ws.onclose = (event) => closed(event.code);
        };
        open();
      }
      setInterval(tick, 250);
      setInterval(refresh, 5000);
      tick();
    })();
    """
}
