import Foundation
import RealmStorage
import Synchronization

/// A Realm: one database file, opened at one version, with its objects, queries and write
/// transactions.
///
/// ```swift
/// final class Dog: Object {
///     @Persisted var name = ""
///     @Persisted var age = 0
/// }
/// let realm = try Realm()
/// try realm.write { realm.add(Dog(value: ["name": "Rex", "age": 3])) }
/// print(realm.objects(Dog.self).count)
/// ```
///
/// A live Realm is confined to the thread that opened it; using it (or its objects) on another
/// thread stops the process with a message. Pass objects on with ``ThreadSafeReference`` or
/// ``freeze()``.
public final class Realm {
    /// How this Realm was opened.
    public let configuration: Configuration
    package let store: Store
    /// The version this Realm reads (outside a write transaction).
    var snapshot: Snapshot? {
        // The table readers of another version go with it (each pins its version).
        didSet { if snapshot?.version != caches.readersVersion { dropReaders() } }
    }
    /// The open write transaction, if any.
    var transaction: WriteTransaction?
    /// Changes with every mutation and every version change; collections and accessors cache
    /// against it (kept in ``ReadState``).
    package var stamp: Int {
        get { readState.stamp.load(ordering: .relaxed) }
        set { readState.stamp.store(newValue, ordering: .relaxed) }
    }
    /// The stamp and the confined thread, shared with this Realm's row-group views (the accessors'
    /// direct read path reads them there, without the Realm).
    let readState: ReadState
    /// Bumped by ``invalidate()``: objects and results made before it are invalidated.
    var generation = 0
    let threadID: UInt
    /// `threadID` when the Realm is confined to that thread alone (not to a queue or an actor, not
    /// frozen), else 0: the accessors' fast check (``checkThread()`` does the others).
    var confinedThread: UInt { readState.confinedThread }
    /// What the accessors' direct read path needs of a Realm: its stamp (an atomic read with
    /// relaxed ordering is a plain load, and needs no dynamic exclusivity check; only the Realm's
    /// thread changes it, and frozen Realms never do) and the thread it is confined to.
    final class ReadState: Sendable {
        let stamp = Atomic(0)
        let confinedThread: UInt
        init(confinedThread: UInt) { self.confinedThread = confinedThread }
    }

    /// The actor this Realm is isolated to (``init(configuration:actor:)``), if any. Held weakly:
    /// an actor that keeps its Realm in a property (the usual pattern) is not kept alive by it.
    weak let isolation: (any Actor)?
    /// Whether this Realm was opened isolated to an actor (which may since have been released).
    let isActorIsolated: Bool
    /// The serial queue this Realm is confined to (``init(configuration:queue:)``), if any.
    let queue: DispatchQueue?
    /// Thread-bound notifiers, Realm observers and the run loop to wake for them.
    let notifications = RealmNotifications()
    let handle: StoreHandle
    /// Classes checked against the file's schema, by class.
    var verified: Set<ObjectIdentifier> = []
    /// The update policy of the `add` in progress (linked objects are added with the same one).
    var addPolicy: UpdatePolicy = .error
    /// Model classes by table name (the configuration's and those used so far).
    var known: [String: ClassInfo] = [:]
    /// What reads and inserts keep between calls (``Caches``): a live Realm is confined to one
    /// thread, so they need no lock.
    var caches = Caches()

