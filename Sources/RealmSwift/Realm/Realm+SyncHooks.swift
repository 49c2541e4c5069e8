import Foundation
import RealmStorage

/// What a sync client (the `RealmSwiftSync` module) attaches to a ``Realm/Configuration``: it is
/// told when a Realm on the configuration's file opens, and can then follow the file's local
/// commits and write to it. The local database knows nothing of networks; this is its only door.
package protocol RealmSyncAttachment: Sendable {
    /// A Realm on `file` was opened (its schema is set up). Called for every new instance; the
    /// attachment starts its work on the first call for a file.
    func realmOpened(_ file: RealmFileLink) throws
}

/// The open file of a synced Realm, as the sync client sees it: the engine's store, and the two
/// signals a writer outside ``Realm`` needs.
package struct RealmFileLink: Sendable {
    let handle: StoreHandle
    /// The engine's store of the file.
    package var store: Store { handle.store }
    /// The file's path.
    package var path: String { handle.path }
    /// The names of the file's embedded classes (the file itself does not record which are).
    package let embeddedClasses: Set<String>
    /// Whether the Realm that opened is the only one alive on the file in the process: the file
    /// was opened anew (RealmSwift reruns `rerunOnOpen` initial subscriptions then).
    package let isOnlyRealm: Bool
    /// The configuration the Realm was opened with (to open others on the file).
    package let configuration: Realm.Configuration

    init(handle: StoreHandle, embeddedClasses: Set<String>, isOnlyRealm: Bool, configuration: Realm.Configuration) {
        self.handle = handle
        self.embeddedClasses = embeddedClasses
        self.isOnlyRealm = isOnlyRealm
        self.configuration = configuration
    }

    /// Tells the file's Realms of a commit made directly on ``store`` (their notifications run
    /// now instead of at the next poll).
    package func committed() { handle.coordinator.versionAdvanced() }

    /// Calls `hook` inside every commit a ``Realm`` of this process makes on the file, just before
    /// it is written: what the hook writes in the transaction commits with it. A hook must not
    /// throw away the user's changes; what it cannot do it leaves for later.
    package func addCommitHook(_ hook: @escaping @Sendable (WriteTransaction) -> Void) {
        handle.commitHooks.withLock { $0.append(hook) }
    }

    /// Calls `observer` after every commit a ``Realm`` of this process makes on the file (not
    /// after commits made directly on ``store``). It lives as long as the file stays open.
    package func observeLocalCommits(_ observer: @escaping @Sendable () -> Void) {
        handle.commitObservers.withLock { $0.append(observer) }
    }
}

extension Realm.Configuration {
    /// The sync client attached to this configuration, if any (set by `RealmSwiftSync`).
    package var syncAttachment: (any RealmSyncAttachment)? {
        get { _syncAttachment }
        set { _syncAttachment = newValue }
    }
}

extension Realm {
    /// Tells the configuration's sync client that this instance opened.
    func attachSync() throws {
        guard let attachment = configuration.syncAttachment else { return }
        let embedded = Set(known.values.filter(\.isEmbedded).map(\.className))
        try attachment.realmOpened(
            RealmFileLink(
                handle: handle, embeddedClasses: embedded, isOnlyRealm: !handle.hasLiveRealm(otherThan: self), configuration: configuration)
        )
    }
}
