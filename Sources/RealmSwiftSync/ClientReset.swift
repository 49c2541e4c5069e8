import Foundation
import RealmSwift

/// What a client does when the server can no longer bring its file up to date: the server's
/// history no longer reaches the file's version (it was offline longer than the history is
/// kept, Spec/SYNC.md §8.5). RealmSwift's `ClientResetMode`; the default is
/// ``recoverUnsyncedChanges(beforeReset:afterReset:)``.
///
/// ```swift
/// let config = user.flexibleSyncConfiguration(
///     clientResetMode: .discardUnsyncedChanges(afterReset: { before, after in
///         print("lost \(before.objects(Task.self).count - after.objects(Task.self).count) tasks")
///     }))
/// ```
///
/// The automatic modes bring the file to the server's state (a bootstrap of its subscriptions)
/// without closing it: open Realms and results see the change as a write, and notifications
/// fire. `beforeReset` gets a frozen Realm of the file as it was; `afterReset` gets that frozen
/// Realm and a live one after the reset's bootstrap.
public enum ClientResetMode: Sendable {
    /// Local changes the server had not acknowledged are dropped; the file becomes the server's
    /// state.
    case discardUnsyncedChanges(
        beforeReset: (@Sendable (_ before: Realm) -> Void)? = nil,
        afterReset: (@Sendable (_ before: Realm, _ after: Realm) -> Void)? = nil)
    /// Local changes the server had not acknowledged are kept: applied on the server's state and
    /// uploaded, where the conflict rules order them with everyone's writes.
    case recoverUnsyncedChanges(
        beforeReset: (@Sendable (_ before: Realm) -> Void)? = nil,
        afterReset: (@Sendable (_ before: Realm, _ after: Realm) -> Void)? = nil)
    /// Recovers, or discards when recovery is impossible. With this server recovery is always
    /// possible (the unsynced changes are uploads the conflict rules order like any), so this
    /// recovers.
    case recoverOrDiscardUnsyncedChanges(
        beforeReset: (@Sendable (_ before: Realm) -> Void)? = nil,
        afterReset: (@Sendable (_ before: Realm, _ after: Realm) -> Void)? = nil)
    /// Nothing is done to the file: the session stops and `errorHandler` (or, without one, the
    /// configuration's or the sync manager's) receives a `.clientResetError` whose
    /// ``SyncError/clientResetInfo()`` moves the file aside when the application is ready.
    case manual(errorHandler: (@Sendable (any Error, SyncSession?) -> Void)? = nil)

    /// Whether unsynced changes are kept (the two recovering modes).
    var recovers: Bool {
        switch self {
        case .recoverUnsyncedChanges, .recoverOrDiscardUnsyncedChanges: true
        default: false
        }
    }

    var callbacks: (before: (@Sendable (Realm) -> Void)?, after: (@Sendable (Realm, Realm) -> Void)?) {
        switch self {
        case .discardUnsyncedChanges(let b, let a), .recoverUnsyncedChanges(let b, let a), .recoverOrDiscardUnsyncedChanges(let b, let a):
            (b, a)
        case .manual: (nil, nil)
        }
    }
}

extension SyncSession {
    /// Carries out a manual client reset (RealmSwift's `immediatelyHandleError`): the file is
    /// moved to the backup path of ``SyncError/clientResetInfo()``, so that the next open makes
    /// a new file and bootstraps it. Call it when no Realm of the file is open.
    public static func immediatelyHandleError(_ token: SyncError.ActionToken, syncManager: SyncManager) {
        syncManager.forgetSession(path: token.path)
        let files = FileManager.default
        try? files.createDirectory(
            at: URL(fileURLWithPath: token.backupPath).deletingLastPathComponent(), withIntermediateDirectories: true)
        try? files.moveItem(atPath: token.path, toPath: token.backupPath)
        for suffix in [".lock", ".creating", ".compacting"] { try? files.removeItem(atPath: token.path + suffix) }
    }
}
