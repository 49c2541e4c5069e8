/// The order of two changes (Spec/SYNC.md §6.1): by clock, then by client file identity, byte by
/// byte.
public struct OrderKey: Comparable, Hashable, Sendable {
    public var clock: UInt64
    public var clientFileId: [UInt8]

    /// The key of a change made at `clock` by `clientFileId`.
    public init(clock: UInt64, clientFileId: [UInt8]) {
        self.clock = clock
        self.clientFileId = clientFileId
    }

    public static func < (a: OrderKey, b: OrderKey) -> Bool {
        a.clock != b.clock ? a.clock < b.clock : a.clientFileId.lexicographicallyPrecedes(b.clientFileId)
    }
}

/// The conflict rules of Spec/SYNC.md §6, applied in memory: what the store decides for each
/// upload, and the effective changes it records (§6.7). The reference the PostgreSQL store is
/// tested against, and the model of convergence tests.
public struct SyncStoreModel: Equatable, Sendable {
    /// An object's identity: its class and primary key.
    public struct ObjectID: Hashable, Sendable {
        public var className: String
        public var primaryKey: SyncValue

        /// The object of `className` whose primary key is `primaryKey`.
        public init(_ className: String, _ primaryKey: SyncValue) {
            self.className = className
            self.primaryKey = primaryKey
        }
    }

    /// A value and the key of the change that set it (or, for `present == false`, erased it).
    public struct Slot: Equatable, Sendable {
        public var value: SyncValue
        public var present: Bool
        public var key: OrderKey

        /// `value` set (or, with `present == false`, erased) by the change whose key is `key`.
        public init(value: SyncValue, present: Bool = true, key: OrderKey) {
            self.value = value
            self.present = present
            self.key = key
        }
    }

    /// One object: its scalar properties by path (dotted through embedded objects), its lists,
    /// sets (by element) and maps (by key).
    public struct Object: Equatable, Sendable {
        public var created: OrderKey
        public var properties: [String: Slot] = [:]
        public var lists: [String: SyncList] = [:]
        public var listKeys: [String: [ElementId: OrderKey]] = [:]
        public var sets: [String: [SyncValue: Slot]] = [:]
        public var maps: [String: [String: Slot]] = [:]

        /// An object created by the change whose key is `created`, every property at its default.
        public init(created: OrderKey) { self.created = created }
    }

    /// The objects that exist.
    public private(set) var objects: [ObjectID: Object] = [:]
    /// The deleted objects and the key of their deletion.
    public private(set) var tombstones: [ObjectID: OrderKey] = [:]

    /// An empty store.
    public init() {}

    /// Puts one object's stored state in the model: the object (nil when it does not exist) and
    /// the key of its deletion (nil when it has none). A store kept elsewhere (the server's
    /// PostgreSQL tables) loads the objects an upload touches, applies the upload here, and writes
    /// back what ``object(_:)`` and ``tombstone(_:)`` then say.
    public mutating func load(_ id: ObjectID, object: Object?, tombstone: OrderKey?) {
        objects[id] = object
        tombstones[id] = tombstone
    }

    /// The object `id` as the model holds it; nil when it does not exist.
    public func object(_ id: ObjectID) -> Object? { objects[id] }

    /// The key of the deletion of `id`; nil when it was never deleted.
    public func tombstone(_ id: ObjectID) -> OrderKey? { tombstones[id] }

