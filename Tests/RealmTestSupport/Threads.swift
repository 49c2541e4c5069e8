import Foundation

/// Runs `body` on a new thread and waits for it: what another thread of a program does, with its
/// own Realm instances (Realm instances are cached per thread, so a second `Realm(configuration:)`
/// on the test's thread is the same instance).
public func onAnotherThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) throws -> T {
    let outcome = ThreadOutcome<T>()
    let done = DispatchSemaphore(value: 0)
    let thread = Thread {
        outcome.result = Result(catching: body)
        done.signal()
    }
    thread.start()
    done.wait()
    return try outcome.result!.get()
}

/// What ``onAnotherThread(_:)``'s thread produced.
///
/// `@unchecked Sendable`: written by the thread before it signals, read after the wait.
private final class ThreadOutcome<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
}
