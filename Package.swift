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
        // C: OpenSSL libcrypto from Debian (libssl-dev): SHA-256 and secure random bytes.
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // Pure domain: activities, lifecycle, JSON messages. No I/O, no C.
        .target(name: "LiveActivityCore", swiftSettings: swiftSettings),
        // Storage: activities and the event log in SQLite, behind LiveActivityCore's ActivityStore.
        .target(
            name: "LiveActivityStore",
            dependencies: ["LiveActivityCore", "CSQLite"],
            swiftSettings: swiftSettings
        ),
        // Transport: HTTP + WebSocket through libwebsockets, one service thread.
        .target(
            name: "LiveActivityServer",
            dependencies: ["LiveActivityCore", "CLibWebSockets", "CCrypto"],
            swiftSettings: swiftSettings
        ),
        // Script client: the protocol over a libwebsockets client connection.
        .target(
            name: "LiveActivityClient",
            dependencies: ["LiveActivityCore", "CLibWebSockets"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "liveactivity",
            dependencies: ["LiveActivityServer", "LiveActivityStore", "LiveActivityClient", "LiveActivityCore"],
            swiftSettings: swiftSettings
        ),
        // Fan-out benchmark: thousands of lws client connections in one service thread (BENCHMARKS.md).
        .executableTarget(
            name: "liveactivity-bench",
            dependencies: ["CLibWebSockets", "LiveActivityCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityCoreTests",
            dependencies: ["LiveActivityCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityStoreTests",
            dependencies: ["LiveActivityStore", "LiveActivityCore"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityClientTests",
            dependencies: ["LiveActivityClient"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LiveActivityServerTests",
            dependencies: ["LiveActivityServer", "LiveActivityCore"],
            swiftSettings: swiftSettings
        ),
    ]
)
