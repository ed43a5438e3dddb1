import Foundation
import Testing
@testable import LiveActivityCore

/// Decoding against a declaration exactly as the app's `JSONDecoder` would (Codable form, as APNs carries it),
/// validating the protocol form, and converting between the two (issue 17).
struct DeclarationDecodingTests {
    static let interval = try! ActivityDeclaration(swiftSource: DeclarationFixtures.intervalWorkout)
    static let workout = try! ActivityDeclaration(swiftSource: DeclarationFixtures.workoutWidget)
    static let delivery = try! ActivityDeclaration(swiftSource: DeclarationFixtures.noisy)
    static let emoji = try! ActivityDeclaration(swiftSource: DeclarationFixtures.emoji)

    /// 2025-12-01T10:00:00Z and half an hour later, in seconds since 2001-01-01.
    let lower = 786_276_000.0
    let upper = 786_277_800.0

    private func json(_ text: String) -> JSONValue {
        (try? JSONValue.parse(Array(text.utf8))) ?? .null
    }

    private func failure(_ declaration: ActivityDeclaration, _ text: String, as part: DeclaredPart = .contentState) -> DecodingFailure? {
        do {
            _ = try declaration.decode(codable: json(text), as: part)
            return nil
        } catch {
            return error
        }
    }

    private func failure(_ text: String, as part: DeclaredPart = .contentState) -> DecodingFailure? {
        failure(Self.interval, text, as: part)
    }

    private func refusal(_ text: String) -> ProtocolError? { refusal(Self.interval, text) }

    private func refusal(_ declaration: ActivityDeclaration, _ text: String, as part: DeclaredPart = .contentState) -> ProtocolError? {
        do {
            _ = try declaration.normalise(json(text), as: part, field: "content.state")
            return nil
        } catch {
            return error
        }
    }

    private func iso(_ seconds: Double) -> JSONValue { .string(ISODate.format(Date(timeIntervalSinceReferenceDate: seconds))) }

    // MARK: - Codable form

