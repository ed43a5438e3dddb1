/// Escaping for text and attribute values in HTML, and for text inlined into `<style>`.
enum HTML {
    /// Escapes `&`, `<`, `>`, `"` and `'`, so the result is safe both as text and inside a quoted attribute;
    /// bidirectional controls and NUL are rendered isolated first (``BidiIsolation``).
    static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in BidiIsolation.isolated(text).unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }

    /// Makes a stylesheet safe to put between `<style>` and `</style>`: a `</` can only end the element,
    /// so it is written with a CSS escape (`<\/`), which means the same in CSS.
    static func styleSafe(_ css: String) -> String {
        css.replacingOccurrences(of: "</", with: "<\\/")
    }
}
