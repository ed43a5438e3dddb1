import Foundation

/// APNs-style tokens: 64 lowercase hexadecimal digits (32 random bytes), as APNs device and push tokens look.
public enum PushToken {
    /// A new token from the system's cryptographically secure random number generator.
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }

    /// Whether `text` looks like a token (64 hex digits).
    public static func isWellFormed(_ text: String) -> Bool {
        text.utf8.count == 64 && text.allSatisfy(\.isHexDigit)
    }
}
