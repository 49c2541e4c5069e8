import Foundation
import RealmStorage
import RealmSwift

/// The state of a subscription set (RealmSwift's `SyncSubscriptionState`).
public enum SyncSubscriptionState: Sendable, Equatable {
    /// The server has sent every object the set matches.
    case complete
    /// The server refused the set (the error says why).
    case error(any Error)
    /// Waiting for the server.
    case pending
    /// A newer set replaced it before it completed.
    case superseded

    public static func == (a: SyncSubscriptionState, b: SyncSubscriptionState) -> Bool {
        switch (a, b) {
        case (.complete, .complete), (.pending, .pending), (.superseded, .superseded): true
        case (.error(let x), .error(let y)): "\(x)" == "\(y)"
        default: false
        }
    }
}

/// One subscription of a set: a query on a class, maybe named.
public struct SyncSubscription: Sendable, Equatable {
    /// Its name, if it has one.
    public let name: String?
    /// The class it queries.
    public let objectClassName: String
    /// Its query (Spec/QUERY.md).
    public let queryString: String
    /// When it was added.
    public let createdAt: Date
    /// When its query last changed.
    public let updatedAt: Date
    let client: SyncClient

    init(_ s: StoredSubscription, client: SyncClient) {
        self.name = s.name.isEmpty ? nil : s.name
        self.objectClassName = s.className
        self.queryString = s.query
        self.createdAt = s.createdAt
        self.updatedAt = s.updatedAt
        self.client = client
    }

    public static func == (a: SyncSubscription, b: SyncSubscription) -> Bool {
        a.name == b.name && a.objectClassName == b.objectClassName && a.queryString == b.queryString
    }

    /// Changes its query (inside ``SyncSubscriptionSet/update(_:onComplete:)``).
    public func updateQuery<T: Object>(toType type: T.Type, where query: (Query<T>) -> Query<Bool>) {
        let text = SubscriptionQueryText.text(type, query)
        client.edit { subs in
            guard let i = subs.firstIndex(where: { $0.name == (name ?? "") && $0.className == objectClassName && $0.query == queryString })
            else { return }
            subs[i].className = type.className()
            subs[i].query = text
            subs[i].updatedAt = Date()
        }
    }
}

/// A subscription to add: objects of `T` matching a query (RealmSwift's `QuerySubscription`).
///
/// ```swift
/// QuerySubscription<Person>(name: "adults") { $0.age >= 18 }
/// QuerySubscription<Person>(where: "name BEGINSWITH %@", "A")
/// QuerySubscription<Person>()   // every Person
/// ```
public struct QuerySubscription<T: Object>: Sendable {
    /// Its name, if it has one.
    public let name: String?
    let query: String

    /// Every object of `T`.
    public init(name: String? = nil) {
        self.name = name
        self.query = "TRUEPREDICATE"
    }

    /// The objects of `T` that `query` matches.
    public init(name: String? = nil, query: (Query<T>) -> Query<Bool>) {
        self.name = name
        self.query = SubscriptionQueryText.text(T.self, query)
    }

    /// The objects of `T` that the query text matches (stops on a malformed query, as
    /// RealmSwift does).
    public init(name: String? = nil, where predicateFormat: String, _ args: Any...) {
        self.name = name
        do { self.query = try SubscriptionQueryText.text(predicateFormat, args) } catch { fatalError("\(error)") }
    }
}

/// The subscriptions of a synced Realm (RealmSwift's `SyncSubscriptionSet`): what the server
/// sends to the file. Change it in ``update(_:onComplete:)``; the server then sends the objects
/// the new set matches, and objects no subscription matches leave the file.
///
/// ```swift
/// let subs = realm.subscriptions
/// try await subs.update {
///     subs.append(QuerySubscription<Person>(name: "adults") { $0.age >= 18 })
/// }
/// ```
public struct SyncSubscriptionSet: Sendable, Sequence {
    let client: SyncClient
    let store: Store
    /// The version of the set this instance stands for: the newest when it was made, then each
    /// version its updates saved (RealmSwift's set object follows its own updates the same way).
    private let version: Locked<UInt64>

    init(client: SyncClient, store: Store) {
        self.client = client
        self.store = store
        version = Locked((try? SyncFileState.read(try store.snapshot(kind: "subscriptions")))?.querySetVersion ?? 0)
    }

    private var saved: SyncFileState {
        (try? SyncFileState.read(try store.snapshot(kind: "subscriptions"))) ?? SyncFileState()
    }

    private var current: [StoredSubscription] { client.editing.withLock { $0 } ?? saved.subscriptions }

    /// How many subscriptions it has.
    public var count: Int { current.count }

    /// Whether the server has sent what the set matches: pending (bootstrapping included), then
    /// complete or error; superseded when a newer set was saved before this one completed.
    public var state: SyncSubscriptionState {
        let s = saved
        let mine = version.withLock { $0 }
        if mine < s.querySetVersion { return s.superseded.contains(mine) ? .superseded : .complete }
        switch s.queryState {
        case 1: return .complete
        case 2: return .error(SyncError(.invalidFlexibleSyncSubscriptions, s.queryError))
        default: return .pending
        }
    }

