import Foundation

/// One HTTP/1.1 `GET` over a plain TCP socket, for the few client commands that read an HTTP route
/// (`kinds list` reads `GET /kinds`). No TLS: a `wss://` server is refused with a message saying so.
enum PlainHTTPGet {
    /// Fetches `path` from `host:port`.
    /// - Parameters:
    ///   - timeout: for connecting and for the whole answer, in seconds.
    ///   - token: sent as `Authorization: Bearer …` when given.
    /// - Returns: the status code and the body.
    /// - Throws: ``ClientFailure`` when the host cannot be resolved or reached, or the answer is not HTTP.
    static func get(host: String, port: Int, path: String, token: String?, timeout: Double) throws(ClientFailure) -> (status: Int, body: [UInt8]) {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let bare = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        guard getaddrinfo(bare, String(port), &hints, &list) == 0, let first = list else {
            throw ClientFailure("cannot resolve \(host)")
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { throw ClientFailure("cannot open a socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var limit = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            throw ClientFailure("cannot connect to \(host):\(port): \(String(cString: strerror(errno)))")
        }
        var request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nAccept: application/json\r\nConnection: close\r\n"
        if let token { request += "Authorization: Bearer \(token)\r\n" }
        request += "\r\n"
        let bytes = Array(request.utf8)
        guard bytes.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == bytes.count else {
            throw ClientFailure("cannot send the request to \(host):\(port)")
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while answer.count < 4 * 1024 * 1024 {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            answer += buffer[..<count]
        }
        guard let split = answer.firstRange(of: Array("\r\n\r\n".utf8)) else { throw ClientFailure("no HTTP answer from \(host):\(port)") }
        let head = String(decoding: answer[..<split.lowerBound], as: UTF8.self)
        let statusLine = head.split(separator: "\r\n").first ?? ""
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw ClientFailure("not an HTTP answer from \(host):\(port)")
        }
        var body = Array(answer[split.upperBound...])
        if head.lowercased().contains("transfer-encoding: chunked") { body = dechunk(body) }
        return (status, body)
    }

    /// The body of a `Transfer-Encoding: chunked` answer.
    private static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        var index = 0
        while let lineEnd = bytes[index...].firstRange(of: [13, 10]) {
            let sizeText = String(decoding: bytes[index..<lineEnd.lowerBound], as: UTF8.self).split(separator: ";").first ?? ""
            guard let size = Int(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size > 0 else { break }
            let start = lineEnd.upperBound
            guard start + size <= bytes.count else { break }
            output += bytes[start..<start + size]
            index = start + size + 2
            guard index < bytes.count else { break }
        }
        return output
    }
}

/// A client command's failure to reach or read the server (exit status 3).
struct ClientFailure: Error {
    /// What went wrong, for people.
    var message: String
    init(_ message: String) { self.message = message }
}
