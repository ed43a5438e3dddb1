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
        // Pure domain: activities, lifecycle, JSON messages, the hub and the timing. No I/O, no C.
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
        // permessage-deflate tables), freed after the context: shared by the server, the client and the bench.
        .target(
            name: "LWSSupport",
            dependencies: ["CLibWebSockets"],
            swiftSettings: swiftSettings
        ),
        // Transport: HTTP + WebSocket through libwebsockets, one service thread.
        .target(
            name: "LiveActivityServer",
            dependencies: ["LiveActivityCore", "LiveActivityImages", "LiveActivityRendering", "CLibWebSockets", "CCrypto",
                           "CNghttp2", "LWSSupport", "CZlib"],
            // Release builds skip the run-time exclusivity checks (SE-0176) in this target only: its state lives on
            // the one service thread (checked by ServiceBound in debug builds, which keep the checks), and the
            // checks cost a call per class-property access on the write path (BENCHMARKS.md, profile).
            swiftSettings: swiftSettings + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // Script client: the protocol over a libwebsockets client connection.
        .target(
            name: "LiveActivityClient",
            dependencies: ["LiveActivityCore", "CLibWebSockets", "LWSSupport"],
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
        // Fan-out benchmark: thousands of lws client connections in one service thread (BENCHMARKS.md).
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
            dependencies: ["LiveActivityServer", "LiveActivityCore", "CZlib", "KindFixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
