import Foundation

/// A value that only the service thread may touch, checked rather than commented: in debug builds every
/// access traps when made from another thread (the shape of swift-nio's `NIOLoopBound`). Release builds
/// skip the check.
///
/// Thread-safe to pass around (`Sendable`); the value itself is reached only on its owner's thread.
final class ServiceBound<Value>: @unchecked Sendable {
    private var storage: Value
    private let isOnOwnerThread: @Sendable () -> Bool

    /// Wraps `value` for the thread `isOnOwnerThread` recognises.
    init(_ value: Value, owner isOnOwnerThread: @escaping @Sendable () -> Bool) {
        storage = value
        self.isOnOwnerThread = isOnOwnerThread
    }

    /// The value. - Precondition (debug builds): called on the owner thread.
    var value: Value {
        get {
            assert(isOnOwnerThread(), "service-thread state touched from another thread")
            return storage
        }
        _modify {
            assert(isOnOwnerThread(), "service-thread state touched from another thread")
            yield &storage
        }
    }
}
