import Foundation
import Testing
@testable import LiveActivityCore

/// The log writer in front of a descriptor that does not drain: callers never wait, lines are dropped whole.
struct LogWriterTests {
    @Test func aPipeNobodyReadsDropsLinesInsteadOfBlockingAndKeepsTheRestWhole() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(readEnd) }
        // The default bound (4096 lines, 1 MiB) plus a 64 KiB pipe hold far fewer than 10,000 lines.
        let writer = LogWriter(fileDescriptor: writeEnd)
        let logger = Logger(label: "test", writer: writer)
        let total = 10_000
        for index in 0..<total {
            logger.info("line", ["line.index": "\(index)", "padding": String(repeating: "x", count: 64)])
        }
        // Every call returned though nobody has read the pipe yet: the lines that did not fit were dropped.
        let dropped = writer.droppedLines
        #expect(dropped > 0)

        let drained = DispatchSemaphore(value: 0)
        let output = Locked(Data())
        let reader = Thread {
            let data = FileHandle(fileDescriptor: readEnd, closeOnDealloc: false).readDataToEndOfFile()
            output.withLock { $0 = data }
            drained.signal()
        }
        reader.start()
        #expect(writer.flush(timeout: .seconds(60)), "the writer empties its queue once the pipe is read")
        close(writeEnd)
        drained.wait()

        let text = String(decoding: output.withLock { $0 }, as: UTF8.self)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count + writer.droppedLines == total, "every line is either written or counted as dropped")
        #expect(writer.droppedLines == dropped, "nothing more was dropped once the pipe was read")
        var previous = -1
        for line in lines {
            // `2026-11-29T17:00:00.000Z info test: line line.index=N padding=xxx…`: whole, in order.
            let fields = line.split(separator: " ")
            #expect(fields.count == 6 && fields[1] == "info" && fields[2] == "test:" && fields[3] == "line", "\(line)")
            #expect(fields.last.map(String.init) == "padding=" + String(repeating: "x", count: 64), "\(line)")
            let index = fields.count == 6 ? Int(fields[4].dropFirst("line.index=".count)) ?? -1 : -1
            #expect(index > previous, "\(line)")
            previous = index
        }
    }

    @Test func aLineThatDoesNotFitIsDroppedWholeAndTheNextOneStillFits() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]); close(ends[1]) }
        let writer = LogWriter(fileDescriptor: ends[1], capacityLines: 8, capacityBytes: 100)
        #expect(!writer.write(String(repeating: "y", count: 100)), "100 bytes plus a newline exceed 100 bytes")
        #expect(writer.droppedLines == 1)
        #expect(writer.write("short"))
        #expect(writer.flush(timeout: .seconds(60)))
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = read(ends[0], &buffer, buffer.count)
        #expect(count == 6 && String(decoding: buffer[..<6], as: UTF8.self) == "short\n")
    }
}

/// Text-format lines: a value a client chose can never pose as another field or another entry.
struct LoggerTextFormatTests {
    @Test func plainTokensStayAsTheyAre() {
        for value in ["started", "6F1C-9", "https://example.com/a.png", "12.5", "é🏃"] {
            #expect(Logger.textEscaped(value, quoting: true) == value)
        }
    }

    @Test func anythingElseIsQuotedWithItsLineBreaksEscaped() {
        let forged = "https://example.invalid/a b\n2026-12-02T00:00:00.000Z error liveactivity: FAKE"
        #expect(Logger.textEscaped(forged, quoting: true)
                == #""https://example.invalid/a b\n2026-12-02T00:00:00.000Z error liveactivity: FAKE""#)
        #expect(Logger.textEscaped("", quoting: true) == #""""#)
        #expect(Logger.textEscaped("a=b", quoting: true) == #""a=b""#)
        #expect(Logger.textEscaped(#"say "hi" \ bye"#, quoting: true) == #""say \"hi\" \\ bye""#)
        #expect(Logger.textEscaped("nul\u{0}\r\t\u{7F}\u{2028}", quoting: true) == #""nul\u0000\r\t\u007f\u2028""#)
        // The message keeps its spaces and quotes; only line breaks and controls are escaped.
        #expect(Logger.textEscaped("thumbnail \"x\" ready\nFAKE", quoting: false) == #"thumbnail "x" ready\nFAKE"#)
    }
}
