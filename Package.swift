// swift-tools-version:6.0
// LiveActivityServer: Apple's Live Activities (ActivityKit), served to browsers over WebSocket.
import PackageDescription

/// Settings shared by every Swift target.
/// - ExistentialAny (SE-0335): `any Protocol` must be spelled out.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "LiveActivityServer",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "liveactivity", targets: ["liveactivity"]),
        .executable(name: "liveactivity-bench", targets: ["liveactivity-bench"]),
    ],
    targets: [
        // C: libwebsockets 4.1 from Debian (libwebsockets-dev), reached through a module map.
        .systemLibrary(
            name: "CLibWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // C: libev 4 from Debian (libev-dev), the epoll loop the server runs libwebsockets on through lws's
        // libev event-library plugin (libwebsockets-evlib-ev, loaded by lws at run time; BENCHMARKS.md, issue 30).
        .systemLibrary(
            name: "CLibEv",
            providers: [.apt(["libev-dev", "libwebsockets-evlib-ev"])]
        ),
        // C: liburing 2 from Debian (liburing-dev): io_uring, through which a broadcast pass hands its sends to
        // the kernel in one system call (Sources/LiveActivityLWS/LWS/SendQueue.swift; BENCHMARKS.md, issue 30).
        // Linked here; called through CSendRing, a C target of our own that includes liburing.h (its macros
        // would change the system headers' types under Swift's other C modules).
        .systemLibrary(
            name: "CLibURing",
            pkgConfig: "liburing",
            providers: [.apt(["liburing-dev"])]
        ),
        .target(name: "CSendRing", dependencies: ["CLibURing"]),
        // C: SQLite 3 from Debian (libsqlite3-dev), the embedded store.
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // C: OpenSSL from Debian (libssl-dev): SHA-256, secure random bytes, ES256 checks of APNs provider
        // tokens (libcrypto) and TLS for the APNs listener (libssl).
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // C: libnghttp2 from Debian (libnghttp2-dev): HTTP/2 for the APNs listener (`serve --apns-port`).
        .systemLibrary(
            name: "CNghttp2",
            pkgConfig: "libnghttp2",
            providers: [.apt(["libnghttp2-dev"])]
        ),
        // C: libcurl (libcurl.so.4, Debian libcurl4): fetching remote images. Not linked: opened with dlopen
        // when thumbnails are turned on, so servers without them don't map libcurl and its dependencies
        // (Sources/CCurl/shim.h). No pkgConfig, which would add -lcurl; the headers (types and constants)
        // come from libcurl4-openssl-dev, which the provider hint installs (Deploy/setup-debian.sh, Containerfile).
        .systemLibrary(
            name: "CCurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // C: libvips (libvips.so.42, Debian libvips42): decoding, fitting and encoding thumbnails. Not linked:
        // opened with dlopen when thumbnails are turned on (Sources/CVips/shim.h declares what it calls, so no
        // headers are compiled). No pkgConfig, which would add -lvips; the provider hint keeps libvips-dev
        // (the reference headers, and libvips42 in the build stage for Deploy/runtime-packages.sh).
        .systemLibrary(
            name: "CVips",
            providers: [.apt(["libvips-dev"])]
        ),
        // C: hiredis from Debian (libhiredis-dev): the Redis client for clustering.
        .systemLibrary(
            name: "CHiredis",
            pkgConfig: "hiredis",
            providers: [.apt(["libhiredis-dev"])]
        ),
        // C: zlib from Debian (zlib1g-dev): raw deflate for permessage-deflate, each message compressed once.
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Pure domain: activities, lifecycle, JSON messages, the hub and the timing, the HTTP values (request,
        // response, status, router) and the server's counters. No I/O, no C.
        // Release builds skip the run-time exclusivity checks (SE-0176) here as in LiveActivityServer: the hub
        // (Hub/) lives on the service thread, and the checks cost a call per class-property access on the
        // write path (`Hub.nextWrite(for:)` had 19 `swift_beginAccess` calls once moved here): with the checks on a delivery
        // costs 3,025 instructions instead of 2,016 (BENCHMARKS.md, issue 28). Debug builds keep them.
        .target(name: "LiveActivityCore",
                swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]),
        // Storage: activities and the event log in SQLite, behind LiveActivityCore's ActivityStore.
        .target(
            name: "LiveActivityStore",
            dependencies: ["LiveActivityCore", "CSQLite"],
            swiftSettings: swiftSettings
        ),
        // Presentations as self-contained HTML (Lock Screen, Dynamic Island, gallery). Pure: no I/O.
        .target(
            name: "LiveActivityRendering",
            dependencies: ["LiveActivityCore"],
            swiftSettings: swiftSettings
        ),
        // Remote images: safe fetching (libcurl), 48-point thumbnails (libvips), a size-bounded cache.
        .target(
            name: "LiveActivityImages",
            dependencies: ["LiveActivityCore", "CCurl", "CVips"],
            swiftSettings: swiftSettings
        ),
        // Cluster: activities and the event log in Redis, shared by several instances.
        .target(
            name: "LiveActivityCluster",
            dependencies: ["LiveActivityCore", "CHiredis"],
            swiftSettings: swiftSettings
        ),
        // The C memory a libwebsockets context keeps pointers into (kept strings, the protocols and
        // permessage-deflate tables), freed after the context: shared by the server's and the client's lws
        // targets and the bench.
        .target(
            name: "LWSSupport",
            dependencies: ["CLibWebSockets"],
            swiftSettings: swiftSettings
        ),
        // The edge to libwebsockets, for the server: with LWSSupport, the client's LiveActivityClientLWS and the
        // bench, the only targets that depend on CLibWebSockets, so no other target sees a `wsi` or calls `lws_`
        // (SwiftPM would still let a dependent import a dependency's C module: LWSEdgeTests refuses that). LWSServerAdapter owns the lws context, its timer, the per-session pointers, the write
        // batch, the HTTP adapter and the permessage-deflate compressor (zlib: the write path), runs the service
        // loop, and talks to the server through the LWSApplication protocol (a call per session event, none
        // per frame). Release builds skip the run-time exclusivity checks (SE-0176) here as in LiveActivityCore
        // and LiveActivityServer: the adapter lives on the service thread, and the checks cost a call per
        // class-property access on the write path (BENCHMARKS.md, profile). Debug builds keep them.
        .target(
            name: "LiveActivityLWS",
            dependencies: ["LiveActivityCore", "CLibWebSockets", "CLibEv", "CSendRing", "CZlib", "LWSSupport"],
            swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // Transport: the server's features, the hub, the store's side, the APNs listener (OpenSSL, libnghttp2);
        // HTTP and WebSocket through LiveActivityLWS, one service thread. No libwebsockets and no zlib here.
        .target(
            name: "LiveActivityServer",
            dependencies: ["LiveActivityCore", "LiveActivityImages", "LiveActivityRendering", "LiveActivityLWS", "CCrypto",
                           "CNghttp2"],
            // Release builds skip the run-time exclusivity checks (SE-0176) here, as in LiveActivityCore and
            // LiveActivityLWS (and nowhere else): its state lives on
            // the one service thread (checked by ServiceBound in debug builds, which keep the checks), and the
            // checks cost a call per class-property access on the write path (BENCHMARKS.md, profile).
            swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // The edge to libwebsockets, for the script client: its lws context, connection and callback
        // (LWSClientTransport), driven by LiveActivityClient through LWSClientDelegate. A target of its own
        // rather than part of LiveActivityLWS, so that the client links neither the server's adapter nor zlib,
        // and the server's adapter nothing of the client's.
        .target(
            name: "LiveActivityClientLWS",
            dependencies: ["LiveActivityCore", "CLibWebSockets", "LWSSupport"],
            swiftSettings: swiftSettings
        ),
        // Script client: the protocol over a WebSocket connection (LiveActivityClientLWS). No libwebsockets here.
        .target(
            name: "LiveActivityClient",
            dependencies: ["LiveActivityCore", "LiveActivityClientLWS"],
            swiftSettings: swiftSettings
        ),
        // Command-line arguments (`--name value`, `--name=value`, numbers, on/off) for both executables.
        .target(
            name: "LiveActivityCommandLine",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveactivity",
            dependencies: ["LiveActivityServer", "LiveActivityStore", "LiveActivityCluster", "LiveActivityClient", "LiveActivityCore",
                           "LiveActivityCommandLine"],
            swiftSettings: swiftSettings
        ),
        // Fan-out benchmark: thousands of lws client connections in one service thread (BENCHMARKS.md). A load
        // generator that is libwebsockets through and through: it counts as an lws target (LWSEdgeTests).
        .executableTarget(
            name: "liveactivity-bench",
            dependencies: ["CLibWebSockets", "LiveActivityCore", "LiveActivityCommandLine", "LWSSupport"],
            swiftSettings: swiftSettings
        ),
        // The built-in kinds read from this checkout's Kinds/ folder, for unit tests (KindRegistry.builtIn).
        .target(name: "KindFixtures", dependencies: ["LiveActivityCore"], path: "Tests/KindFixtures", swiftSettings: swiftSettings),
        .testTarget(
            name: "LiveActivityCoreTests",
            dependencies: ["LiveActivityCore", "KindFixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityRenderingTests",
            dependencies: ["LiveActivityRendering", "LiveActivityCore", "KindFixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityStoreTests",
            dependencies: ["LiveActivityStore", "LiveActivityCore", "KindFixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityClientTests",
            dependencies: ["LiveActivityClient"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityServerTests",
            dependencies: ["LiveActivityServer", "LiveActivityCore", "KindFixtures"],
            swiftSettings: swiftSettings
        ),
        // The lws adapter's pure parts: permessage-deflate (zlib), whole frames, lws's log lines. No sockets.
        .testTarget(
            name: "LiveActivityLWSTests",
            dependencies: ["LiveActivityLWS", "LiveActivityCore", "CZlib"],
            swiftSettings: swiftSettings
        ),
    ]
)
