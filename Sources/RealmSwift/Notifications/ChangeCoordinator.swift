import Dispatch
import Foundation
import RealmStorage

/// One per open file per process: learns of new versions — this process's commits at once, other
/// processes' by reading the header every few milliseconds while anything is observed — and
/// computes every notifier's changes on one background queue, off the delivering threads.
///
/// `@unchecked Sendable`: `notifiers` and `timer` are guarded by `lock`; computation runs
/// serially on `queue`.
final class ChangeCoordinator: @unchecked Sendable {
    let store: Store
    let queue = DispatchQueue(label: "RealmSwift.notifications", qos: .userInitiated)
    private let lock = Lock()
    private var notifiers: [ObjectIdentifier: any AnyNotifier] = [:]
    private var timer: DispatchSourceTimer?
    /// How often the header is read for other processes' commits while anything is observed.
    static let pollInterval = DispatchTimeInterval.milliseconds(5)

    init(store: Store) { self.store = store }

    func add(_ n: any AnyNotifier) {
        lock.withLock {
            notifiers[ObjectIdentifier(n)] = n
            if timer == nil {
                let t = DispatchSource.makeTimerSource(queue: queue)
                t.schedule(deadline: .now() + Self.pollInterval, repeating: Self.pollInterval, leeway: .milliseconds(1))
                t.setEventHandler { [weak self] in self?.run() }
                t.resume()
                timer = t
            }
        }
    }

    func remove(_ n: any AnyNotifier) {
        lock.withLock {
            notifiers[ObjectIdentifier(n)] = nil
            if notifiers.isEmpty {
                timer?.cancel()
                timer = nil
            }
        }
    }

    /// A commit in this process: compute the changes now.
    func versionAdvanced() {
        guard lock.withLock({ !notifiers.isEmpty }) else { return }
        queue.async { self.run() }
    }

    /// Runs `body` on the coordinator's queue (for initial evaluations).
    func async(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

    private func run() {
        _ = try? store.refresh()
        let version = store.currentVersion
        let list = lock.withLock { Array(notifiers.values) }
        guard list.contains(where: { $0.isBehind(version) }) else { return }
        guard let snapshot = try? store.snapshot(kind: "notifier") else { return }
        for n in list { n.advance(to: snapshot) }
    }
}

/// The notifier operations the coordinator and the Realms use, whatever the state they keep.
protocol AnyNotifier: AnyObject, Sendable {
    /// Whether the notifier has not yet looked at `version`.
    func isBehind(_ version: UInt64) -> Bool
    /// Computes the change up to `snapshot` (on the coordinator's queue).
    func advance(to snapshot: Snapshot)
    /// Delivers what is pending up to `snapshot`, computing it now if needed (on the observing
    /// Realm's thread; for thread-bound notifiers).
    func deliver(at snapshot: Snapshot)
    /// Skips the commit `committed` (whose parent is `parent`): changes up to `parent` are still
    /// reported, that commit's are not (``Realm/write(withoutNotifying:_:)``).
    func skip(parent: Snapshot, committed: Snapshot)
    /// Stops for good.
    func stop()
}

/// What a notifier's compute step found.
struct NotifierOutcome<State, Change> {
    var state: State
    /// Nil: nothing to report.
    var change: Change?
    /// The observed thing is gone (a deleted object): deliver and stop.
    var isFinal = false
}

/// How a notifier finds its state and changes; every closure runs off the delivering thread (or,
/// for thread-bound catch-up, on it) and reads only the snapshots it is given.
struct NotifierLogic<State, Change>: @unchecked Sendable {
    // `@unchecked Sendable`: the closures capture only Sendable values (table names, queries,
    // key paths); States are value types handed between threads under the notifier's lock.
    /// Tables whose changes can matter (nil: every table).
    var tables: Set<String>?
    var initial: (Snapshot) throws -> State
    var compute: (_ old: Snapshot, _ state: State, _ new: Snapshot, _ changes: Changeset) throws -> NotifierOutcome<State, Change>
}

/// An event for a notifier's block.
enum NotifierEvent<State, Change> {
    case initial(Snapshot, State)
    case update(Snapshot, State, Change)
    case error(Swift.Error)
}

/// One registered observation: the version and state it last reported (pinning that version),
/// how to compute changes from there, and how to hand them on.
///
/// Two modes: *immediate* notifiers (a queue, an actor, an async sequence) hand every computed
/// event to `send` on the coordinator's queue; *thread-bound* notifiers (the observing Realm's
/// thread) keep the newest computed event pending — later commits coalesce into it — until the
/// Realm delivers it on its thread (`refresh()`, a write, or its run loop).
///
/// `@unchecked Sendable`: `base`, `pending` and `stopped` are guarded by `lock`.
final class Notifier<State, Change>: AnyNotifier, @unchecked Sendable {
    typealias Event = NotifierEvent<State, Change>
    let logic: NotifierLogic<State, Change>
    let coordinator: ChangeCoordinator
    private let lock = Lock()
    private var base: (snapshot: Snapshot, state: State)?
    private var pending: (event: Event, base: (snapshot: Snapshot, state: State))?
    private var stopped = false
    private let threadBound: Bool
    /// Hands an event to the observer (immediate: any thread; thread-bound: the Realm's thread).
    private let send: (Event) -> Void
    /// Wakes the observing thread (thread-bound).
    private let wake: (() -> Void)?

