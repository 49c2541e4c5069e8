import Foundation
import RealmStorage

/// The initializers of ``Realm``.
///
/// As in RealmSwift, opening a Realm returns the instance already open on the file for the
/// calling thread (or the serial queue, or the actor) while that instance is alive, so every part
/// of a program on one thread shares one Realm: its write transaction, its version and its
/// notifications. An object read through one `Realm()` can be changed inside a write on another:
///
/// ```swift
/// func firstDog() throws -> Dog? { try Realm().objects(Dog.self).first }
/// let dog = try firstDog()!
/// let realm = try Realm()  // the instance `dog` belongs to
/// try realm.write { dog.age += 1 }
/// ```
///
/// Initializers are declared here, in a protocol extension, because a Swift class initializer
/// cannot return an existing instance, and an initializer of a protocol extension can.
public protocol RealmInitializers {}

extension Realm: RealmInitializers {
    /// What a live Realm is confined to: the key of the per-file instance cache.
    enum Confinement: Hashable {
        case thread(UInt)
        case queue(ObjectIdentifier)
        case actor(ObjectIdentifier)
    }

    /// The live instance on `configuration`'s file for the calling thread, `queue` or `isolation`,
    /// opening (and caching) one when none is alive.
    /// - Throws: ``Realm/Error`` as ``init(configuration:)``; `.fail` when the cached instance was
    ///   opened with a different `readOnly` or in-memory setting (RealmSwift's "already opened
    ///   with different read permissions").
    static func cached(_ configuration: Configuration, isolation: (any Actor)?, queue: DispatchQueue?) throws -> Realm {
        let confinement: Confinement =
            if let queue { .queue(ObjectIdentifier(queue)) } else if let isolation { .actor(ObjectIdentifier(isolation)) } else {
                .thread(currentThreadIdentity())
            }
        let handle = try StoreHandle.open(configuration)
        if let realm = handle.cachedRealm(confinement) {
            try realm.checkCompatible(configuration)
            return realm
        }
        let realm = try Realm(configuration: configuration, isolation: isolation, queue: queue, handle: handle)
        handle.cache(realm, confinement)
        try realm.attachSync()
        return realm
    }

    /// Throws when `configuration` cannot share this instance, as RealmSwift does.
    private func checkCompatible(_ configuration: Configuration) throws {
        if configuration.readOnly != self.configuration.readOnly {
            throw Realm.Error(.fail, "the Realm is already opened with different read permissions", path: store.path)
        }
        if (configuration.inMemoryIdentifier != nil) != (self.configuration.inMemoryIdentifier != nil) {
            throw Realm.Error(.fail, "the Realm is already opened with different inMemory settings", path: store.path)
        }
    }
}

extension RealmInitializers where Self: Realm {
    /// Opens the default Realm (``Realm/Configuration/defaultConfiguration``), or returns the
    /// calling thread's instance of it.
    /// - Throws: ``Realm/Error``.
    public init() throws {
        self = try Realm.cached(.defaultConfiguration, isolation: nil, queue: nil) as! Self
    }

    /// Opens the Realm `configuration` describes, creating the file and its tables when needed,
    /// checking the model classes against the file's schema and migrating when asked; or returns
    /// the instance already open on that file on the calling thread (see ``RealmInitializers``).
    /// - Throws: ``Realm/Error`` — `.fileNotFound` (read-only and missing), `.invalidDatabase`,
    ///   `.fileFormatUpgradeRequired`, `.schemaMismatch`, `.filePermissionDenied`, `.fileAccess`;
    ///   `.fail` when this thread's instance was opened with a different `readOnly` or in-memory
    ///   setting.
    public init(configuration: Realm.Configuration) throws {
        self = try Realm.cached(configuration, isolation: nil, queue: nil) as! Self
    }

    /// Opens a Realm confined to a serial dispatch queue, or returns the queue's instance: use it
    /// (and its objects) only from blocks running on `queue`, whichever thread runs them.
    /// Notifications observed on it are delivered on `queue`.
    /// - Throws: ``Realm/Error`` as ``init(configuration:)``.
    public init(configuration: Realm.Configuration = .defaultConfiguration, queue: DispatchQueue) throws {
        self = try Realm.cached(configuration, isolation: nil, queue: queue) as! Self
    }

    /// Opens a Realm isolated to `actor`, or returns the actor's instance: use it (and its
    /// objects) only from that actor.
    ///
    /// ```swift
    /// actor Store {
    ///     var realm: Realm!
    ///     func setUp() async throws { realm = try await Realm(configuration: config, actor: self) }
    /// }
    /// ```
    /// - Throws: ``Realm/Error`` as ``init(configuration:)``.
    public init(configuration: Realm.Configuration = .defaultConfiguration, actor: isolated any Actor) async throws {
        self = try Realm.cached(configuration, isolation: actor, queue: nil) as! Self
    }
}