    /// What this Realm's reads and inserts remember between calls so that a run of them on one
    /// class does its lookups once; none of it is state a user sees.
    struct Caches {
        /// The last class looked up by type, and the last one found verified.
        var lastClass: (type: ObjectIdentifier, info: ClassInfo)?
        var lastVerified: ClassInfo?
        /// Insert layouts by class, with the table columns each was made for.
        var layouts: [ObjectIdentifier: (columns: [ColumnSchema], slots: [LayoutSlot])] = [:] {
            didSet { if layouts.isEmpty { lastInsert = nil } }
        }
        /// The class of the last `add` in this write transaction, whose table exists, and its
        /// layout: a run of adds of one class checks its table once (forgotten when a write
        /// transaction begins, with `layouts` and on `bump()`).
        var lastInsert: InsertLayout?
        /// The row buffer `add` builds each new object's row in (see ``Realm/insert(_:_:providedOnly:)``).
        var insertRow: [StorageValue] = []
        /// Table readers of the current snapshot, by class description, and that snapshot's version.
        var readers: [ObjectIdentifier: BoundReader] = [:]
        var readersVersion: UInt64 = 0
        /// The reader asked for last (most reads and lookups ask for one class many times in a row).
        var lastReader: (info: ClassInfo, reader: BoundReader)?
        /// The class and reader of the last lookup by an `Int` primary key outside a write (one
        /// object to load: the lookup then retains nothing else); dropped with the readers.
        var primaryKeyShortcut: PrimaryKeyShortcut?
        /// Dynamic class descriptions by table name, with the table schema they were built from.
        var dynamicInfos: [String: (TableSchema, ClassInfo)] = [:]
    }
    /// Whether this Realm reads one fixed version (see ``freeze()``).
    public let isFrozen: Bool
    /// Whether this Realm refreshes itself; without a run loop, versions advance on `refresh()`
    /// and at the start of each write.
    public var autorefresh = true

    init(configuration: Configuration, isolation: (any Actor)?, queue: DispatchQueue?, handle: StoreHandle) throws {
        self.configuration = configuration
        self.isolation = isolation
        self.isActorIsolated = isolation != nil
        self.queue = queue
        self.threadID = currentThreadIdentity()
        self.readState = ReadState(confinedThread: isolation == nil && queue == nil ? threadID : 0)
        self.handle = handle
        self.store = handle.store
        self.isFrozen = false
        self.snapshot = try realmErrors { try store.snapshot(kind: "realm") }
        try SchemaSetup.run(self)
    }

    /// A Realm that reads `snapshot` forever.
    convenience init(frozen snapshot: Snapshot, of realm: Realm) {
        self.init(frozen: snapshot, template: realm.template)
    }

    /// A Realm that reads `snapshot` forever, made from a template taken on a live Realm's thread.
    init(frozen snapshot: Snapshot, template: Template) {
        self.configuration = template.configuration
        self.isolation = nil
        self.isActorIsolated = false
        self.queue = nil
        self.threadID = currentThreadIdentity()
        self.readState = ReadState(confinedThread: 0)
        self.handle = template.handle
        self.store = template.handle.store
        self.snapshot = snapshot
        self.isFrozen = true
        self.verified = template.verified
        self.known = template.known
    }

    /// What a frozen Realm needs of the live Realm it comes from; Sendable, so frozen Realms can
    /// be made on other threads (notifications as async sequences).
    struct Template: Sendable {
        let configuration: Configuration
        let handle: StoreHandle
        let verified: Set<ObjectIdentifier>
        let known: [String: ClassInfo]
    }

    var template: Template { Template(configuration: configuration, handle: handle, verified: verified, known: known) }

    /// The stamp objects placed in `version` read directly under (``ObjectBase/_rlmReadDirect(_:_:)``):
    /// the current stamp while this live Realm reads `version` outside a write transaction, else -1
    /// (the general read path).
    func directReadStamp(_ version: UInt64) -> Int {
        transaction == nil && !isFrozen && snapshot?.version == version ? stamp : -1
    }

    /// Moves to `snapshot` when it is newer than the version this Realm reads (notification
    /// delivery to a queue's or an actor's Realm).
    func advance(to s: Snapshot) {
        guard transaction == nil, !isFrozen, (snapshot?.version ?? 0) < s.version else { return }
        snapshot = s.retained(kind: "realm")
        stamp += 1
    }

