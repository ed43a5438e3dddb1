import Foundation
import LiveActivityCore

/// Watches folders of kind folders (`serve --kinds DIR`) and reloads the kinds when a file in them changes.
///
/// Polls once per ``interval`` on its own thread: the names, sizes and modification times of every file one
/// and two levels down (`DIR/<kind>/Attributes.swift`). A change calls `onChange` on the watcher's thread,
/// which reads the folders there and hands the new catalog to the service thread
/// (``LiveActivityServer/reloadKinds()``), so nothing slow runs on the service thread. Polling rather than
/// inotify: portable, and a second's delay is fine for an edit-and-look loop. Thread-safe.
final class KindFolderWatcher: Sendable {
    /// Time between two looks at the folders.
    let interval: Duration
    private let directories: [URL]
    private let onChange: @Sendable () -> Void
    /// Signalled to stop the thread early.
    private let wakeUp = DispatchSemaphore(value: 0)
    /// {locked} whether ``stop()`` was called.
    private let stopped = Locked(false)
    /// {locked} the polling thread, until joined.
    private let thread = Locked<JoinableThread?>(nil)

    /// Prepares a watcher; nothing runs until ``start()``.
    /// - Parameters:
    ///   - directories: the folders of kind folders to watch.
    ///   - interval: time between two looks (1 s by default).
    ///   - onChange: called on the watcher's thread after a change is seen.
    init(directories: [URL], interval: Duration = .seconds(1), onChange: @escaping @Sendable () -> Void) {
        self.directories = directories
        self.interval = interval
        self.onChange = onChange
    }

    /// Takes the first look on the calling thread (so a change made as soon as this returns is seen), then
    /// starts the polling thread. Call once.
    func start() {
        let first = Self.fingerprint(directories)
        let thread = JoinableThread(name: "kind-watcher") { [self] in run(from: first) }
        self.thread.withLock { $0 = thread }
        thread.start()
    }

    /// Stops the polling thread and waits for it to end. Safe to call more than once.
    func stop() {
        let first = stopped.withLock { stopped in
            defer { stopped = true }
            return !stopped
        }
        if first { wakeUp.signal() }
        thread.withLock { $0 }?.join()
    }

    private func run(from first: [String]) {
        var last = first
        let seconds = interval.timeInterval
        while true {
            _ = wakeUp.wait(timeout: .now() + seconds)
            if stopped.withLock({ $0 }) { return }
            let current = Self.fingerprint(directories)
            if current != last {
                last = current
                onChange()
            }
        }
    }

    /// What is watched, as one comparable value: `path size mtime` of each file, sorted.
    static func fingerprint(_ directories: [URL]) -> [String] {
        let manager = FileManager.default
        var lines: [String] = []
        for directory in directories {
            for name in (try? manager.contentsOfDirectory(atPath: directory.path)) ?? [] where !name.hasPrefix(".") {
                let folder = directory.appendingPathComponent(name)
                let files = (try? manager.contentsOfDirectory(atPath: folder.path)) ?? []
                for path in [folder.path] + files.map({ folder.appendingPathComponent($0).path }) {
                    guard let attributes = try? manager.attributesOfItem(atPath: path) else { continue }
                    let size = (attributes[.size] as? NSNumber)?.intValue ?? 0
                    let modified = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
                    lines.append("\(path) \(size) \(modified)")
                }
            }
        }
        return lines.sorted()
    }
}
