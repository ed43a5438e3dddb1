import Testing
@testable import LiveActivityCore

/// Response header values: visible ASCII, other characters escaped so a field name stays identifiable (from the
/// second new-user trial: `"名前": 5` gave `typeMismatch String at  (`), controls left out, 1,024 bytes at most.
struct HTTPFieldValueTests {
    @Test func nonASCIIIsEscapedAndControlsLeftOut() {
        #expect("typeMismatch String at 名前".httpFieldValue == #"typeMismatch String at \u{540D}\u{524D}"#)
        #expect("aps.content-state.heureDArrivée".httpFieldValue == #"aps.content-state.heureDArriv\u{E9}e"#)
        #expect("a\r\nX-Injected: 1\u{7F}".httpFieldValue == "aX-Injected: 1")
        #expect("plain".httpFieldValue == "plain")
    }

    @Test func cutAt1024BytesNeverInsideAnEscape() {
        let value = (String(repeating: "x", count: 1020) + "é").httpFieldValue
        #expect(value == String(repeating: "x", count: 1020), "the escape (\\u{E9}, 6 bytes) would pass 1,024: left out whole")
        #expect(String(repeating: "y", count: 2000).httpFieldValue.utf8.count == 1024)
    }
}