    /// A live Realm on this frozen Realm's file: the calling thread's instance, the one
    /// `Realm(configuration:)` returns there (so what is thawed advances with it). As in RealmSwift
    /// it does not throw: if the file cannot be opened again it stops with the reason;
    /// ``checkedThaw()`` throws instead.
    public func thaw() -> Realm {
        do {
            return try checkedThaw()
        } catch {
            fatalError("Cannot thaw the Realm: \(error)")
        }
    }

    /// ``thaw()`` that throws.
    /// - Throws: ``Realm/Error`` when the file cannot be opened.
    public func checkedThaw() throws -> Realm {
        if !isFrozen { return self }
        return try Realm.cached(configuration, isolation: nil, queue: nil)
    }

    /// A frozen copy of this Realm: it reads the current version forever (pinning it until the
    /// copy and the objects read from it are gone).
    public func freeze() -> Realm {
        checkThread()
        if isFrozen { return self }
        if configuration.readOnly {
            fatalError("A read-only Realm cannot be frozen (as RealmSwift documents); read it directly, or open it without readOnly.")
        }
        if transaction != nil {
            fatalError("Cannot freeze during a write transaction; commit or cancel it first (frozen data reads committed versions only).")
        }
        return Realm(frozen: currentSnapshot.retained(kind: "frozen"), of: self)
    }

    // MARK: Thread confinement

    @inline(__always)
    func checkThread() {
        if isFrozen { return }
        if let queue {
            dispatchPrecondition(condition: .onQueue(queue))
            return
        }
        if isActorIsolated {
            guard let isolation else { fatalError("Realm accessed after the actor it is isolated to was released.") }
            isolation.preconditionIsolated(
                "Realm accessed from outside the actor it is isolated to; use freeze() or ThreadSafeReference to pass objects on.")
            return
        }
        if currentThreadIdentity() != threadID {
            fatalError(
                "Realm accessed from a thread other than the one that opened it; use freeze() or ThreadSafeReference to pass objects between threads."
            )
        }
    }

    // MARK: Versions

    /// The snapshot to read outside a transaction, re-reading it after `invalidate()`.
    var currentSnapshot: Snapshot {
        if let snapshot { return snapshot }
        do {
            let s = try store.snapshot(kind: "realm")
            snapshot = s
            stamp += 1
            return s
        } catch {
            readFailed(error, reading: "its file")
        }
    }

    /// Stops the process because reading `what` failed (damage or an I/O error) where no error can
    /// be thrown: a property's getter, an iteration, a count. RealmSwift raises an exception there,
    /// which ends the process too. The failure is logged first (`.critical`, through
    /// ``Configuration/logger``); the message names the file and, for damage, the byte offset and
    /// `realm-dump --verify`. Nothing is written to the file.
    func readFailed(_ error: any Swift.Error, reading what: String) -> Never {
        fatalError("Realm " + store.readFailed(error, reading: what))
    }

    /// Advances to the newest version. Returns whether anything changed.
    /// Delivers pending notifications of this Realm's thread (see ``observe(_:)``).
    @discardableResult
    public func refresh() -> Bool {
        checkThread()
        guard transaction == nil, !isFrozen else { return false }
        let advanced = advanceToNewest()
        if advanced { notifications.post(.didChange, self) }
        deliverNotifications()
        return advanced
    }

    /// Moves to the newest version; returns whether it changed.
    func advanceToNewest() -> Bool {
        _ = try? store.refresh()
        guard store.currentVersion != snapshot?.version else { return false }
        snapshot = nil
        _ = currentSnapshot
        return true
    }

    /// Releases the version this Realm reads; the next access reads the newest one. Objects and
    /// results obtained before are invalidated (results read as empty; reading an object's property
    /// stops with a message), as in RealmSwift.
    public func invalidate() {
        checkThread()
        if isFrozen { return }
        if transaction != nil { cancelWrite() }
        snapshot = nil
        generation += 1
        stamp += 1
    }

