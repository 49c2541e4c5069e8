import Foundation
import RealmStorage

/// What changed in a collection between two deliveries of its notification block.
///
/// ```swift
/// let token = realm.objects(Dog.self).observe(on: queue) { change in
///     switch change {
///     case .initial(let dogs): print("\(dogs.count) dogs")
///     case .update(_, let deletions, let insertions, let modifications):
///         print(deletions, insertions, modifications)
///     case .error(let error): print(error)
///     }
/// }
/// ```
///
/// Deletions and modifications are indices in the previous version of the collection, insertions
/// indices in the new one; a moved element is reported as a deletion and an insertion. Deleting
/// `deletions` from the previous contents and then inserting at `insertions` gives the new ones.
public enum RealmCollectionChange<CollectionType> {
    /// The collection's first evaluation.
    case initial(CollectionType)
    /// A later version: the collection, then what changed since the previous delivery.
    case update(CollectionType, deletions: [Int], insertions: [Int], modifications: [Int])
    /// Delivery failed (the file could not be read); no further changes are delivered.
    case error(Swift.Error)

    /// The indices of ``update(_:deletions:insertions:modifications:)``'s modified elements in the
    /// new version of the collection (empty for the other cases).
    public var modificationsInNewIndices: [Int] {
        guard case .update(_, let deletions, let insertions, let modifications) = self else { return [] }
        return CollectionDiff.newIndices(ofModifications: modifications, deletions: deletions, insertions: insertions)
    }
}

extension RealmCollectionChange: @unchecked Sendable where CollectionType: Sendable {}

/// What changed in a ``Map`` between two deliveries, by key.
public enum RealmMapChange<Collection> {
    /// The map's first evaluation.
    case initial(Collection)
    /// A later version: the keys that were removed, added, and whose values changed.
    case update(Collection, deletions: [String], insertions: [String], modifications: [String])
    /// Delivery failed; no further changes are delivered.
    case error(Swift.Error)
}

/// One changed property of an observed object.
///
/// `oldValue` is the value before the change (nil for collection and link properties, which are
/// read from the live object instead); `newValue` the value after it.
public struct PropertyChange: @unchecked Sendable {
    /// The property's name.
    public let name: String
    /// The value before the change, where it can be given.
    public let oldValue: Any?
    /// The value after the change.
    public let newValue: Any?
}

/// What happened to an observed object.
public enum ObjectChange<T> {
    /// Delivery failed; no further changes are delivered.
    case error(Swift.Error)
    /// Properties changed: the object (as of the new version) and the changes.
    case change(T, [PropertyChange])
    /// The object was deleted; no further changes are delivered.
    case deleted
}

extension Realm {
    /// What a ``Realm/observe(_:)`` block is told.
    public enum Notification: String, Sendable {
        /// The Realm moved to a newer version (after `refresh()`, an autorefresh, or its own write).
        case didChange = "RLMRealmDidChangeNotification"
        /// A newer version exists but autorefresh is off: call `refresh()` to see it.
        case refreshRequired = "RLMRealmRefreshRequiredNotification"
    }

    /// The block type of ``Realm/observe(_:)``.
    public typealias NotificationBlock = (_ notification: Notification, _ realm: Realm) -> Void
}

/// Keeps a notification block registered: the block is called until ``invalidate()`` is called or
/// the token is deallocated. Hold on to it for as long as you want changes.
///
/// `Sendable`: invalidation may come from any thread; it is idempotent and guarded by a lock.
public final class NotificationToken: Sendable {
    private let onInvalidate: Locked<(@Sendable () -> Void)?>
    /// The notifier this token keeps registered (for ``Realm/write(withoutNotifying:_:)``).
    let notifier: (any AnyNotifier)?

    init(notifier: (any AnyNotifier)?, _ onInvalidate: @escaping @Sendable () -> Void) {
        self.notifier = notifier
        self.onInvalidate = Locked(onInvalidate)
    }

    /// Stops the notifications; blocks already dispatched may still run.
    public func invalidate() {
        let f = onInvalidate.withLock { f in
            defer { f = nil }
            return f
        }
        f?()
    }

    deinit { invalidate() }
}
