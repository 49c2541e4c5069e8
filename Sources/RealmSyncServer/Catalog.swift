import RealmSyncProtocol

/// The synced schema as the store has it (`_sync_schema`): every class with its primary key and
/// properties. Schemas only grow (Spec/SYNC.md §4.1).
struct Catalog: Sendable {
    var classes: [String: SyncClass] = [:]

    /// The property `name` of `className`, if the store has it.
    func property(_ className: String, _ name: String) -> SyncClass.Property? {
        classes[className]?.properties.first { $0.name == name }
    }

    /// The tag of `className`'s primary keys.
    func keyTag(_ className: String) -> UInt8? { classes[className]?.primaryKeyTag }

    /// What `incoming` adds to this catalog, or the failure that refuses it: a class or property
    /// the server cannot store, or one the store has with another type.
    func additions(for incoming: [SyncClass]) throws(SessionFailure) -> [SyncClass] {
        var added: [SyncClass] = []
        let known = incoming.reduce(into: classes) { $0[$1.name] = $0[$1.name] ?? $1 }
        for c in incoming {
            guard SQLMapping.isValidName(c.name) else {
                throw .invalidSchema(
                    "the class name \"\(c.name)\" cannot be synced (letters, digits and _, at most 56 bytes, not starting with _sync)")
            }
            guard c.isEmbedded || SQLMapping.primaryKeyTags.contains(c.primaryKeyTag) else {
                throw .invalidSchema("\(c.name)._id has a type that cannot be a synced primary key (int, string, objectId or uuid)")
            }
            var newProperties: [SyncClass.Property] = []
            for p in c.properties {
                guard SQLMapping.isValidName(p.name) else { throw .invalidSchema("the property name \(c.name).\(p.name) cannot be synced") }
                guard [0, 2, 4, 8].contains(p.flags & 0b1110) else {
                    throw .invalidSchema("\(c.name).\(p.name) has flags \(p.flags) that name more than one kind of collection")
                }
                if p.valueTag == 12 || p.valueTag == 13 {
                    guard let target = known[p.linkTarget], target.isEmbedded == (p.valueTag == 13) else {
                        throw .invalidSchema(
                            "\(c.name).\(p.name) links to \(p.linkTarget), which is not in the schema as \(p.valueTag == 13 ? "an embedded" : "a top-level") class"
                        )
                    }
                    guard p.valueTag == 12 || p.flags & 4 == 0 else {
                        throw .invalidSchema("\(c.name).\(p.name) is a set of embedded objects")
                    }
                } else if SQLMapping.columnType(tag: p.valueTag) == nil {
                    throw .invalidSchema("\(c.name).\(p.name) has a type (tag \(p.valueTag)) this server does not sync yet")
                }
                if let existing = property(c.name, p.name) {
                    guard existing.valueTag == p.valueTag || (existing.valueTag <= 2 && p.valueTag <= 2 && p.valueTag > 0),
                        existing.flags == p.flags, existing.linkTarget == p.linkTarget
                    else {
                        throw .schemaMismatch("\(c.name).\(p.name) is stored with another type or optionality")
                    }
                } else {
                    newProperties.append(p)
                }
            }
            if let existing = classes[c.name] {
                guard existing.isEmbedded == c.isEmbedded, c.isEmbedded || existing.primaryKeyTag == c.primaryKeyTag else {
                    throw .schemaMismatch("\(c.name) is stored with another primary key type, or embedded where it is not (or the reverse)")
                }
                if !newProperties.isEmpty {
                    added.append(
                        SyncClass(c.name, primaryKeyTag: existing.primaryKeyTag, isEmbedded: c.isEmbedded, properties: newProperties))
                }
            } else {
                added.append(
                    SyncClass(
                        c.name, primaryKeyTag: c.isEmbedded ? 0 : c.primaryKeyTag, isEmbedded: c.isEmbedded, properties: newProperties))
            }
        }
        return added
    }

    /// Checks that `instruction` names a class and property of the store with a value that fits.
    func check(_ instruction: Instruction) throws(SessionFailure) {
        guard let c = classes[instruction.className], !c.isEmbedded else {
            throw .invalidValue("unknown class \(instruction.className) (or an embedded class, whose objects live in their owners)")
        }
        guard instruction.primaryKey.tag == c.primaryKeyTag else { throw .invalidValue("a primary key of \(c.name) with the wrong type") }
        switch instruction.operation {
        case .create, .erase: return
        case .set(let path, let value) where path.count > 1:
            // A property of an embedded object (§6.6): each name but the last an embedded property.
            var owner = c
            for name in path.dropLast() {
                let p = try property(owner, [name], kind: 0, "SET")
                guard p.valueTag == 13, let target = classes[p.linkTarget] else {
                    throw .invalidValue(
                        "the path \(path.joined(separator: ".")) of \(c.name) goes through \(name), which is not an embedded object")
                }
                owner = target
            }
            guard let p = property(owner.name, path[path.count - 1]) else {
                throw .invalidValue("unknown property \(c.name).\(path.joined(separator: "."))")
            }
            try checkWhole(value, of: p)
        case .set(let path, let value):
            try check(value, of: try property(c, path, kind: 0, "SET"))
        case .listInsert(let path, let id, _, let value), .listSet(let path, let id, let value):
            guard id != .head else { throw .invalidValue("a list element with the identity of the head") }
            try check(value, of: try property(c, path, kind: 2, "a list instruction"))
        case .listErase(let path, _):
            _ = try property(c, path, kind: 2, "LIST_ERASE")
        case .setAdd(let path, let value), .setErase(let path, let value):
            try check(value, of: try property(c, path, kind: 4, "a set instruction"))
        case .mapSet(let path, _, let value):
            try check(value, of: try property(c, path, kind: 8, "MAP_SET"))
        case .mapErase(let path, _):
            _ = try property(c, path, kind: 8, "MAP_ERASE")
        case .listState:
            throw .invalidValue("a LIST_STATE, which only servers send")
        }
    }