    /// The number of distinct versions pinned in the file (by every process).
    public var numberOfActiveVersions: Int { store.numberOfActiveVersions }

    /// Whether the Realm holds no objects.
    public var isEmpty: Bool {
        checkThread()
        return catalog.tables.allSatisfy { t in t.name.hasPrefix("__") || ((try? objectCount(t.name)) ?? 0) == 0 }
    }

    /// The schema of the file as this Realm sees it.
    public var schema: Schema { SchemaSetup.schema(of: catalog, known: known) }

    var catalog: Catalog { transaction?.catalog ?? currentSnapshot.catalog }

    // MARK: Transactions

    /// Whether a write transaction is open.
    public var isInWriteTransaction: Bool { transaction != nil }

    /// Runs `block` in a write transaction and commits it; when `block` throws, every change is
    /// rolled back and the error rethrown. The blocks of `tokens` are not told about this write.
    /// - Throws: what `block` throws, or ``Realm/Error`` from the commit.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [], _ block: () throws -> Result) throws -> Result {
        try checkedBeginWrite()
        return try finishWrite(tokens, block)
    }

    /// Runs `block` inside the open transaction and commits it, or rolls back when it throws.
    func finishWrite<Result>(_ tokens: [NotificationToken] = [], _ block: () throws -> Result) throws -> Result {
        let result: Result
        do {
            result = try block()
        } catch {
            if isInWriteTransaction { cancelWrite() }
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens) }
        return result
    }

    /// Starts a write transaction, waiting for other writers (threads and processes) and advancing
    /// to the newest version. As in RealmSwift it does not throw: on a read-only Realm, or when the
    /// transaction cannot be opened (an I/O error, a damaged file), it stops with the reason;
    /// ``checkedBeginWrite()`` throws instead.
    public func beginWrite() {
        do {
            try checkedBeginWrite()
        } catch {
            fatalError("Cannot begin a write transaction: \(error)")
        }
    }

    /// ``beginWrite()`` that throws.
    /// - Throws: ``Realm/Error`` — `.readOnly`, I/O errors.
    public func checkedBeginWrite() throws {
        checkThread()
        guard transaction == nil else {
            fatalError("The Realm is already in a write transaction; commit or cancel it before beginning another.")
        }
        if isFrozen { fatalError("Can't perform transactions on a frozen Realm; use thaw() or the live Realm.") }
        if configuration.readOnly { throw Realm.Error(.readOnly, "the Realm was opened read-only", path: store.path) }
        // Observers on this thread see every earlier version before the write begins.
        if notifications.hasObservers { refresh() }
        let tx = try realmErrors { try store.beginWrite() }
        transaction = tx
        caches.lastInsert = nil
        if snapshot?.version != tx.baseVersion { snapshot = try? store.snapshot(kind: "realm") }
        stamp += 1
    }

    /// Commits the open write transaction, making it durable.
    /// - Throws: ``Realm/Error`` — `.maximumNumberOfActiveVersionsExceeded` (checked before anything
    ///   is written), I/O errors; either way the transaction is rolled back.
    public func commitWrite() throws {
        try commitWrite(withoutNotifying: [])
    }

    /// Commits the open write transaction; the blocks of `tokens` are not told about its changes
    /// (their later changes are).
    /// - Throws: as ``commitWrite()``.
    public func commitWrite(withoutNotifying tokens: [NotificationToken]) throws {
        checkThread()
        guard let tx = transaction else { fatalError("Cannot commit a write transaction: none is open. Call beginWrite() first.") }
        do {
            // Only the tokens' skip needs the version this Realm read: it goes while the commit's
            // sync is in flight (read again on demand if the commit fails).
            let parent = tokens.isEmpty ? nil : snapshot
            for hook in handle.commitHooks.withLock({ $0 }) { hook(tx) }
            let s = try tx.commit(whileSyncing: { snapshot = nil })
            transaction = nil
            snapshot = s
            stamp += 1
            if let parent {
                for t in tokens { t.notifier?.skip(parent: parent, committed: s) }
            }
            handle.coordinator.versionAdvanced()
            handle.localCommitted()
            notifications.post(.didChange, self)
        } catch let e as StorageError {
            transaction = nil
            tx.cancel()
            stamp += 1
            throw Realm.Error(e)
        }
    }

    /// Abandons every change of the open write transaction.
    public func cancelWrite() {
        checkThread()
        guard let tx = transaction else { fatalError("Cannot cancel a write transaction: none is open. Call beginWrite() first.") }
        tx.cancel()
        transaction = nil
        stamp += 1
    }

    func requireWrite(_ what: String = "modify managed objects") -> WriteTransaction {
        checkThread()
        guard let tx = transaction else {
            fatalError("Cannot \(what) outside of a write transaction; wrap the change in realm.write { } or call beginWrite() first.")
        }
        return tx
    }

    // MARK: Copies and files

    /// Writes a compacted copy of the current version to `fileURL` (which must not exist).
    /// - Throws: ``Realm/Error`` — `.fileExists`, I/O errors.
    public func writeCopy(toFile fileURL: URL) throws {
        checkThread()
        guard !FileManager.default.fileExists(atPath: fileURL.path) else {
            throw Realm.Error(.fileExists, "the destination already exists", path: fileURL.path)
        }
        try realmErrors { _ = try store.compact(to: fileURL.path) }
    }

    /// Deletes the Realm file of `config` and its lock file.
    /// - Returns: whether a file existed.
    /// - Throws: ``Realm/Error`` `.inUse` while the file is open (in this process or another).
    @discardableResult
    public static func deleteFiles(for config: Configuration) throws -> Bool {
        let path = config.path
        if StoreHandle.isOpen(path) {
            throw Realm.Error(.inUse, "the Realm is open in this process; close every instance first", path: path)
        }
        if FileManager.default.fileExists(atPath: path + ".lock"),
            let s = try? Store.open(at: path, options: .init(readOnly: true)), (try? s.isOpenElsewhere()) == true
        {
            throw Realm.Error(.inUse, "the Realm is open in another process", path: path)
        }
        let existed = FileManager.default.fileExists(atPath: path)
        for p in [path, path + ".lock", path + ".creating", path + ".compacting"] { try? FileManager.default.removeItem(atPath: p) }
        return existed
    }
}

