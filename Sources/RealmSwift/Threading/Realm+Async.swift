import RealmStorage

extension Realm {
    /// Runs `block` in a write transaction and commits it, waiting for the write lock without
    /// blocking the actor's executor. For Realms isolated to an actor.
    /// - Throws: what `block` throws (the transaction is then rolled back), or ``Realm/Error``.
    @discardableResult
    public func asyncWrite<Result>(_ block: () throws -> Result, isolation: isolated (any Actor)? = #isolation) async throws -> Result {
        checkThread()
        guard transaction == nil else {
            fatalError("The Realm is already in a write transaction; commit or cancel it before beginning another.")
        }
        if isFrozen { fatalError("Can't perform transactions on a frozen Realm; use thaw() or the live Realm.") }
        if configuration.readOnly { throw Realm.Error(.readOnly, "the Realm was opened read-only", path: store.path) }
        let store = self.store
        // The write lock (threads and processes) is awaited off the actor.
        let tx = try await Task.detached { try realmErrors { try WriteTransactionBox(store.beginWrite()) } }.value.transaction
        adopt(tx)
        return try finishWrite([], block)
    }

    /// Runs `block` in a write transaction, then calls `onComplete` with the commit's error (or
    /// nil). Without a run loop to come back to, the block runs before this returns; from an actor,
    /// ``asyncWrite(_:isolation:)`` is the asynchronous form.
    @discardableResult
    public func writeAsync(_ block: @escaping () -> Void, onComplete: ((Swift.Error?) -> Void)? = nil) -> AsyncTransactionId {
        do {
            try write(block)
            onComplete?(nil)
        } catch {
            onComplete?(error)
        }
        return AsyncTransactionId(0)
    }

    /// Makes an already begun transaction this Realm's own (used by ``asyncWrite(_:isolation:)``).
    func adopt(_ tx: WriteTransaction) {
        transaction = tx
        caches.lastInsert = nil
        if snapshot?.version != tx.baseVersion { snapshot = try? store.snapshot(kind: "realm") }
        stamp += 1
    }
}

/// The identifier ``Realm/writeAsync(_:onComplete:)`` returns.
public typealias AsyncTransactionId = UInt32

/// Carries a just-begun transaction from the task that waited for the lock to the Realm's actor.
///
/// `@unchecked Sendable`: the transaction is handed over once and used only by the receiver.
struct WriteTransactionBox: @unchecked Sendable {
    let transaction: WriteTransaction
    init(_ t: WriteTransaction) { transaction = t }
}