    @Test func codableStateDecodesToTheProtocolForm() throws {
        let decoded = try Self.interval.decode(
            codable: json(#"{"heartRate":142,"distance":3.2,"phase":"warm-up","interval":[\#(lower),\#(upper)],"hartRate":150}"#),
            as: .contentState, field: "content-state")
        #expect(decoded.value == .object([
            "heartRate": .number(142), "distance": .number(3.2), "phase": .string("warm-up"),
            "interval": .object(["start": iso(lower), "end": iso(upper)]),
        ]))
        #expect(decoded.warnings == [DeclarationWarning(field: "content-state", message: #"key "hartRate" is not in ContentState; the app ignores it"#)])
        #expect(decoded.warnings.first?.description == #"content-state: key "hartRate" is not in ContentState; the app ignores it"#)
    }

    @Test func optionalsMayBeMissingOrNull() throws {
        for note in ["", #","note":null"#, #","note":"easy""#] {
            let decoded = try Self.interval.decode(
                codable: json(#"{"heartRate":1,"distance":0,"phase":"rest","interval":[\#(lower),\#(lower)]\#(note)}"#), as: .contentState)
            guard case .object(let object) = decoded.value else { Issue.record("not an object"); continue }
            #expect(object["note"] == (note.contains("easy") ? .string("easy") : nil))
        }
    }

    @Test(arguments: [
        (#"{"distance":3.2,"phase":"work","interval":[0,1]}"#, #"keyNotFound "heartRate""#, "heartRate", DecodingFailure.Kind.keyNotFound),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":[0,"1"]}"#, "typeMismatch Double at interval[1]", "interval[1]", .typeMismatch),
        (#"{"heartRate":1,"distance":3.2,"phase":"sprint","interval":[0,1]}"#,
         #"dataCorrupted: invalid enum raw value "sprint" for Phase at phase"#, "phase", .dataCorrupted),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":[10,1]}"#,
         "dataCorrupted: ClosedRange lower bound is greater than upper bound at interval", "interval", .dataCorrupted),
        (#"{"heartRate":1.5,"distance":3.2,"phase":"work","interval":[0,1]}"#,
         "dataCorrupted: number 1.5 does not fit in Int at heartRate", "heartRate", .dataCorrupted),
        (#"{"heartRate":1,"distance":3.2,"phase":null,"interval":[0,1]}"#, "valueNotFound Phase at phase", "phase", .valueNotFound),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":[0]}"#, "valueNotFound Date at interval[1]", "interval[1]", .valueNotFound),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":{"start":0,"end":1}}"#,
         "typeMismatch Array<Any> at interval", "interval", .typeMismatch),
        (#"{"heartRate":1,"distance":"3.2","phase":"work","interval":[0,1]}"#, "typeMismatch Double at distance", "distance", .typeMismatch),
        (#"{"heartRate":1,"distance":1,"phase":"work","interval":[0,1],"note":7}"#, "typeMismatch String at note", "note", .typeMismatch),
        (#"[1]"#, "typeMismatch Dictionary<String, Any>", "", .typeMismatch),
    ])
    func decodeFailuresAreInSwiftsTerms(text: String, summary: String, path: String, kind: DecodingFailure.Kind) throws {
        let found = try #require(failure(text))
        #expect(found.summary == summary)
        #expect(found.fieldPath == path)
        #expect(found.kind == kind)
        #expect("dropped: \(found)" == "dropped: \(summary)")
    }

    @Test func decoderSentencesMatchJSONDecoders() throws {
        #expect(failure(#"{"heartRate":1.5,"distance":3.2,"phase":"work","interval":[0,1]}"#)?.debugDescription
                == "Parsed JSON number <1.5> does not fit in Int.")
        #expect(failure(#"{"heartRate":1,"distance":3.2,"phase":"work","interval":[0,"1"]}"#)?.debugDescription
                == "Expected to decode Double but found a string instead.")
        #expect(failure(#"{"heartRate":1,"distance":3.2,"phase":"sprint","interval":[0,1]}"#)?.debugDescription
                == "Cannot initialize Phase from invalid String value sprint")
        #expect(failure(#"{"heartRate":1,"distance":3.2,"interval":[0,1]}"#)?.debugDescription == #"No value associated with key "phase"."#)
    }

    @Test func failuresBecomeProtocolErrorsByField() throws {
        let mismatch = try #require(failure(#"{"heartRate":1,"distance":3.2,"phase":"work","interval":[0,"1"]}"#))
        let error = mismatch.protocolError(field: "content-state")
        #expect(error.code == .invalidField && error.field == "content-state.interval[1]")
        #expect(error.message == "content-state.interval[1]: typeMismatch Double: expected to decode Double but found a string instead")
        let missing = try #require(failure(#"{"distance":3.2,"phase":"work","interval":[0,1]}"#)).protocolError(field: "content-state")
        #expect(missing.code == .missingField && missing.field == "content-state.heartRate")
        #expect(missing.message == #"content-state.heartRate: keyNotFound: no value associated with key "heartRate" (Int is not optional)"#)
        let phase = try #require(failure(#"{"heartRate":1,"distance":3.2,"phase":"sprint","interval":[0,1]}"#)).protocolError(field: "content-state")
        #expect(phase.message == #"content-state.phase: dataCorrupted: invalid enum raw value "sprint" for Phase (expected one of "warm-up", "work", "rest", "cool-down")"#)
    }

    @Test func attributesDecodeToo() throws {
        #expect(failure(#"{"athlete":null,"plan":"5x5"}"#, as: .attributes)?.summary == "valueNotFound String at athlete")
        #expect(failure(#"{"athlete":"Ann","plan":"5X5"}"#, as: .attributes)?.summary == #"dataCorrupted: invalid enum raw value "5X5" for Plan at plan"#)
        let decoded = try Self.interval.decode(codable: json(#"{"athlete":"Ann","plan":"pyramid"}"#), as: .attributes)
        #expect(decoded.value == .object(["athlete": .string("Ann"), "plan": .string("pyramid")]) && decoded.warnings.isEmpty)
    }

    @Test func theReferenceWorkoutAppsIntegerEnum() throws {
        let decoded = try Self.workout.decode(codable: json(#"{"workout":2}"#), as: .attributes)
        #expect(decoded.value == .object(["workout": .number(2)]))
        #expect(failure(Self.workout, #"{"workout":"yoga"}"#, as: .attributes)?.summary == "typeMismatch Int at workout")
        #expect(failure(Self.workout, #"{"workout":3}"#, as: .attributes)?.summary == "dataCorrupted: invalid enum raw value 3 for Workout at workout")
        #expect(failure(Self.workout, #"{"workout":1.5}"#, as: .attributes)?.summary == "dataCorrupted: number 1.5 does not fit in Int at workout")
        let state = try Self.workout.decode(codable: json(#"{"workoutTimer":[\#(lower),\#(upper),99]}"#), as: .contentState, field: "content-state")
        #expect(state.value == .object(["workoutTimer": .object(["start": iso(lower), "end": iso(upper)])]))
        #expect(state.warnings.map(\.description) == ["content-state.workoutTimer: 1 element(s) after the upper bound; the app ignores them"])
    }

    @Test func anIntOutOfRangeIsRefusedInOneNotation() {
        // The protocol form names the bounds as people read them: −2^63 … 2^63 − 1, not -9.223372036854776e+18.
        let error = refusal(Self.workout, #"{"workout":99999999999999999999}"#, as: .attributes)
        #expect(error?.message.contains("expected a whole number from −2^63 to 2^63 − 1 (Int)") == true, "\(String(describing: error?.message))")
    }

    @Test func theEmojiKindsDates() throws {
        let decoded = try Self.emoji.decode(codable: json(#"{"startTime":\#(lower),"endTime":\#(upper),"name":"Run","image":"https://example.com/a.png"}"#),
                                            as: .attributes)
        #expect(decoded.value == .object(["startTime": iso(lower), "endTime": iso(upper), "name": .string("Run"),
                                          "image": .string("https://example.com/a.png")]))
        #expect(failure(Self.emoji, #"{"startTime":"2026-11-29T17:00:00Z","endTime":0,"name":"Run"}"#, as: .attributes)?.summary
                == "typeMismatch Double at startTime")
    }

    @Test func urlsAreWhatURLStringAccepts() {
        for text in ["https://example.com/a.png", "relative/path", "", "http://exa mple.com", "http://[::1", "%"] {
            let failed = failure(Self.emoji, #"{"startTime":0,"endTime":0,"name":"x","image":"\#(text)"}"#, as: .attributes)
            #expect((failed == nil) == (URL(string: text) != nil), "\(text)")
            if let failed { #expect(failed.summary.hasPrefix("dataCorrupted: invalid URL string") && failed.fieldPath == "image") }
        }
    }

    @Test func codingKeysRenameAndNestedValuesKeepTheirPath() throws {
        let state = #"{"status":"on-the-way","eta":\#(lower),"courier":{"name":"Bo"},"stops":[{"at":\#(lower),"done":false}],"stage":"packed","progress":0.5}"#
        let decoded = try Self.delivery.decode(codable: json(state), as: .contentState)
        #expect(decoded.value == .object([
            "status": .string("on-the-way"), "eta": iso(lower), "courier": .object(["name": .string("Bo")]),
            "stops": .array([.object(["at": iso(lower), "done": .bool(false)])]),
        ]))
        #expect(decoded.warnings.map(\.message) == [
            #"key "progress" is not decoded by ContentState (a let with an initial value, or left out of CodingKeys); the app ignores it"#,
            #"key "stage" is not in ContentState: CodingKeys decode stage from "status"; the app ignores it"#,
        ])
        #expect(failure(Self.delivery, #"{"stage":"packed","eta":0,"courier":{"name":"Bo"},"stops":[]}"#)?.summary == #"keyNotFound "status""#)
        #expect(failure(Self.delivery, #"{"status":"packed","eta":0,"courier":{},"stops":[]}"#)?.summary == #"keyNotFound "name" at courier"#)
        #expect(failure(Self.delivery, #"{"status":"packed","eta":0,"courier":{"name":"Bo"},"stops":[{"at":0,"done":1}]}"#)?.summary
                == "typeMismatch Bool at stops[0].done")
        #expect(failure(Self.delivery, #"{"status":"packed","eta":0,"courier":{"name":"Bo"},"stops":[],"window":[5,1]}"#)?.summary
                == "dataCorrupted: Range lower bound is greater than upper bound at window")
        let attributes = #"{"orderNumber":1,"store":"x","items":[{"sku":"a","count":300}]}"#
        #expect(failure(Self.delivery, attributes, as: .attributes)?.summary == "dataCorrupted: number 300 does not fit in UInt8 at items[0].count")
    }

    // MARK: - Protocol form

    @Test func protocolFormIsNormalised() throws {
        let value = json(#"{"heartRate":142,"distance":3.2,"phase":"work","interval":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T19:00:00+01:00"},"extra":1}"#)
        let normalised = try Self.interval.normalise(value, as: .contentState, field: "content.state")
        #expect(normalised.value == .object([
            "heartRate": .number(142), "distance": .number(3.2), "phase": .string("work"),
            "interval": .object(["start": .string("2026-11-29T17:00:00.000Z"), "end": .string("2026-11-29T18:00:00.000Z")]),
        ]))
        #expect(normalised.warnings.map(\.description) == [#"content.state: key "extra" is not in ContentState; the app ignores it"#])
    }

    @Test(arguments: [
        (#"{"distance":3.2,"phase":"work","interval":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T18:00:00Z"}}"#,
         "content.state.heartRate", "content.state.heartRate: required field is missing"),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T16:00:00Z"}}"#,
         "content.state.interval.end", "content.state.interval.end: must not be before content.state.interval.start (2026-11-29T17:00:00.000Z)"),
        (#"{"heartRate":1,"distance":3.2,"phase":"sprint","interval":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T18:00:00Z"}}"#,
         "content.state.phase", #"content.state.phase: unknown value "sprint"; expected one of "warm-up", "work", "rest", "cool-down""#),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":{"start":"tomorrow","end":"2026-11-29T18:00:00Z"}}"#,
         "content.state.interval.start", #"content.state.interval.start: expected an ISO-8601 date string such as "2026-11-29T17:00:00Z", got "tomorrow""#),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":{"start":"2026-02-30T17:00:00Z","end":"2026-11-29T18:00:00Z"}}"#,
         "content.state.interval.start", #"content.state.interval.start: "2026-02-30T17:00:00Z" is not a real date and time: day 30 does not exist in February 2026, which has 28 days"#),
        (#"{"heartRate":"1","distance":3.2,"phase":"work","interval":{"start":"2026-11-29T17:00:00Z","end":"2026-11-29T18:00:00Z"}}"#,
         "content.state.heartRate", "content.state.heartRate: expected an integer, got string"),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":[0,1]}"#,
         "content.state.interval", #"content.state.interval: expected an object {"start": ISO-8601, "end": ISO-8601}, got array"#),
        (#"{"heartRate":1,"distance":3.2,"phase":"work","interval":{"start":"2026-11-29T17:00:00Z"}}"#,
         "content.state.interval.end", "content.state.interval.end: required field is missing"),
    ])
    func protocolFormErrorsNameTheField(text: String, field: String, message: String) throws {
        let error = try #require(refusal(text))
        #expect(error.field == field)
        #expect(error.message == message)
    }

    @Test func protocolFormDatesOutsideWhatBothFormsCanCarryAreRefused() throws {
        // Found by Fuzz/run-declarations.sh: year 1012 did not survive ISO → Date → ISO (Julian before 1582), and
        // year 9999 in the protocol form did not fit the Codable form's ±1,000 years.
        let early = try #require(refusal(#"{"heartRate":1,"distance":1,"phase":"work","interval":{"start":"1012-11-21T17:00:00Z","end":"2026-11-29T18:00:00Z"}}"#))
        #expect(early.field == "content.state.interval.start")
        #expect(early.message.hasPrefix(#"content.state.interval.start: date "1012-11-21T17:00:00Z" is outside the dates this server accepts (1600-01-01T00:00:00.000Z to 3015-"#))
        #expect(refusal(#"{"heartRate":1,"distance":1,"phase":"work","interval":{"start":"2026-11-29T17:00:00Z","end":"9999-11-29T18:00:00Z"}}"#)?.field
                == "content.state.interval.end")
    }

    /// Issue 27, item 6: Foundation's `Date(from:)` reads any `Double`, so iOS applies a date in Unix milliseconds
    /// (tens of thousands of years ahead); the verdict is applied, with a warning saying where the date lands.
    @Test func codableDatesInMillisecondsApplyWithALoudWarning() throws {
        let milliseconds = 1_764_583_200_000.0 // 2025-12-01T10:00:00Z in Unix milliseconds
        let decoded = try Self.interval.decode(codable: json(#"{"heartRate":1,"distance":1,"phase":"work","interval":[0,\#(milliseconds)]}"#),
                                               as: .contentState, field: "aps.content-state")
        #expect(decoded.warnings.map(\.description) == [
            "aps.content-state.interval[1]: date 1764583200000 seconds since 2001-01-01 lands in the year 57,918: the app applies it and shows "
                + "a date that far ahead; it looks like Unix milliseconds (as such, 2025-12-01T10:00:00.000Z): Date wants seconds since "
                + "2001-01-01; stored here as \(ISODate.format(DeclarationConverter.latestDate)), the latest date this server carries",
        ])
        #expect(decoded.value.objectValue?["interval"] == .object(["start": iso(0), "end": .string(ISODate.format(DeclarationConverter.latestDate))]))
        let early = try Self.interval.decode(codable: json(#"{"heartRate":1,"distance":1,"phase":"work","interval":[-1e15,0]}"#), as: .contentState)
        #expect(early.warnings.first?.message.hasPrefix("date -1000000000000000 seconds since 2001-01-01 lands in the year -31,686,738: the app applies it "
                                                        + "and shows a date that far back; it looks like milliseconds:") == true)
        // Reversed bounds are judged on the dates the app reads, not on the stored ones.
        #expect(failure(#"{"heartRate":1,"distance":1,"phase":"work","interval":[2e12,1e12]}"#)?.kind == .dataCorrupted)
    }

    @Test func protocolAndCodableFormsRoundTrip() throws {
        let codable = json(#"{"heartRate":142,"distance":3.25,"phase":"cool-down","interval":[\#(lower),\#(upper)],"note":"ok"}"#)
        let protocolForm = try Self.interval.decode(codable: codable, as: .contentState).value
        let back = try Self.interval.codableForm(of: protocolForm, as: .contentState)
        #expect(back.value == codable && back.warnings.isEmpty)
        #expect(try Self.interval.normalise(protocolForm, as: .contentState, field: "state").value == protocolForm)
        #expect(try Self.interval.convert(codable, as: .contentState, from: .codable, to: .codable).value == codable)
    }
}