    /// The property `path` names in `c`, which must be of `kind` (0: not a collection, else the
    /// collection's flag bit).
    private func property(_ c: SyncClass, _ path: [String], kind: UInt8, _ what: String) throws(SessionFailure) -> SyncClass.Property {
        guard path.count == 1, let p = property(c.name, path[0]) else {
            throw .invalidValue("unknown property \(c.name).\(path.joined(separator: "."))")
        }
        guard p.flags & 0b1110 == kind else { throw .invalidValue("\(what) on \(c.name).\(p.name), which is not of that kind") }
        return p
    }

    /// Checks that `value` fits `p` whole: a collection's whole contents (inside an embedded
    /// object, where collections are set whole), or one value.
    private func checkWhole(_ value: SyncValue, of p: SyncClass.Property) throws(SessionFailure) {
        switch (value, p.flags & 0b1110) {
        case (.list(let items), 2), (.set(let items), 4):
            for v in items { try check(v, of: p) }
        case (.map(let entries), 8):
            for e in entries { try check(e.value, of: p) }
        case (_, 0): try check(value, of: p)
        default: throw .invalidValue("a value that does not fit the collection \(p.name)")
        }
    }

    /// Checks that `value` fits `p` (an element's, for a collection).
    private func check(_ value: SyncValue, of p: SyncClass.Property) throws(SessionFailure) {
        if p.valueTag == 13 {
            // An embedded object: its properties, each known and fitting; or none.
            guard case .embedded(let states) = value else {
                guard value == .null, p.flags & 0b0110 == 0 else { throw .invalidValue("a value that does not fit \(p.name)") }
                return
            }
            guard let target = classes[p.linkTarget] else { throw .invalidValue("\(p.name) names an unknown embedded class") }
            for state in states {
                guard let inner = property(target.name, state.name) else {
                    throw .invalidValue("unknown property \(target.name).\(state.name) in an embedded object")
                }
                try checkWhole(state.value, of: inner)
            }
            return
        }
        if case .mixed(.link(let target, let key)) = value {
            guard keyTag(target) == key.tag else { throw .invalidValue("a mixed value links to an unknown object of \(target)") }
            return
        }
        let optional = p.flags & 1 != 0 || p.valueTag == 17 || p.flags & 8 != 0
        guard SQLMapping.fits(value, tag: p.valueTag, optional: optional, linkTarget: p.linkTarget, linkKeyTag: keyTag(p.linkTarget))
        else {
            throw .invalidValue("a value that does not fit \(p.name)")
        }
    }
}

/// Why a session fails a message (Spec/SYNC.md §9).
enum SessionFailure: Error, Sendable {
    case protocolVersion(String)
    case invalidToken(String)
    case badMessage(String)
    case invalidSchema(String)
    case schemaMismatch(String)
    case invalidValue(String)
    case invalidQuery(String)
    case writeNotAllowed(String)
    case badClientFileId(String)
    case `internal`(String)
    /// The history no longer reaches the client's server version (compacted, §8.5).
    case clientReset(String)
    /// The user has as many sessions on this server as it serves a user (§9).
    case tooManySessions(String)

    var code: UInt64 {
        switch self {
        case .protocolVersion: 1
        case .invalidToken: 2
        case .badMessage: 3
        case .invalidSchema: 4
        case .schemaMismatch: 5
        case .invalidValue: 6
        case .invalidQuery: 7
        case .writeNotAllowed: 8
        case .badClientFileId: 9
        case .internal: 10
        case .clientReset: 11
        case .tooManySessions: 12
        }
    }

    var isFatal: Bool {
        switch self {
        case .invalidValue, .invalidQuery, .writeNotAllowed, .internal: false
        default: true
        }
    }

    var message: String {
        switch self {
        case .protocolVersion(let m), .invalidToken(let m), .badMessage(let m), .invalidSchema(let m), .schemaMismatch(let m),
            .invalidValue(let m),
            .invalidQuery(let m), .writeNotAllowed(let m), .badClientFileId(let m), .internal(let m), .clientReset(let m),
            .tooManySessions(let m):
            m
        }
    }
}
