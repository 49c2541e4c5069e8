import Foundation
import RealmStorage

/// The notification state of one Realm instance: its thread-bound notifiers, its Realm-level
/// observer blocks, and the run loop of its thread (woken when a change is ready).
///
/// `@unchecked Sendable`: every field is guarded by `lock` (tokens invalidate from any thread);
/// the blocks themselves are only called on the Realm's thread.
final class RealmNotifications: @unchecked Sendable {
    private let lock = Lock()
    private var notifiers: [ObjectIdentifier: any AnyNotifier] = [:]
    private var blocks: [Int: Realm.NotificationBlock] = [:]
    private var nextBlock = 0
    /// Weak: a block queued on a run loop that never runs again (its thread ended, or never
    /// runs it) must not keep this box, and through it the Realm's notifiers, alive.
    private weak var runLoop: RunLoop?
    private var wakeScheduled = false

    var hasObservers: Bool { lock.withLock { !notifiers.isEmpty || !blocks.isEmpty } }

    func add(_ n: any AnyNotifier) { lock.withLock { notifiers[ObjectIdentifier(n)] = n } }
    func remove(_ n: any AnyNotifier) { _ = lock.withLock { notifiers.removeValue(forKey: ObjectIdentifier(n)) } }
    var all: [any AnyNotifier] { lock.withLock { Array(notifiers.values) } }

    func addBlock(_ block: @escaping Realm.NotificationBlock) -> Int {
        lock.withLock {
            nextBlock += 1
            blocks[nextBlock] = block
            return nextBlock
        }
    }
    func removeBlock(_ id: Int) { _ = lock.withLock { blocks.removeValue(forKey: id) } }

    /// Calls the Realm observer blocks (on the Realm's thread).
    func post(_ n: Realm.Notification, _ realm: Realm) {
        let list = lock.withLock { blocks.sorted { $0.key < $1.key }.map(\.value) }
        for b in list { b(n, realm) }
    }

    /// Remembers the calling thread's run loop (the Realm's thread), to wake it for deliveries.
    func captureRunLoop() { lock.withLock { if runLoop == nil { runLoop = RunLoop.current } } }

    /// Asks the Realm's run loop to run `body` once (if the thread runs its run loop; otherwise
    /// changes wait for the next `refresh()` or write).
    func wake(_ body: @escaping @Sendable () -> Void) {
        let loop: RunLoop? = lock.withLock {
            guard !wakeScheduled, let runLoop else { return nil }
            wakeScheduled = true
            return runLoop
        }
        guard let loop else { return }
        loop.perform { [weak self] in
            guard let self else { return }
            lock.withLock { wakeScheduled = false }
            body()
        }
    }
}

/// A weak reference to a Realm that may cross threads; only used on the Realm's thread (the
/// instance cache's sweep only tests it for nil).
struct WeakRealm: @unchecked Sendable {
    weak var realm: Realm?
}

extension Realm {
    /// Registers a block called when this Realm changes: `.didChange` after it moves to a newer
    /// version (its own writes, `refresh()`, an autorefresh on its run loop), `.refreshRequired`
    /// when a newer version exists and `autorefresh` is off. Called on this Realm's thread.
    ///
    /// ```swift
    /// let token = realm.observe { notification, realm in print(notification) }
    /// ```
    public func observe(_ block: @escaping NotificationBlock) -> NotificationToken {
        if isFrozen { fatalError("Frozen Realms do not change and cannot be observed.") }
        // A Realm's own observers may be added inside a write (as in RealmSwift).
        checkCanRegisterNotifier(inWrite: true)
        let box = notifications
        let id = box.addBlock(block)
        box.captureRunLoop()
        let weak = WeakRealm(realm: self)
        let watcher = VersionWatcher(version: currentSnapshot.version) { box.wake { weak.realm?.deliverFromRunLoop() } }
        let coordinator = handle.coordinator
        coordinator.add(watcher)
        return NotificationToken(notifier: nil) {
            box.removeBlock(id)
            coordinator.remove(watcher)
        }
    }

