import Foundation
import RealmStorage
import RealmSwift

/// The sync session of a synced Realm file (RealmSwift's `SyncSession`): its state, its
/// connection, and waits for uploads and downloads. `realm.syncSession` returns it.
///
/// ```swift
/// try realm.write { realm.add(Task(name: "Write the spec")) }
/// try await realm.syncSession!.wait(for: .upload)   // the server has it
/// ```
public final class SyncSession: Sendable {
    let client: SyncClient

    init(client: SyncClient) { self.client = client }

    /// Whether the session syncs.
    public enum State: Sendable, Equatable {
        /// Syncing, or trying to connect to sync.
        case active
        /// Stopped: suspended, or stopped by a fatal error, or its user logged out.
        case inactive
        /// No longer usable.
        case invalid
    }

    /// The state of the session's connection to the server.
    public enum ConnectionState: Sendable, Equatable {
        /// Not connected (offline, suspended, or between attempts).
        case disconnected
        /// Connecting and logging in.
        case connecting
        /// Connected: uploads and downloads flow.
        case connected
    }

    /// A direction of transfer, for waits and progress notifications.
    public enum ProgressDirection: Sendable, Equatable {
        /// Local changes going to the server.
        case upload
        /// The server's changes coming to the file.
        case download
    }

    /// How long a progress notification block is called (RealmSwift's `ProgressMode`).
    public enum ProgressMode: Sendable, Equatable {
        /// Until its token is invalidated.
        case reportIndefinitely
        /// Until the work outstanding at registration is done.
        case forCurrentlyOutstandingWork
    }

    /// A progress report. The protocol does not size transfers yet: a block hears a complete
    /// report when the server acknowledges uploads (`.upload`) and when a download or bootstrap is
    /// applied (`.download`).
    public struct Progress: Sendable, Equatable {
        /// Bytes transferred.
        public let transferredBytes: Int
        /// Bytes to transfer.
        public let transferrableBytes: Int
        /// The fraction done, 0 to 1.
        public let progressEstimate: Double
        /// Whether the transfer is done.
        public var isTransferComplete: Bool { progressEstimate >= 1 }
        /// ``progressEstimate`` (RealmSwift's earlier name).
        public var fractionTransferred: Double { progressEstimate }
    }

    /// The session's state.
    public var state: State { client.status.withLock { $0.state } }
    /// The connection's state.
    public var connectionState: ConnectionState { client.status.withLock { $0.connection } }
    /// The connection loop's last events (connecting, welcomed, ended and why), for tests.
    package var trace: [String] { client.status.withLock { $0.trace } }
    /// The user the session syncs for.
    public func parentUser() -> User? { client.user }

    /// Stops syncing (local writes go on) until ``resume()``.
    public func suspend() {
        client.status.withLock {
            $0.suspended = true
            $0.state = .inactive
        }
        Task { await client.suspend() }
    }

    /// Syncs again after ``suspend()`` or a fatal error.
    public func resume() { Task { await client.resume() } }

    /// Reconnects now.
    public func reconnect() {
        Task {
            await client.suspend()
            await client.resume()
        }
    }

    /// Waits until every local change made before the call is on the server (`.upload`), or every
    /// change on the server at the call is in the file (`.download`). Waits while offline.
    /// - Throws: ``SyncError`` when the session stops with a fatal error.
    public func wait(for direction: ProgressDirection) async throws {
        switch direction {
        case .upload: try await client.waitForUpload()
        case .download: try await client.waitForDownload()
        }
    }

    /// ``wait(for:)`` with a completion handler called on `queue`.
    public func wait(for direction: ProgressDirection, queue: DispatchQueue? = nil, block: @escaping @Sendable ((any Error)?) -> Void) {
        Task {
            var failure: (any Error)?
            do { try await wait(for: direction) } catch { failure = error }
            let error = failure
            if let queue { queue.async { block(error) } } else { block(error) }
        }
    }

    /// Calls `block` with progress reports of `direction` (see ``Progress``): until the token is
    /// invalidated (`.reportIndefinitely`), or once (`.forCurrentlyOutstandingWork`).
    public func addProgressNotification(
        for direction: ProgressDirection, mode: ProgressMode, block: @escaping @Sendable (Progress) -> Void
    ) -> ProgressNotificationToken? {
        let id = client.status.withLock { s in
            let id = s.nextProgressToken
            s.nextProgressToken += 1
            s.progress[id] = (direction, mode, block)
            return id
        }
        return ProgressNotificationToken { [client] in _ = client.status.withLock { $0.progress.removeValue(forKey: id) } }
    }
}

/// Stops a progress notification block.
public final class ProgressNotificationToken: Sendable {
    private let stop: Locked<(@Sendable () -> Void)?>

    init(_ stop: @escaping @Sendable () -> Void) { self.stop = Locked(stop) }

    /// The block is not called again.
    public func invalidate() {
        let s = stop.withLock { s in
            defer { s = nil }
            return s
        }
        s?()
    }
}
