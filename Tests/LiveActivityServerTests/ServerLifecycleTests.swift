import Foundation
import Testing
@testable import LiveActivityServer
import KindFixtures

/// Starting and stopping the real server on a loopback port.
struct ServerLifecycleTests {
    /// A throw-away public folder holding one `index.html`.
    private let publicDirectory: URL = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("liveactivity-public-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try? Data("<!doctype html><title>test</title>".utf8).write(to: folder.appendingPathComponent("index.html"))
        return folder
    }()

    @Test func startsOnAFreePortServesTheDashboardAndStops() throws {
        var configuration = ServerConfiguration(publicDirectory: publicDirectory)
        configuration.kindsDirectory = repositoryKindsDirectory
        configuration.port = 0
        let server = try LiveActivityServer(configuration: configuration)
        let port = try server.start()
        #expect(port > 0)
        let response = try httpGet(port: port, path: "/")
        #expect(response.hasPrefix("HTTP/1.1 200"))
        #expect(response.lowercased().contains("content-type: text/html"))
        server.stop()
        server.waitUntilStopped()
    }

    @Test func aTakenPortIsAClearError() throws {
        var configuration = ServerConfiguration(publicDirectory: publicDirectory)
        configuration.kindsDirectory = repositoryKindsDirectory
        configuration.port = 0
        let first = try LiveActivityServer(configuration: configuration)
        configuration.port = try first.start()
        defer { first.stop(); first.waitUntilStopped() }
        let second = try LiveActivityServer(configuration: configuration)
        #expect(throws: ServerError.self) { _ = try second.start() }
    }

    @Test func jobsFromOtherThreadsRunOnTheServiceThread() throws {
        var configuration = ServerConfiguration(publicDirectory: publicDirectory)
        configuration.kindsDirectory = repositoryKindsDirectory
        configuration.port = 0
        let server = try LiveActivityServer(configuration: configuration)
        _ = try server.start()
        defer { server.stop(); server.waitUntilStopped() }
        let done = DispatchSemaphore(value: 0)
        let threads = 4, jobsPerThread = 50
        for _ in 0..<threads {
            Thread.detachNewThread {
                for _ in 0..<jobsPerThread {
                    server.perform { server in
                        precondition(server.isOnServiceThread, "job ran off the service thread")
                        _ = server.sessions.hub.sessions.count
                        done.signal()
                    }
                }
            }
        }
        for _ in 0..<(threads * jobsPerThread) {
            #expect(done.wait(timeout: .now() + 5) == .success)
        }
    }

    /// A minimal HTTP/1.1 GET over a blocking socket; returns the whole response text.
    private func httpGet(port: Int, path: String) throws -> String {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
        let request = "GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
        _ = request.withCString { send(fd, $0, strlen($0), 0) }
        var response = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = recv(fd, &buffer, buffer.count, 0)
            if n <= 0 { break }
            response += buffer[0..<n]
        }
        return String(decoding: response, as: UTF8.self)
    }
}