    /// The subscription named `named`, if any.
    public func first(named: String) -> SyncSubscription? {
        current.first { $0.name == named }.map { SyncSubscription($0, client: client) }
    }

    /// The subscription on `type` with exactly this query, if any.
    public func first<T: Object>(ofType type: T.Type, where query: (Query<T>) -> Query<Bool>) -> SyncSubscription? {
        let text = SubscriptionQueryText.text(type, query)
        return current.first { $0.className == type.className() && $0.query == text }.map { SyncSubscription($0, client: client) }
    }

    /// The subscription at `position`, if any.
    public subscript(position: Int) -> SyncSubscription? {
        let c = current
        return c.indices.contains(position) ? SyncSubscription(c[position], client: client) : nil
    }

    /// The first subscription, if any.
    public var first: SyncSubscription? { self[0] }
    /// The last subscription, if any.
    public var last: SyncSubscription? { self[count - 1] }

    /// The subscriptions, in order.
    public func makeIterator() -> IndexingIterator<[SyncSubscription]> {
        current.map { SyncSubscription($0, client: client) }.makeIterator()
    }

    // MARK: Changing

    /// Adds subscriptions (inside ``update(_:onComplete:)``). A subscription with the name of an
    /// existing one replaces its query; an unnamed one equal to an existing one is not added twice.
    public func append<T: Object>(_ subscriptions: QuerySubscription<T>...) {
        for s in subscriptions { client.add(name: s.name, className: T.className(), query: s.query) }
    }

    /// Removes the subscription named `named` (inside an update).
    public func remove(named: String) {
        client.edit { $0.removeAll { $0.name == named } }
    }

    /// Removes subscriptions (inside an update).
    public func remove(_ subscriptions: SyncSubscription...) {
        client.edit { subs in
            for s in subscriptions {
                subs.removeAll { $0.name == (s.name ?? "") && $0.className == s.objectClassName && $0.query == s.queryString }
            }
        }
    }

    /// Removes the subscriptions on `type` with exactly this query (inside an update).
    public func remove<T: Object>(ofType type: T.Type, _ query: (Query<T>) -> Query<Bool>) {
        let text = SubscriptionQueryText.text(type, query)
        client.edit { $0.removeAll { $0.className == type.className() && $0.query == text } }
    }

    /// Removes every subscription, or only the unnamed ones (inside an update).
    public func removeAll(unnamedOnly: Bool = false) {
        client.edit { $0.removeAll { !unnamedOnly || $0.name.isEmpty } }
    }

    /// Removes every subscription on `type` (inside an update).
    public func removeAll<T: Object>(ofType type: T.Type) {
        client.edit { $0.removeAll { $0.className == type.className() } }
    }

    /// Changes the set: `block` appends and removes; the new set is saved in the file at once
    /// (it survives a restart) and sent to the server; `onComplete` is called when the server has
    /// sent what it matches, or with the error that refused it.
    public func update(_ block: () -> Void, onComplete: (@Sendable ((any Error)?) -> Void)? = nil) {
        do {
            let version = try apply(block)
            Task {
                var failure: (any Error)?
                do { try await client.waitForSubscriptions(version) } catch { failure = error }
                onComplete?(failure)
            }
        } catch {
            onComplete?(error)
        }
    }

    /// Changes the set and waits until the server has sent what it matches.
    /// - Throws: `Realm.Error.subscriptionFailed` when the server refuses a query (the error
    ///   handler gets a ``SyncError`` `.invalidFlexibleSyncSubscriptions` too); ``SyncError`` when
    ///   the session stops; `CancellationError` when the task is cancelled.
    public func update(_ block: () -> Void) async throws {
        let version = try apply(block)
        try await client.waitForSubscriptions(version)
    }

    /// Runs `block` on an editing copy and saves it as the next version. Returns the version.
    @discardableResult
    func apply(_ block: () -> Void) throws -> UInt64 {
        let start = saved.subscriptions
        let wasEditing = client.editing.withLock { e -> Bool in
            if e != nil { return true }
            e = start
            return false
        }
        if wasEditing { fatalError("SyncSubscriptionSet.update cannot be nested") }
        block()
        let edited = client.editing.withLock { e in
            defer { e = nil }
            return e ?? start
        }
        var version: UInt64 = 0
        let (_, rejected) = try SyncFile.transaction(store, embedded: client.embeddedClasses) { _, state in
            if state.queryState == 0 && state.querySetVersion > 0 {
                state.superseded = Array((state.superseded + [state.querySetVersion]).suffix(100))
            }
            state.subscriptions = edited
            state.querySetVersion += 1
            state.queryState = 0
            state.queryError = ""
            version = state.querySetVersion
        }
        self.version.withLock { $0 = version }
        client.committedDirectly()
        client.reportRejected(rejected)
        Task { await client.subscriptionsChanged() }
        return version
    }
}

extension SyncClient {
    /// Edits the set being updated; outside an update it stops, as RealmSwift does.
    nonisolated func edit(_ change: (inout [StoredSubscription]) -> Void) {
        let ok = editing.withLock { e -> Bool in
            guard e != nil else { return false }
            change(&e!)
            return true
        }
        if !ok { fatalError("Cannot modify a subscription set outside of update { }.") }
    }
}
