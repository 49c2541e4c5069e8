import Foundation
import RealmStorage
import RealmSwift

/// How a Realm syncs: its user and what happens when it opens (RealmSwift's `SyncConfiguration`).
/// ``User/flexibleSyncConfiguration(clientResetMode:initialSubscriptions:rerunOnOpen:)`` makes one inside a
/// `Realm.Configuration`.
public struct SyncConfiguration: Sendable {
    /// The user whose data the Realm holds.
    public let user: User
    /// What happens when the server can no longer bring the file up to date (a client reset,
    /// Spec/SYNC.md §8.5): by default the file is brought to the server's state and its unsynced
    /// changes are kept and uploaded.
    public var clientResetMode: ClientResetMode
    /// Run on the file's subscription set, inside an update, when the file is created (and on
    /// every open with ``rerunOnOpen``).
    public var initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)?
    /// Whether ``initialSubscriptions`` runs on every open.
    public var rerunOnOpen: Bool
    /// Receives this Realm's sync errors (else ``SyncManager/errorHandler`` does).
    public var errorHandler: (@Sendable (any Error, SyncSession?) -> Void)?

    init(
        user: User, clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
        initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)?, rerunOnOpen: Bool
    ) {
        self.user = user
        self.clientResetMode = clientResetMode
        self.initialSubscriptions = initialSubscriptions
        self.rerunOnOpen = rerunOnOpen
    }
}

/// The attachment RealmSwift calls when a synced Realm opens.
struct SyncAttachment: RealmSyncAttachment {
    let configuration: SyncConfiguration

    func realmOpened(_ file: RealmFileLink) throws {
        let core = configuration.user.core
        let (client, isNew) = core.sessions.withLock { s in
            if let c = s[file.path] { return (c, false) }
            let c = SyncClient(user: configuration.user, core: core, path: file.path)
            s[file.path] = c
            return (c, true)
        }
        if isNew {
            try client.attach(file, configuration: configuration)
        } else if file.isOnlyRealm, configuration.rerunOnOpen, let initial = configuration.initialSubscriptions {
            // The file opened anew while its session lived on: RealmSwift reruns them.
            let set = SyncSubscriptionSet(client: client, store: file.store)
            try set.apply { initial(set) }
        }
    }
}

extension Realm.Configuration {
    /// The sync configuration of a synced Realm; nil for a local one.
    public var syncConfiguration: SyncConfiguration? {
        get { (syncAttachment as? SyncAttachment)?.configuration }
        set { syncAttachment = newValue.map(SyncAttachment.init) }
    }
}

extension User {
    /// A configuration for this user's flexible-sync Realm: its file lives under the app's root
    /// directory; `initialSubscriptions` runs when the file is created (or on every open with
    /// `rerunOnOpen`).
    ///
    /// ```swift
    /// let config = user.flexibleSyncConfiguration(initialSubscriptions: { subs in
    ///     subs.append(QuerySubscription<Task>(name: "open") { $0.done == false })
    /// })
    /// let realm = try await Realm(configuration: config, downloadBeforeOpen: .always)
    /// ```
    public func flexibleSyncConfiguration(
        clientResetMode: ClientResetMode = .recoverUnsyncedChanges(),
        initialSubscriptions: (@Sendable (SyncSubscriptionSet) -> Void)? = nil, rerunOnOpen: Bool = false
    ) -> Realm.Configuration {
        let dir = core.directory.appendingPathComponent(id.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined())
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        var config = Realm.Configuration(fileURL: dir.appendingPathComponent("flx_sync_default.realm"))
        config.syncConfiguration = SyncConfiguration(
            user: self, clientResetMode: clientResetMode, initialSubscriptions: initialSubscriptions, rerunOnOpen: rerunOnOpen)
        return config
    }
}

extension Realm {
    /// The sync session of a synced Realm; nil for a local one.
    public var syncSession: SyncSession? {
        guard let sync = configuration.syncConfiguration, let client = sync.user.core.sessions.withLock({ $0[configurationPath] })
        else { return nil }
        return SyncSession(client: client)
    }

    /// The subscription set of a synced Realm (stops for a local Realm, as in RealmSwift).
    public var subscriptions: SyncSubscriptionSet {
        guard let session = syncSession else { fatalError("This Realm was not configured with flexible sync; it has no subscriptions.") }
        return SyncSubscriptionSet(client: session.client, store: store)
    }

    var configurationPath: String { store.path }