    /// The versions committed to this file from now on (by any Realm of any process), as an async
    /// sequence of `.didChange`: the Linux stand-in for RealmSwift's Combine publisher of a Realm.
    /// Read the new data through a Realm of the consuming thread or actor (``refresh()`` it).
    public func changes() -> AsyncStream<Notification> {
        checkThread()
        let (stream, continuation) = AsyncStream<Notification>.makeStream()
        let watcher = VersionWatcher(version: store.currentVersion) { continuation.yield(.didChange) }
        let coordinator = handle.coordinator
        coordinator.add(watcher)
        continuation.onTermination = { _ in coordinator.remove(watcher) }
        return stream
    }

    /// Delivers the changes of this thread's notifiers up to the version this Realm reads.
    func deliverNotifications() {
        guard transaction == nil, !isFrozen else { return }
        let list = notifications.all
        guard !list.isEmpty else { return }
        let snap = currentSnapshot
        for n in list { n.deliver(at: snap) }
    }

    /// What the run loop runs when a change is ready: autorefresh (or report that a refresh is
    /// required), then deliver.
    func deliverFromRunLoop() {
        guard transaction == nil, !isFrozen else { return }
        if autorefresh {
            if advanceToNewest() { notifications.post(.didChange, self) }
        } else {
            _ = try? store.refresh()
            if store.currentVersion != snapshot?.version { notifications.post(.refreshRequired, self) }
        }
        deliverNotifications()
    }

    /// Registers a notifier bound to this Realm's thread and starts it at the version this Realm
    /// reads; returns its token.
    func registerThreadNotifier<S, C>(_ logic: NotifierLogic<S, C>, send: @escaping (NotifierEvent<S, C>) -> Void) -> NotificationToken {
        checkCanRegisterNotifier()
        let box = notifications
        box.captureRunLoop()
        let weak = WeakRealm(realm: self)
        let n = Notifier(
            logic: logic, coordinator: handle.coordinator, threadBound: true, wake: { box.wake { weak.realm?.deliverFromRunLoop() } },
            send: send)
        box.add(n)
        n.start(at: currentSnapshot)
        return NotificationToken(notifier: n) {
            box.remove(n)
            n.stop()
        }
    }

    /// Registers a notifier that hands its events on as soon as they are computed (to a queue, an
    /// actor or an async sequence), starting at the newest version.
    func registerImmediateNotifier<S, C>(
        _ logic: NotifierLogic<S, C>, onStop: @escaping @Sendable () -> Void = {}, send: @escaping (NotifierEvent<S, C>) -> Void
    ) -> NotificationToken {
        checkCanRegisterNotifier()
        let n = Notifier(logic: logic, coordinator: handle.coordinator, threadBound: false, send: send)
        do { n.start(at: try store.snapshot(kind: "notifier")) } catch { send(.error(error)) }
        return NotificationToken(notifier: n) {
            n.stop()
            onStop()
        }
    }
}

/// Wakes a Realm's run loop when a newer version appears (for ``Realm/observe(_:)``).
///
/// `@unchecked Sendable`: `version` is guarded by `lock`.
final class VersionWatcher: AnyNotifier, @unchecked Sendable {
    private let lock = Lock()
    private var version: UInt64
    private let wake: @Sendable () -> Void

    init(version: UInt64, wake: @escaping @Sendable () -> Void) {
        self.version = version
        self.wake = wake
    }

    func isBehind(_ v: UInt64) -> Bool { lock.withLock { version < v } }
    func advance(to snapshot: Snapshot) {
        let newer: Bool = lock.withLock {
            defer { version = Swift.max(version, snapshot.version) }
            return version < snapshot.version
        }
        if newer { wake() }
    }
    func deliver(at snapshot: Snapshot) {}
    func skip(parent: Snapshot, committed: Snapshot) {}
    func stop() {}
}

extension Realm {
    /// What every observation checks as it registers (each kind checks frozen values itself,
    /// with its own message): the Realm's thread; RealmSwift's rule that a Realm opened read-only
    /// has no change notifications (observing it, or anything read from it, stops as RealmSwift
    /// throws); and, unless `inWrite`, no open write transaction.
    func checkCanRegisterNotifier(inWrite: Bool = false) {
        checkThread()
        if configuration.readOnly {
            fatalError(
                "Read-only Realms do not have change notifications (as in RealmSwift); open the Realm without readOnly to observe it.")
        }
        if !inWrite && isInWriteTransaction {
            fatalError("Cannot register a notification block inside a write transaction; observe before realm.write { } or after it.")
        }
    }
}