    init(
        logic: NotifierLogic<State, Change>, coordinator: ChangeCoordinator, threadBound: Bool, wake: (() -> Void)? = nil,
        send: @escaping (Event) -> Void
    ) {
        self.logic = logic
        self.coordinator = coordinator
        self.threadBound = threadBound
        self.wake = wake
        self.send = send
    }

    /// Computes the initial state at `snapshot` in the background and delivers (immediate) or
    /// keeps (thread-bound) the `.initial` event.
    func start(at snapshot: Snapshot) {
        coordinator.add(self)
        coordinator.async { [self] in
            let (event, newBase) = initial(at: snapshot)
            let deliverNow: Bool = lock.withLock {
                guard !stopped, base == nil else { return false }
                if threadBound {
                    if let newBase { pending = (event, newBase) }
                    return false
                }
                if let newBase { base = newBase } else { stopped = true }
                return true
            }
            if deliverNow { send(event) } else if threadBound { wake?() }
            if case .error = event { coordinator.remove(self) }
        }
    }

    func isBehind(_ version: UInt64) -> Bool {
        lock.withLock { !stopped && (base.map { $0.snapshot.version < version } ?? false) }
    }

    /// The `.initial` event at `snapshot` and the base it makes, or the `.error` event and no base.
    private func initial(at snapshot: Snapshot) -> (Event, (Snapshot, State)?) {
        do {
            let s = try logic.initial(snapshot)
            return (.initial(snapshot, s), (snapshot, s))
        } catch {
            return (.error(error), nil)
        }
    }

    /// The event from `from` to `snapshot`, and the new base (nil event: nothing to report).
    private func compute(from b: (snapshot: Snapshot, state: State), to snapshot: Snapshot) -> (Event?, (Snapshot, State), Bool) {
        do {
            let changes = try snapshot.changes(since: b.snapshot.version)
            if !changes.schemaChanged, let tables = logic.tables, !changes.tables.keys.contains(where: tables.contains) {
                return (nil, (snapshot, b.state), false)
            }
            let o = try logic.compute(b.snapshot, b.state, snapshot, changes)
            return (o.change.map { .update(snapshot, o.state, $0) }, (snapshot, o.state), o.isFinal)
        } catch {
            return (.error(error), b, true)
        }
    }

    func advance(to snapshot: Snapshot) {
        guard let b = lock.withLock({ stopped ? nil : base }), b.snapshot.version < snapshot.version else { return }
        let (event, newBase, isFinal) = compute(from: b, to: snapshot)
        let deliver: Bool = lock.withLock {
            // Superseded while computing (a skip or a thread-bound catch-up).
            guard !stopped, let current = base, current.snapshot.version == b.snapshot.version else { return false }
            if threadBound {
                if let event {
                    pending = (event, newBase)
                    return true
                }
                if pending == nil { base = newBase }
                return false
            }
            base = newBase
            if isFinal { stopped = true }
            return event != nil
        }
        guard deliver, let event else { return }
        if threadBound { wake?() } else { send(event) }
        if isFinal && !threadBound { coordinator.remove(self) }
    }

    func deliver(at snapshot: Snapshot) {
        guard threadBound else { return }
        let (event, isFinal): (Event?, Bool) = lock.withLock {
            guard !stopped else { return (nil, false) }
            var event: Event?
            var isFinal = false
            if let p = pending, p.base.snapshot.version == snapshot.version {
                event = p.event
                base = p.base
                if case .error = p.event { isFinal = true }
            } else if let b = base {
                // The initial state was delivered; a pending event for another version is stale.
                if b.snapshot.version < snapshot.version {
                    let (e, newBase, final) = compute(from: b, to: snapshot)
                    event = e
                    base = newBase
                    isFinal = final
                }
            } else {
                // The initial state is not computed yet, or was computed at another version.
                let (e, newBase) = initial(at: snapshot)
                event = e
                base = newBase
                isFinal = newBase == nil
            }
            pending = nil
            if isFinal { stopped = true }
            return (event, isFinal)
        }
        if let event { send(event) }
        if isFinal { coordinator.remove(self) }
    }

    func skip(parent: Snapshot, committed: Snapshot) {
        let before: Event? = lock.withLock {
            guard !stopped, let b = base else { return nil }
            var before: Event?
            if !threadBound, b.snapshot.version < parent.version {
                before = compute(from: b, to: parent).0
            }
            pending = nil
            if let s = try? logic.initial(committed) { base = (committed, s) }
            return before
        }
        if let before { send(before) }
    }

    func stop() {
        lock.withLock {
            stopped = true
            pending = nil
            base = nil
        }
        coordinator.remove(self)
    }
}
