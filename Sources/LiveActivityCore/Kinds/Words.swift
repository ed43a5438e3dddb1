/// Swift names as people read them, for generated layouts and labels: `estimatedDeliveryTime` →
/// "Estimated delivery time", `DeliveryActivityAttributes` → "Delivery activity".
///
/// Words split at a lower-to-upper case change, before the last capital of an acronym (`ETAText` → "ETA text"),
/// at underscores and hyphens, and between letters and digits; acronyms keep their capitals, and a few
/// well-known ones (``acronyms``: `eta`, `id`, `url`…) are written in capitals however they are spelled.
public enum Words {
    /// Short words read letter by letter, written in capitals in any case (`eta` → "ETA", `rideId` → "Ride ID").
    /// Public/js/kinds/schema-form.js `fieldLabel` has the same list.
    public static let acronyms: Set<String> = ["eta", "id", "url", "uuid", "api", "gps", "ok", "tv", "xs", "xl", "xxl"]

    /// A field's name in words, first word capitalised: `heartRate` → "Heart rate", `etaURL` → "ETA URL",
    /// `team_name` → "Team name".
    public static func label(ofField name: String) -> String {
        sentence(split(name))
    }

    /// An enum's raw value as people read it: a sentence (one with a space) or a name (one that begins with a
    /// capital: "FedEx", "United", not "Fed ex") as it is, an identifier in words (`in_progress` → "In progress",
    /// `enRoute` → "En route").
    public static func label(ofRawValue raw: String) -> String {
        raw.contains(" ") || raw.first?.isUppercase == true ? raw : label(ofField: raw)
    }

    /// A struct's name in words without a trailing `Attributes` (nor `ActivityAttributes`' `Widget`):
    /// `DeliveryActivityAttributes` → "Delivery activity", `PizzaDeliveryAttributes` → "Pizza delivery".
    /// A name that is only `Attributes` stays as it is.
    public static func title(ofStruct name: String) -> String {
        var words = split(name)
        if words.count > 1, words.last == "Attributes" { words.removeLast() }
        if words.count > 1, words.last == "Widget" { words.removeLast() }
        return sentence(words)
    }

    /// The words of an identifier, as written.
    static func split(_ name: String) -> [String] {
        var words: [String] = []
        var current = ""
        let characters = Array(name)
        for (index, character) in characters.enumerated() {
            if character == "_" || character == "-" || character == " " {
                if !current.isEmpty { words.append(current); current = "" }
                continue
            }
            if let last = current.last {
                let next = index + 1 < characters.count ? characters[index + 1] : nil
                let breaks = (last.isLowercase && character.isUppercase)
                    || (last.isUppercase && character.isUppercase && next?.isLowercase == true)
                    || (last.isNumber != character.isNumber && (last.isLetter || character.isLetter))
                if breaks { words.append(current); current = "" }
            }
            current.append(character)
        }
        if !current.isEmpty { words.append(current) }
        return words
    }

    /// Words joined as a sentence: the first capitalised, the others lower case unless an acronym.
    private static func sentence(_ words: [String]) -> String {
        words.enumerated().map { index, word in
            let acronym = word.count > 1 && word.allSatisfy { $0.isUppercase || $0.isNumber }
            if acronym { return word }
            if acronyms.contains(word.lowercased()) { return word.uppercased() }
            let lower = word.lowercased()
            return index == 0 ? lower.prefix(1).uppercased() + lower.dropFirst() : lower
        }.joined(separator: " ")
    }
}
