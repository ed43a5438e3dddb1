import Foundation

/// Reads the server from outside: its memory and CPU time from `/proc/PID`, and its broadcast counters
/// from `GET /metrics`. Blocking; called between the benchmark's phases only.
struct ServerProbe {
    let host: String
    let port: Int
    /// Token for `/metrics` (any role), sent as `Authorization: Bearer`.
    let token: String?
    let pid: Int32?

    /// The server's resident set size (`VmRSS`), in KiB, or nil without a PID.
    func residentKiB() -> Int? {
        guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }

    /// The server's user + system CPU time so far, in seconds (`/proc/PID/stat` fields 14 and 15).
    func cpuSeconds() -> Double? {
        guard let pid, let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is field 3 (state); utime is field 14, stime field 15.
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The broadcast counters from `/metrics`.
    struct Counters {
        /// `liveactivity_broadcast_encodes_total`: frames encoded (one per event or tick).
        var encodes: Int
        /// `liveactivity_broadcast_deliveries_total`: frames queued for clients.
        var deliveries: Int
        /// `liveactivity_messages_sent_total`: WebSocket messages written.
        var messagesSent: Int
    }

    /// Fetches `/metrics` over a plain TCP connection (HTTP/1.1, `Connection: close`); nil on any failure.
    func counters() -> Counters? {
        guard let text = get("/metrics") else { return nil }
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = Int(value) }
        }
        guard let encodes = values["liveactivity_broadcast_encodes_total"],
              let deliveries = values["liveactivity_broadcast_deliveries_total"] else { return nil }
        return Counters(encodes: encodes, deliveries: deliveries, messagesSent: values["liveactivity_messages_sent_total"] ?? 0)
    }

    /// The body of `GET path`, or nil.
    private func get(_ path: String) -> String? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host, &address.sin_addr) == 1 else { return nil }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return nil }
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else { return nil }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            response.append(contentsOf: buffer[0..<count])
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200"), let split = text.range(of: "\r\n\r\n") else { return nil }
        return String(text[split.upperBound...])
    }
}
