import Foundation
import RealmStorage

/// A value handed to the one place that uses it, on the thread (queue, actor) it belongs to.
///
/// `@unchecked Sendable`: each use names its confinement — blocks are only called on the
/// observer's queue or actor, Realms only used there.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// The Realm a queue- or actor-delivered observation builds its values in, opened on first use.
///
/// `@unchecked Sendable`: only touched on the observer's queue (or actor).
final class TargetRealm: @unchecked Sendable {
    var realm: Realm?
}

/// How one observable kind (results, a list, an object…) is watched and reported.
///
/// - `logic` computes states and changes from snapshots;
/// - `make` builds the observed value in a given Realm (the observer's queue or actor Realm, or a
///   frozen Realm) at the version of an event, from its state;
/// - `report` turns an event and the value into what the block receives (nil: nothing). The value
///   is built only when the report asks for it: an error event has no state to build it from.
struct Observation<State, Change, Value, Report>: @unchecked Sendable {
    // `@unchecked Sendable`: the closures capture only Sendable descriptions (class infos,
    // queries, keys); they are called on the thread that owns the Realm they are given.
    var logic: NotifierLogic<State, Change>
    var make: (Realm, State) -> Value
    var seed: (Value, State, Snapshot) -> Void = { _, _, _ in }
    var report: (NotifierEvent<State, Change>, () -> Value) -> Report
    /// Whether an event is reported at all (objects have no initial call; sectioned changes no
    /// error case).
    var delivers: (NotifierEvent<State, Change>) -> Bool = { _ in true }

    /// The event's snapshot and state (nil for errors).
    static func parts(_ e: NotifierEvent<State, Change>) -> (Snapshot, State)? {
        switch e {
        case .initial(let s, let st), .update(let s, let st, _): (s, st)
        case .error: nil
        }
    }

    /// Delivers on `queue` when given, else on the observing Realm's thread to `value` itself.
    func observe(_ realm: Realm, on queue: DispatchQueue?, value: Value, _ block: @escaping (Report) -> Void) -> NotificationToken {
        if let queue { return onQueue(realm, queue, block) }
        return onThread(realm, value: value, block)
    }

    /// Delivers on the observing Realm's thread to `value` itself (the live value observed).
    func onThread(_ realm: Realm, value: Value, _ block: @escaping (Report) -> Void) -> NotificationToken {
        realm.registerThreadNotifier(logic) { event in
            if let (snap, state) = Self.parts(event) { seed(value, state, snap) }
            if delivers(event) { block(report(event, { value })) }
        }
    }

    /// Delivers on `queue`, to the value in a Realm confined to that queue and moved to the
    /// event's version.
    func onQueue(_ realm: Realm, _ queue: DispatchQueue, _ block: @escaping (Report) -> Void) -> NotificationToken {
        let config = realm.configuration
        let target = TargetRealm()
        let me = Unchecked(self)
        let blk = Unchecked(block)
        return realm.registerImmediateNotifier(logic) { e in
            let event = Unchecked(e)
            queue.async {
                me.value.deliver(
                    event.value, in: target, open: { try Realm.cached(config, isolation: nil, queue: queue) }, to: blk.value)
            }
        }
    }

    /// Delivers on `actor`, to the value in a Realm isolated to it, in order.
    func onActor<A: Actor>(_ realm: Realm, _ actor: A, _ block: @escaping @Sendable (isolated A, Report) -> Void) -> NotificationToken {
        let config = realm.configuration
        let target = TargetRealm()
        let me = Unchecked(self)
        let (stream, continuation) = AsyncStream<Unchecked<NotifierEvent<State, Change>>>.makeStream()
        Task {
            for await event in stream {
                await Self.deliverIsolated(actor, me, event.value, target, config, block)
            }
        }
        return realm.registerImmediateNotifier(logic, onStop: { continuation.finish() }) { event in
            continuation.yield(Unchecked(event))
        }
    }

    private static func deliverIsolated<A: Actor>(
        _ actor: isolated A, _ me: Unchecked<Self>, _ event: NotifierEvent<State, Change>, _ target: TargetRealm,
        _ config: Realm.Configuration, _ block: @Sendable (isolated A, Report) -> Void
    ) {
        me.value.deliver(event, in: target, open: { try Realm.cached(config, isolation: actor, queue: nil) }, to: { block(actor, $0) })
    }

    /// Moves the target Realm to the event's version, builds the value there and reports it.
    private func deliver(
        _ event: NotifierEvent<State, Change>, in target: TargetRealm, open: () throws -> Realm, to block: (Report) -> Void
    ) {
        guard delivers(event) else { return }
        let realm: Realm
        do {
            if target.realm == nil { target.realm = try open() }
            realm = target.realm!
        } catch {
            return
        }
        guard let (snap, state) = Self.parts(event) else {
            // An error: reported without a value (no report builds one for an error).
            block(report(event, { preconditionFailure("a notification error has no value to report") }))
            return
        }
        realm.advance(to: snap)
        let value = make(realm, state)
        seed(value, state, snap)
        block(report(event, { value }))
    }

    /// An async sequence of reports on frozen values (frozen at each event's version).
    func stream(_ realm: Realm) -> AsyncStream<Report> {
        let template = realm.template
        let me = Unchecked(self)
        let (stream, continuation) = AsyncStream<Report>.makeStream()
        let token = realm.registerImmediateNotifier(logic, onStop: { continuation.finish() }) { event in
            guard me.value.delivers(event) else { return }
            guard let (snap, state) = Self.parts(event) else {
                continuation.finish()
                return
            }
            let frozen = Realm(frozen: snap.retained(kind: "frozen"), template: template)
            let value = me.value.make(frozen, state)
            me.value.seed(value, state, snap)
            // The report holds frozen values only: safe to hand to any task.
            nonisolated(unsafe) let report = me.value.report(event, { value })
            continuation.yield(report)
        }
        let holder = Unchecked(token)
        continuation.onTermination = { _ in holder.value.invalidate() }
        return stream
    }
}
