import Foundation

extension Thread {
    /// A thread, not yet started, that runs `body` under `name` (what `top -H`, `perf --sort tid` and
    /// `/proc/PID/task/TID/comm` show; Linux keeps its first 15 bytes).
    ///
    /// Foundation on Linux gives a name set before `start()` to no thread: each of ours showed the name of the
    /// thread that started it ("lws-service" for the store's), so a per-thread profile could not tell them
    /// apart. The thread names itself first instead, in the kernel by writing its own `/proc/thread-self/comm`
    /// (what `pthread_setname_np` does): Foundation's `name` setter names the kernel's thread only once the
    /// starting thread has recorded the new one's handle, which it may not have done yet when the new thread
    /// runs (the name was then lost now and then).
    public static func named(_ name: String, _ body: @escaping @Sendable () -> Void) -> Thread {
        Thread {
            Thread.current.name = name
            if let comm = FileHandle(forWritingAtPath: "/proc/thread-self/comm") {
                try? comm.write(contentsOf: Array(name.utf8.prefix(15)))
                try? comm.close()
            }
            body()
        }
    }
}
