import Foundation
import LiveActivityCore
import Testing
@testable import LiveActivityServer

/// The push inspector's memory: the last ``Inspector/capacity`` records, in order, whatever the number appended.
@Suite struct InspectorTests {
    private func record(at seconds: TimeInterval) -> Inspection {
        Inspection(id: 0, at: Date(timeIntervalSince1970: seconds), source: "message", transport: "websocket",
                   type: "update", event: nil, requestId: nil, pushToken: nil, apnsId: nil, priority: nil,
                   activityId: "a", status: nil, verdict: "applied", cause: nil, detail: nil, warning: nil, raw: nil,
                   decoded: nil, dates: [], diff: nil, noOp: false, events: [], throttled: nil)
    }

    @Test func keepsTheLastCapacityRecordsInOrderAcrossManyAppends() {
        let inspector = Inspector()
        let appended = 2 * Inspector.capacity + 234
        for i in 0..<appended { inspector.append(record(at: TimeInterval(i))) }
        #expect(inspector.records.count == Inspector.capacity)
        #expect(inspector.records.map(\.id) == Array(UInt64(appended - Inspector.capacity + 1)...UInt64(appended)))
        #expect(inspector.records(after: nil).count == Inspector.capacity)
        #expect(inspector.records(after: UInt64(appended - 3)).map(\.id) == [UInt64(appended - 2), UInt64(appended - 1), UInt64(appended)])
        // A `since` older than what is kept gives everything kept.
        #expect(inspector.records(after: 1).count == Inspector.capacity)
    }

    @Test func keepsEverythingBelowCapacity() {
        let inspector = Inspector()
        for i in 0..<7 { inspector.append(record(at: TimeInterval(i))) }
        #expect(inspector.records.map(\.id) == Array(1...7))
    }
}
