import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One resolved IP address of an image host, and whether fetching from it is safe.
public struct HostAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address's bytes in network order: 4 for IPv4, 16 for IPv6.
    public var bytes: [UInt8]

    /// Creates an address from its network-order bytes (4 or 16).
    public init(bytes: [UInt8]) {
        precondition(bytes.count == 4 || bytes.count == 16, "an IP address has 4 or 16 bytes")
        self.bytes = bytes
    }

    /// Parses a numeric IPv4 or IPv6 address (`127.0.0.1`, `::1`, `[::1]`), or `nil`.
    public init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = String(literal.dropFirst().dropLast()) }
        var v4 = in_addr()
        if inet_pton(AF_INET, literal, &v4) == 1 {
            self.bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, literal, &v6) == 1 {
            self.bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    /// Whether this is IPv6.
    public var isIPv6: Bool { bytes.count == 16 }

    /// The address as text (`192.0.2.1`, `2001:db8::1`).
    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv6 ? AF_INET6 : AF_INET
        let ok = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) != nil }
        guard ok else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address as libcurl's `CURLOPT_RESOLVE` wants it: IPv6 in brackets.
    var resolveForm: String { isIPv6 ? "[\(description)]" : description }

    /// Whether the address is not on the public internet: unspecified, loopback, private (RFC 1918, IPv6 ULA),
    /// link-local, carrier-grade NAT, multicast, benchmarking or reserved ranges, and IPv4 inside IPv6
    /// (mapped, compatible, NAT64) when the IPv4 address is one of these.
    public var isPrivate: Bool {
        if !isIPv6 { return Self.isPrivateV4(bytes) }
        let b = bytes
        if b.allSatisfy({ $0 == 0 }) { return true }                                  // ::
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return true }             // ::1
        if b[0..<10].allSatisfy({ $0 == 0 }) && b[10] == 0xff && b[11] == 0xff {       // ::ffff:a.b.c.d
            return Self.isPrivateV4(Array(b[12..<16]))
        }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return Self.isPrivateV4(Array(b[12..<16])) } // ::a.b.c.d
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xff, b[3] == 0x9b, b[4..<12].allSatisfy({ $0 == 0 }) {
            return Self.isPrivateV4(Array(b[12..<16]))                                 // 64:ff9b::/96
        }
        if b[0] & 0xfe == 0xfc { return true }                                         // fc00::/7 unique local
        if b[0] == 0xfe && b[1] & 0xc0 == 0x80 { return true }                         // fe80::/10 link-local
        if b[0] == 0xfe && b[1] & 0xc0 == 0xc0 { return true }                         // fec0::/10 site-local
        if b[0] == 0xff { return true }                                                // ff00::/8 multicast
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0d, b[3] == 0xb8 { return true }      // 2001:db8::/32 documentation
        return false
    }

    private static func isPrivateV4(_ b: [UInt8]) -> Bool {
        switch (b[0], b[1]) {
        case (0, _), (10, _), (127, _): return true                     // this network, RFC 1918, loopback
        case (100, 64...127): return true                               // 100.64/10 carrier-grade NAT
        case (169, 254): return true                                    // link-local
        case (172, 16...31): return true                                // RFC 1918
        case (192, 168): return true                                    // RFC 1918
        case (192, 0) where b[2] == 0 || b[2] == 2: return true         // IETF protocol assignments, TEST-NET-1
        case (198, 18...19): return true                                // benchmarking
        case (198, 51) where b[2] == 100: return true                   // TEST-NET-2
        case (203, 0) where b[2] == 113: return true                    // TEST-NET-3
        case (224...255, _): return true                                // multicast, reserved, broadcast
        default: return false
        }
    }

    /// Resolves `host` (a name or a numeric address) to its addresses, as `getaddrinfo` does.
    /// Blocks; call from a fetch worker, never from the service thread.
    /// - Throws: ``ImageError`` `unresolvable` (transient) when the name does not resolve.
    public static func resolve(_ host: String) throws(ImageError) -> [HostAddress] {
        if let literal = HostAddress(host) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            throw ImageError(.unresolvable, "cannot resolve \(host.prefix(100)): \(reason)", transient: true)
        }
        defer { freeaddrinfo(first) }
        var found: [HostAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let entry = node {
            if let address = entry.pointee.ai_addr {
                if entry.pointee.ai_family == AF_INET {
                    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                        var raw = v4.pointee.sin_addr
                        found.append(HostAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) }))
                    }
                } else if entry.pointee.ai_family == AF_INET6 {
                    address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                        var raw = v6.pointee.sin6_addr
                        found.append(HostAddress(bytes: withUnsafeBytes(of: &raw) { Array($0) }))
                    }
                }
            }
            node = entry.pointee.ai_next
        }
        var unique: [HostAddress] = []
        for address in found where !unique.contains(address) { unique.append(address) }
        guard !unique.isEmpty else { throw ImageError(.unresolvable, "\(host.prefix(100)) has no IP address", transient: true) }
        return unique
    }
}
