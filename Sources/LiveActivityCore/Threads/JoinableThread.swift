import Foundation

/// A POSIX thread that can be joined: ``join()`` returns only once the thread has fully ended, its
/// thread-specific data destructors included.
///
/// Foundation's `Thread` is detached. When the process exits while a detached thread is still running its
/// destructors, OpenSSL's exit handler (`OPENSSL_cleanup`) and the thread's own destructor both free the
/// thread's OpenSSL state: a double free that AddressSanitizer reports. Threads that use OpenSSL (the
/// libwebsockets service thread, the APNs HTTP/2 thread) are therefore joined before the server reports it
/// has stopped. See pthread_create(3) and pthread_join(3).
public final class JoinableThread: @unchecked Sendable {
    /// Dropped once run, so that an owner holding this thread and captured by `body` is no cycle.
    private var body: (() -> Void)?
    private let name: String
    private let lock = NSLock()
    /// {lock} the running thread, until joined.
    private var handle: pthread_t?

    /// Prepares a thread named `name` that will run `body`.
    public init(name: String, _ body: @escaping () -> Void) {
        self.name = name
        self.body = body
    }

    /// Starts the thread. Call once.
    /// - Returns: `false` if the system could not create a thread (`pthread_create` failed); `body` then never runs.
    @discardableResult
    public func start() -> Bool {
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            let this = Unmanaged<JoinableThread>.fromOpaque(argument!).takeRetainedValue()
            Thread.current.name = this.name
            let body = this.body
            this.body = nil
            body?()
            return nil
        }, box.toOpaque())
        guard result == 0 else {
            box.release()
            return false
        }
        lock.withLock { handle = thread }
        return true
    }

    /// Blocks until the thread has ended, destructors included. Returns at once if it never started or was
    /// already joined; safe to call from several threads, but never from the thread itself.
    public func join() {
        guard let thread = lock.withLock({ () -> pthread_t? in
            defer { handle = nil }
            return handle
        }) else { return }
        pthread_join(thread, nil)
    }
}