/// How `Realm/add(_:update:)` treats an object whose primary key already exists.
public enum UpdatePolicy: Int, Sendable {
    /// Fail with `Realm.Error.primaryKeyExists`.
    case error = 1
    /// Update only the properties whose values differ.
    case modified = 3
    /// Overwrite every property.
    case all = 2
}

/// One open store per file per process, shared by every Realm instance on that file.
///
/// `Sendable`: immutable; the registry lives in a `Locked`.
final class StoreHandle: Sendable {
    let store: Store
    let path: String
    let inMemory: Bool
    /// Computes and dispatches the change notifications of every Realm on this file.
    let coordinator: ChangeCoordinator
    /// Who is told of every commit a Realm of this process makes (a sync client, ``RealmFileLink``).
    let commitObservers = Locked<[@Sendable () -> Void]>([])

    /// Run inside every commit a Realm of this process makes, just before it (a sync client adds
    /// the commit's upload to it, ``RealmFileLink``).
    let commitHooks = Locked<[@Sendable (WriteTransaction) -> Void]>([])

    /// Tells the commit observers of a Realm's commit.
    func localCommitted() {
        let observers = commitObservers.withLock { $0 }
        for o in observers { o() }
    }

    private static let open = Locked<[String: Weak]>([:])
    /// The live Realm instances on this file by what they are confined to: what
    /// `Realm(configuration:)` returns again there while the instance is alive (RealmSwift's
    /// per-thread cache).
    ///
    /// The weak references move each Realm's reference count to a side table, which makes its
    /// retains and releases take the runtime's slower path; accessors therefore read through the
    /// Realm's row-group views and retain the Realm once per object, not per property read.
    private let instances = Locked<(realms: [Realm.Confinement: WeakRealm], sweepAt: Int)>(([:], 16))

