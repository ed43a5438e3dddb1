import Foundation
import LiveActivityCore
import Testing

/// A thread started by ``Thread/named(_:_:)`` carries its name in the kernel (`/proc/thread-self/comm`), where
/// Foundation's `name` set before `start()` left the starting thread's name, and its setter inside the thread
/// lost the name now and then (it had not yet been told the thread's handle; seen under load, one run in a dozen).
struct ThreadNameTests {
    @Test(arguments: 0..<50) func aNamedThreadIsNamedInTheKernel(attempt: Int) async {
        let seen = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            Thread.named("store-writer") {
                let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
                continuation.resume(returning: comm.trimmingCharacters(in: .whitespacesAndNewlines))
            }.start()
        }
        #expect(seen == "store-writer", "attempt \(attempt)")
    }
}