    /// When to download the server's data before opening a synced Realm.
    public enum OpenBehavior: Sendable, Equatable {
        /// Open at once (what is in the file), syncing in the background.
        case never
        /// Download everything first; while the server cannot be reached, the session retries
        /// and the open waits.
        case always
        /// Download first only when the file does not exist yet.
        case once
    }

    /// Opens the file (attaching its sync client) and, when `downloadBeforeOpen` asks for it,
    /// waits for the server's data (a local Realm opens at once). Returns the Realm it opened,
    /// which the caller keeps until its own Realm is open, so that one does not count as the
    /// file opening anew (``SyncConfiguration/rerunOnOpen``).
    static func syncedOpen(
        configuration: Realm.Configuration = .defaultConfiguration, downloadBeforeOpen: OpenBehavior
    ) async throws -> OpeningRealm {
        let exists = configuration.fileURL.map { FileManager.default.fileExists(atPath: $0.path) } ?? false
        // Opened on the queue it is confined to (opening may write: the schema), and released
        // there.
        let queue = DispatchQueue(label: "realm.asyncOpen")
        let (opening, session) = try queue.sync {
            let realm = try Realm(configuration: configuration, queue: queue)
            return (OpeningRealm(queue: queue, realm: realm), realm.syncSession)
        }
        if let session, downloadBeforeOpen == .always || (downloadBeforeOpen == .once && !exists) {
            do {
                try await session.client.waitForOpen()
            } catch {
                opening.close()
                throw error
            }
        }
        return opening
    }

    /// The Realm ``syncedOpen(configuration:downloadBeforeOpen:)`` opened, confined to `queue`;
    /// ``close()`` releases it on that queue before it returns (so that the next open of the file
    /// sees it gone: an asynchronous release made `rerunOnOpen` miss an open now and then).
    final class OpeningRealm: @unchecked Sendable {
        // Only touched on `queue`.
        private var realm: Realm?
        let queue: DispatchQueue

        init(queue: DispatchQueue, realm: Realm) {
            self.queue = queue
            self.realm = realm
        }

        func close() { queue.sync { realm = nil } }
    }

    /// Opens a Realm, downloading a synced Realm's data first, and gives it to `callback` on
    /// `callbackQueue`, confined to that queue (RealmSwift's `asyncOpen`).
    public static func asyncOpen(
        configuration: Realm.Configuration = .defaultConfiguration, callbackQueue: DispatchQueue = .main,
        callback: @escaping @Sendable (Result<Realm, any Swift.Error>) -> Void
    ) {
        Task {
            do {
                let opening = try await syncedOpen(configuration: configuration, downloadBeforeOpen: .always)
                callbackQueue.async {
                    defer { opening.close() }
                    do { callback(.success(try Realm(configuration: configuration, queue: callbackQueue))) } catch {
                        callback(.failure(error))
                    }
                }
            } catch {
                callbackQueue.async { callback(.failure(error)) }
            }
        }
    }

    /// Opens a Realm and, for a synced Realm, downloads the server's data first (the async form of
    /// ``asyncOpen(configuration:callbackQueue:callback:)``). The Realm is isolated to `actor`.
    public static func asyncOpen(configuration: Realm.Configuration = .defaultConfiguration, actor: isolated any Actor) async throws
        -> Realm
    {
        let opening = try await syncedOpen(configuration: configuration, downloadBeforeOpen: .always)
        defer { opening.close() }
        return try await Realm(configuration: configuration, actor: actor)
    }
}

extension RealmInitializers where Self: Realm {
    /// Opens a Realm isolated to `actor`, first downloading a synced Realm's data when
    /// `downloadBeforeOpen` asks for it.
    public init(
        configuration: Realm.Configuration = .defaultConfiguration, actor: isolated any Actor, downloadBeforeOpen: Realm.OpenBehavior
    )
        async throws
    {
        let opening = try await Realm.syncedOpen(configuration: configuration, downloadBeforeOpen: downloadBeforeOpen)
        defer { opening.close() }
        self = try await Realm(configuration: configuration, actor: actor) as! Self
    }

    /// Opens a Realm on the main actor, first downloading a synced Realm's data when
    /// `downloadBeforeOpen` asks for it (RealmSwift's `Realm(configuration:downloadBeforeOpen:)`).
    @MainActor
    public init(configuration: Realm.Configuration = .defaultConfiguration, downloadBeforeOpen: Realm.OpenBehavior) async throws {
        let opening = try await Realm.syncedOpen(configuration: configuration, downloadBeforeOpen: downloadBeforeOpen)
        defer { opening.close() }
        self = try await Realm(configuration: configuration, actor: MainActor.shared) as! Self
    }
}
