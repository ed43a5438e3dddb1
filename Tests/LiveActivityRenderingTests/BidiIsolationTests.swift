import Testing
@testable import LiveActivityRendering

/// Text that could spoof the display, rendered isolated (issue 29 item 8); Public/js/bidi.js gives the same.
struct BidiIsolationTests {
    @Test func plainTextIsUnchanged() {
        #expect(BidiIsolation.isolated("Tea for two") == "Tea for two")
        #expect(BidiIsolation.isolated("שלום") == "שלום")  // right-to-left letters are no controls
    }

    @Test func anOverrideIsWrappedAndStrayOrOpenIsolatesBalanced() {
        #expect(BidiIsolation.isolated("a\u{202E}b") == "\u{2068}a\u{202E}b\u{2069}")
        #expect(BidiIsolation.isolated("a\u{202E}b\u{2069}c\u{2067}d") == "\u{2068}a\u{202E}bc\u{2067}d\u{2069}\u{2069}")
    }

    @Test func nulShowsAsASymbol() {
        #expect(BidiIsolation.isolated("a\u{0}b") == "a\u{2400}b")
    }

    @Test func escapingIsolatesFirst() {
        #expect(HTML.escape("<\u{202E}>") == "\u{2068}&lt;\u{202E}&gt;\u{2069}")
    }
}
