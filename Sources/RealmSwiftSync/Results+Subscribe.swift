import Foundation
import RealmSwift

/// When `Results.subscribe` waits for the server's data (RealmSwift's `WaitForSyncMode`).
public enum WaitForSyncMode: Sendable, Equatable {
    /// Wait only when the subscription is new (or its query changed).
    case onCreation
    /// Always wait.
    case always
    /// Never wait: the objects arrive in the background.
    case never
}

extension Results where Element: Object {
    /// Subscribes to these results' query (their class and filters; sorts do not count) in the
    /// Realm's subscription set and, as `waitForSync` says, waits until the server has sent the
    /// objects it matches. Returns these results.
    ///
    /// ```swift
    /// let adults = try await realm.objects(Person.self).where { $0.age >= 18 }.subscribe(name: "adults")
    /// ```
    ///
    /// Without a name, an equal unnamed subscription is reused; with a name, a subscription of
    /// that name gets this query.
    /// - Throws: `Realm.Error.subscriptionFailed` when the server refuses the query;
    ///   `Realm.Error.invalidQuery` for results over a collection property; ``SyncError`` when the
    ///   session stops. When `timeout` seconds pass first, an `NSError` of `NSPOSIXErrorDomain` and
    ///   code `ETIMEDOUT`, "Waiting for update timed out after … seconds.", as RealmSwift throws:
    ///   the client stopped waiting, nothing failed, and the subscription stays in the set (its
    ///   objects arrive when the server sends them).
    public func subscribe(
        name: String? = nil, waitForSync: WaitForSyncMode = .onCreation, timeout: TimeInterval? = nil,
        _isolation: isolated (any Actor)? = #isolation
    ) async throws -> Results<Element> {
        guard let realm, let session = realm.syncSession else {
            throw Realm.Error(code: .fail, reason: "subscribe needs results of a Realm opened with a flexible sync configuration")
        }
        let (className, query) = try subscriptionQuery()
        let client = session.client
        let subs = realm.subscriptions
        let existing = subs.first { $0.name == name && $0.objectClassName == className && $0.queryString == query }
        var version: UInt64?
        if existing == nil {
            version = try subs.apply { client.add(name: name, className: className, query: query) }
        }
        var out = self
        out.syncSubscriptionName = name
        guard waitForSync == .always || (waitForSync == .onCreation && version != nil) else { return out }
        let target = version ?? client.currentQuerySetVersion
        let wait: @Sendable () async throws -> Void = {
            try await client.waitForSubscriptions(target)
            if waitForSync == .always { try await client.waitForDownload() }
        }
        if let timeout {
            try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await wait()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(timeout))
                    return false
                }
                let done = try await group.next() ?? false
                group.cancelAll()
                if !done { throw Self.timedOut(after: timeout) }
            }
        } else {
            try await wait()
        }
        realm.refresh()
        return out
    }

    /// The error of a `subscribe` whose wait ran out: RealmSwift's.
    static func timedOut(after timeout: TimeInterval) -> NSError {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(ETIMEDOUT),
            userInfo: [
                NSLocalizedDescriptionKey: "Waiting for update timed out after \(timeout) seconds.",
                NSLocalizedFailureReasonErrorKey:
                    "The client stopped waiting; the subscription stays in the subscription set and its objects arrive when the server sends them.",
            ])
    }

    /// Removes the subscription these results made with `subscribe` (the named one, or else an
    /// unnamed one with their query). Returns once the set is saved; the objects leave the file
    /// when the server has answered. The results keep their own filter.
    public func unsubscribe() {
        guard let realm, let session = realm.syncSession, let (className, query) = try? subscriptionQuery() else { return }
        let name = syncSubscriptionName ?? ""
        let subs = realm.subscriptions
        guard subs.contains(where: { ($0.name ?? "") == name && $0.objectClassName == className && $0.queryString == query }) else {
            return
        }
        _ = try? subs.apply {
            session.client.edit { $0.removeAll { $0.name == name && $0.className == className && $0.query == query } }
        }
    }
}

extension SyncClient {
    /// Adds a subscription as `Results.subscribe` does (inside an update).
    nonisolated func add(name: String?, className: String, query: String) {
        edit { subs in
            let now = Date()
            if let name, let i = subs.firstIndex(where: { $0.name == name }) {
                subs[i].className = className
                subs[i].query = query
                subs[i].updatedAt = now
            } else if name != nil || !subs.contains(where: { $0.name.isEmpty && $0.className == className && $0.query == query }) {
                subs.append(StoredSubscription(name: name ?? "", className: className, query: query, createdAt: now, updatedAt: now))
            }
        }
    }

    /// The version of the subscription set the file holds.
    nonisolated var currentQuerySetVersion: UInt64 {
        guard let store = linkStore, let state = try? SyncFileState.read(try store.snapshot(kind: "subscriptions")) else { return 0 }
        return state.querySetVersion
    }
}
