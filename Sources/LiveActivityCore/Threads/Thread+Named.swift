import Foundation

extension Thread {
    /// A thread, not yet started, that runs `body` under `name` (what `top -H`, `perf --sort tid` and
    /// `/proc/PID/task/TID/comm` show; Linux keeps its first 15 bytes).
    ///
    /// Foundation on Linux gives a name set before `start()` to no thread: each of ours showed the name of the
    /// thread that started it ("lws-service" for the store's), so a per-thread profile could not tell them
    /// apart. The thread names itself first instead.
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        Thread {
            Thread.current.name = name
            body()
        }
    }
}
