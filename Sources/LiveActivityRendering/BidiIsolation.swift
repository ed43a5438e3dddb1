/// Renders text that could spoof the display without changing what is stored: a value holding
/// bidirectional embedding, override or isolate controls (U+202A…U+202E, U+2066…U+2069) is wrapped in
/// FIRST STRONG ISOLATE … POP DIRECTIONAL ISOLATE — the plain-text form of `<bdi>`, valid in attributes too —
/// with its own isolates balanced (a stray PDI, which would end the wrapper early, is left out; isolates left
/// open are closed), so it cannot reorder the text after it; NUL is shown as ␀ (U+2400). Other text is
/// returned unchanged. `Public/js/bidi.js` does the same for the browser's renderer. Pure; thread-safe.
public enum BidiIsolation {
    /// FIRST STRONG ISOLATE.
    static let firstStrongIsolate: Unicode.Scalar = "\u{2068}"
    /// POP DIRECTIONAL ISOLATE.
    static let popDirectionalIsolate: Unicode.Scalar = "\u{2069}"
    /// SYMBOL FOR NULL, shown for NUL.
    static let nullSymbol: Unicode.Scalar = "\u{2400}"

    /// Whether `scalar` is an embedding, override or isolate control (LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI).
    static func isBidiControl(_ scalar: Unicode.Scalar) -> Bool {
        (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value)
    }

    /// `text` as it is safe to render (see the type's comment).
    public static func isolated(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let hasControl = scalars.contains(where: isBidiControl)
        guard hasControl || scalars.contains("\u{0}") else { return text }
        var out = String.UnicodeScalarView()
        if hasControl { out.append(firstStrongIsolate) }
        var openIsolates = 0
        for scalar in scalars {
            switch scalar.value {
            case 0: out.append(nullSymbol)
            case 0x2066, 0x2067, 0x2068:
                openIsolates += 1
                out.append(scalar)
            case 0x2069:
                guard openIsolates > 0 else { continue }  // would close the wrapper
                openIsolates -= 1
                out.append(scalar)
            default: out.append(scalar)
            }
        }
        if hasControl {
            for _ in 0...openIsolates { out.append(popDirectionalIsolate) }
        }
        return String(out)
    }
}