    /// The live Realm on this file confined to `confinement`, if one is still alive.
    func cachedRealm(_ confinement: Realm.Confinement) -> Realm? {
        instances.withLock { $0.realms[confinement]?.realm }
    }

    /// Whether a Realm on this file other than `realm` is alive in the process.
    func hasLiveRealm(otherThan realm: Realm) -> Bool {
        // The instances are released outside the lock (the last release runs a deinitializer).
        let alive = instances.withLock { r in r.realms.values.compactMap(\.realm) }
        return alive.contains { $0 !== realm }
    }

    /// Records `realm` as the instance confined to `confinement`. Entries of instances no longer
    /// alive (threads that ended, queues released) are swept when the table has doubled since the
    /// last sweep, so it stays bounded in a process that runs for months.
    func cache(_ realm: Realm, _ confinement: Realm.Confinement) {
        instances.withLock { r in
            r.realms[confinement] = WeakRealm(realm: realm)
            if r.realms.count >= r.sweepAt {
                r.realms = r.realms.filter { $0.value.realm != nil }
                r.sweepAt = max(16, 2 * r.realms.count)
            }
        }
    }

    struct Weak: @unchecked Sendable {
        // Only read and written under the registry's lock.
        weak var value: StoreHandle?
    }

    private init(store: Store, path: String, inMemory: Bool) {
        self.store = store
        self.path = path
        self.inMemory = inMemory
        self.coordinator = ChangeCoordinator(store: store)
    }

    deinit {
        let p = path
        let inMemory = self.inMemory
        Self.open.withLock { r in
            if r[p]?.value == nil { r[p] = nil }
        }
        if inMemory { for f in [p, p + ".lock"] { try? FileManager.default.removeItem(atPath: f) } }
    }

    static func isOpen(_ path: String) -> Bool { open.withLock { $0[path]?.value != nil } }

    static func open(_ config: Realm.Configuration) throws -> StoreHandle {
        let path = config.path
        return try open.withLock { r in
            if let h = r[path]?.value { return h }
            let inMemory = config.inMemoryIdentifier != nil
            if inMemory { for f in [path, path + ".lock"] { try? FileManager.default.removeItem(atPath: f) } }
            if config.readOnly && !FileManager.default.fileExists(atPath: path) {
                throw Realm.Error(.fileNotFound, "no Realm file exists at the path (opened read-only)", path: path)
            }
            var options = Store.Options(create: !config.readOnly, readOnly: config.readOnly)
            options.maximumNumberOfActiveVersions = config.maximumNumberOfActiveVersions.map { Int($0) }
            options.compaction = config.compactionPolicy
            options.logger = config.logger
            if let should = config.shouldCompactOnLaunch, !config.readOnly, FileManager.default.fileExists(atPath: path) {
                try compactIfAsked(path, should)
            }
            let store = try realmErrors { try Store.open(at: path, options: options) }
            let h = StoreHandle(store: store, path: path, inMemory: inMemory)
            r[path] = Weak(value: h)
            return h
        }
    }

    private static func compactIfAsked(_ path: String, _ should: @Sendable (Int, Int) -> Bool) throws {
        let store = try realmErrors { try Store.open(at: path, options: .init()) }
        let snap = try realmErrors { try store.snapshot() }
        let total = snap.fileLength
        let used = Int(snap.liveBytes)
        guard should(total, used), try !store.isOpenElsewhere() else { return }
        try realmErrors { _ = try store.compact() }
    }
}