    /// Applies `upload` from `clientFileId` with the rules of §6 and returns its effective changes
    /// (§6.7): what it changed, and the winning state of everything it lost.
    public mutating func apply(_ upload: Upload, from clientFileId: [UInt8]) -> [Instruction] {
        let key = OrderKey(clock: upload.clock, clientFileId: clientFileId)
        var out: [Instruction] = []
        for i in upload.instructions {
            let id = ObjectID(i.className, i.primaryKey)
            func emit(_ op: Instruction.Operation) { out.append(Instruction(i.className, i.primaryKey, op)) }
            switch i.operation {
            case .create:
                guard objects[id] == nil else { continue }
                if let deleted = tombstones[id], !(deleted < key) {
                    emit(.erase)  // created before its deletion: the delete wins
                    continue
                }
                tombstones[id] = nil
                objects[id] = Object(created: key)
                emit(.create)
            case .erase:
                if let o = objects[id], key < o.created {
                    continue  // a delete of an earlier life of the object: the newer creation stands
                }
                objects[id] = nil
                tombstones[id] = max(tombstones[id] ?? key, key)
                emit(.erase)
            default:
                guard var o = objects[id] else {
                    emit(.erase)  // the object is deleted (or never existed): nothing of it stands
                    continue
                }
                Self.apply(i.operation, key, to: &o, emit)
                objects[id] = o
            }
        }
        return out
    }

    private static func apply(_ op: Instruction.Operation, _ key: OrderKey, to o: inout Object, _ emit: (Instruction.Operation) -> Void) {
        switch op {
        case .set(let path, let value):
            let name = path.joined(separator: ".")
            // A property under an embedded object replaced later than this change is not set.
            let ancestors = path.indices.dropLast().map { path[...$0].joined(separator: ".") }
            let newer = ancestors.contains { o.properties[$0].map { key < $0.key } ?? false }
            if !newer, o.properties[name].map({ $0.key < key }) ?? true {
                o.properties[name] = Slot(value: value, present: true, key: key)
                if case .embedded = value {
                    // Replaces the embedded object whole: what was set under it before goes.
                    for k in o.properties.keys where k.hasPrefix(name + ".") && o.properties[k]!.key < key { o.properties[k] = nil }
                }
                emit(.set(path: path, value: value))
            } else {
                emit(.set(path: path, value: o.properties[name]?.value ?? .null))
            }
        case .listInsert(let path, let id, let after, let value):
            let name = path.joined(separator: ".")
            if o.lists[name, default: SyncList()].insert(id, after: after, value) {
                o.listKeys[name, default: [:]][id] = key
                emit(op)
            } else if o.lists[name]?.elements[id] == nil {
                emit(.listErase(path: path, id: id))  // an anchor the store does not have: the element is not kept
            }
        case .listSet(let path, let id, let value):
            let name = path.joined(separator: ".")
            guard let element = o.lists[name]?.elements[id], !element.isErased else {
                emit(.listErase(path: path, id: id))
                return
            }
            if o.listKeys[name]?[id].map({ $0 < key }) ?? true {
                o.lists[name]?.set(id, value)
                o.listKeys[name, default: [:]][id] = key
                emit(op)
            } else {
                emit(.listSet(path: path, id: id, value: element.value))
            }
        case .listErase(let path, let id):
            o.lists[path.joined(separator: "."), default: SyncList()].erase(id)
            emit(op)
        case .setAdd(let path, let value), .setErase(let path, let value):
            let name = path.joined(separator: ".")
            let adding = if case .setAdd = op { true } else { false }
            let current = o.sets[name]?[value]
            if current.map({ $0.key < key }) ?? true {
                o.sets[name, default: [:]][value] = Slot(value: value, present: adding, key: key)
                emit(op)
            } else {
                emit(current!.present ? .setAdd(path: path, value: value) : .setErase(path: path, value: value))
            }
        case .mapSet(let path, let k, _), .mapErase(let path, let k):
            let name = path.joined(separator: ".")
            let current = o.maps[name]?[k]
            if current.map({ $0.key < key }) ?? true {
                if case .mapSet(_, _, let value) = op {
                    o.maps[name, default: [:]][k] = Slot(value: value, present: true, key: key)
                } else {
                    o.maps[name, default: [:]][k] = Slot(value: .null, present: false, key: key)
                }
                emit(op)
            } else {
                emit(current!.present ? .mapSet(path: path, key: k, value: current!.value) : .mapErase(path: path, key: k))
            }
        case .create, .erase, .listState: break  // a list state is never uploaded (Catalog refuses it)
        }
    }
}
