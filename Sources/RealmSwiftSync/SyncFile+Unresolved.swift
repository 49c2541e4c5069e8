import Foundation
import RealmStorage
import RealmSwift
import RealmSyncProtocol

/// Links to objects the file does not hold (Spec/SYNC.md §7.3): a downloaded state that links to
/// an object outside the client's view, or an object that left it, is applied without those links
/// (a null link, a collection without the element), and the state is kept here until every object
/// it links to arrives; each arrival applies the state again, so the link appears as it does in
/// RealmSwift when the object comes into view.
///
/// Two tables of the file, written in the download commits that change them:
/// - `__sync_unresolved`: one row per property (`key`: class, property and encoded primary key,
///   as ``ListIdentities``), with `change`, the state to apply again (an `Instruction[]` of one
///   `SET` or `LIST_STATE`), and `targets`, the objects it waits for (a list of links);
/// - `__sync_waiting`: one row per awaited object (`key`: class and encoded primary key), with
///   `owners`, the keys of the properties that wait for it (a list of strings).
final class UnresolvedLinks {
    static let properties = "__sync_unresolved"
    static let waiting = "__sync_waiting"
    private let tx: WriteTransaction

    /// The records as `tx` holds them.
    init(_ tx: WriteTransaction) { self.tx = tx }

    /// Whether the file holds any record (the tables exist only once one was made).
    var isEmpty: Bool { tx.catalog.table(Self.properties) == nil }

    static func targetKey(_ id: SyncStoreModel.ObjectID) -> String {
        var w = WireWriter()
        w.value(id.primaryKey)
        return id.className + "\u{1}" + Hex.string(w.bytes)
    }

    /// Records that `change`, a state applied to its property, left out its links to `missing`;
    /// replaces what was recorded for the property, or forgets it when nothing is missing.
    func update(_ change: Instruction, missing: [SyncStoreModel.ObjectID]) throws {
        guard let path = change.operation.path, path.count == 1 else { return }
        let owner = ListIdentities.rowKey(change.className, change.primaryKey, path[0])
        try forget(owner)
        guard !missing.isEmpty else { return }
        try write(owner, change, Array(Set(missing)))
    }

    /// Adds `targets` to what the property `path[0]` of `change`'s object waits for, recording
    /// `change` as its state unless one is recorded already (an object that left the view: its
    /// links were removed from the property, which held `change`).
    func add(_ change: Instruction, waitingFor targets: [SyncStoreModel.ObjectID]) throws {
        guard let path = change.operation.path, path.count == 1, !targets.isEmpty else { return }
        let owner = ListIdentities.rowKey(change.className, change.primaryKey, path[0])
        if let (recorded, awaited) = try record(owner) {
            try forget(owner)
            try write(owner, recorded, Array(Set(awaited + targets)))
        } else {
            try write(owner, change, Array(Set(targets)))
        }
    }

    /// Forgets what the properties of a deleted object waited for.
    func forgetObject(_ className: String, _ primaryKey: SyncValue, table: TableSchema) throws {
        guard !isEmpty else { return }
        for c in table.columns where c.type == .link || c.type == .mixed {
            try forget(ListIdentities.rowKey(className, primaryKey, c.name))
        }
    }

    /// The recorded states that waited for `id`, which the file now holds; they no longer wait
    /// for it (applying them again records what they still wait for).
    func arrived(_ id: SyncStoreModel.ObjectID) throws -> [Instruction] {
        guard !isEmpty, let row = try tx.objectKey(Self.waiting, primaryKey: .string(Self.targetKey(id))) else { return [] }
        let owners = try strings(try tx.value(Self.waiting, row, "owners"))
        try tx.delete(Self.waiting, row)
        var changes: [Instruction] = []
        for owner in owners {
            guard let (change, targets) = try record(owner) else { continue }
            try forget(owner)
            let rest = targets.filter { $0 != id }
            if !rest.isEmpty { try write(owner, change, rest) }
            changes.append(change)
        }
        return changes
    }

    /// Every awaited object the file holds now, with the states waiting for it (after a
    /// bootstrap, which inserts objects without going through ``arrived(_:)`` one by one).
    func arrivedAll() throws -> [Instruction] {
        guard !isEmpty else { return [] }
        var ids: [SyncStoreModel.ObjectID] = []
        for row in try tx.objectKeys(Self.properties) {
            for id in try links(try tx.value(Self.properties, row, "targets"))
            where try SyncFile.objectKey(id.className, id.primaryKey, tx: tx) != nil {
                ids.append(id)
            }
        }
        var changes: [Instruction] = []
        for id in Set(ids) { changes += try arrived(id) }
        return changes
    }

    // MARK: The rows

    private func record(_ owner: String) throws -> (Instruction, [SyncStoreModel.ObjectID])? {
        guard !isEmpty, let row = try tx.objectKey(Self.properties, primaryKey: .string(owner)) else { return nil }
        guard case .binary(let bytes) = try tx.value(Self.properties, row, "change") else {
            throw Self.damaged("a change that is not bytes")
        }
        var r = WireReader(bytes)
        guard let change = (try? r.instructions())?.first else { throw Self.damaged("a change that cannot be read") }
        return (change, try links(try tx.value(Self.properties, row, "targets")))
    }

    private func forget(_ owner: String) throws {
        guard !isEmpty, let row = try tx.objectKey(Self.properties, primaryKey: .string(owner)) else { return }
        for id in try links(try tx.value(Self.properties, row, "targets")) {
            guard let w = try tx.objectKey(Self.waiting, primaryKey: .string(Self.targetKey(id))) else { continue }
            let rest = try strings(try tx.value(Self.waiting, w, "owners")).filter { $0 != owner }
            if rest.isEmpty {
                try tx.delete(Self.waiting, w)
            } else {
                try tx.set(Self.waiting, w, "owners", .binary(Self.encode(.list(rest.map { .string($0) }))))
            }
        }
        try tx.delete(Self.properties, row)
    }

    private func write(_ owner: String, _ change: Instruction, _ targets: [SyncStoreModel.ObjectID]) throws {
        if isEmpty {
            try tx.createTable(Self.properties, primaryKey: ColumnSchema("key", .string))
            try tx.addColumn(Self.properties, ColumnSchema("change", .binary))
            try tx.addColumn(Self.properties, ColumnSchema("targets", .binary))
            try tx.createTable(Self.waiting, primaryKey: ColumnSchema("key", .string))
            try tx.addColumn(Self.waiting, ColumnSchema("owners", .binary))
        }
        var w = WireWriter()
        w.instructions([change])
        let links = SyncValue.list(targets.map { .link(class: $0.className, primaryKey: $0.primaryKey) })
        try tx.insert(Self.properties, ["key": .string(owner), "change": .binary(w.bytes), "targets": .binary(Self.encode(links))])
        for id in targets {
            let key = Self.targetKey(id)
            if let row = try tx.objectKey(Self.waiting, primaryKey: .string(key)) {
                let owners = try strings(try tx.value(Self.waiting, row, "owners")) + [owner]
                try tx.set(Self.waiting, row, "owners", .binary(Self.encode(.list(owners.map { .string($0) }))))
            } else {
                try tx.insert(Self.waiting, ["key": .string(key), "owners": .binary(Self.encode(.list([.string(owner)])))])
            }
        }
    }

    private static func encode(_ v: SyncValue) -> [UInt8] {
        var w = WireWriter()
        w.value(v)
        return w.bytes
    }

    private func decode(_ stored: StorageValue) throws -> [SyncValue] {
        guard case .binary(let bytes) = stored else { throw Self.damaged("a list that is not bytes") }
        var r = WireReader(bytes)
        guard case .list(let items) = try? r.value(), r.isAtEnd else { throw Self.damaged("a list that cannot be read") }
        return items
    }

    private func links(_ stored: StorageValue) throws -> [SyncStoreModel.ObjectID] {
        try decode(stored).compactMap { if case .link(let c, let pk) = $0 { SyncStoreModel.ObjectID(c, pk) } else { nil } }
    }

    private func strings(_ stored: StorageValue) throws -> [String] {
        try decode(stored).compactMap { if case .string(let s) = $0 { s } else { nil } }
    }

    private static func damaged(_ what: String) -> SyncError {
        SyncError(.clientInternalError, "the file's record of unresolved links is damaged: \(what)")
    }
}

extension SyncFile {
    /// The objects of the file's synced classes that `value` links to (at any depth: in
    /// collections, mixed values and embedded objects) and that the file does not hold.
    static func missingTargets(of value: SyncValue, tx: WriteTransaction) throws -> [SyncStoreModel.ObjectID] {
        var out: [SyncStoreModel.ObjectID] = []
        func visit(_ v: SyncValue) throws {
            switch v {
            case .link(let cls, let pk):
                // A class without a table, or a key that does not fit it, is never awaited.
                guard let table = tx.catalog.table(cls), let key = try primaryKey(pk, of: table, tx: tx) else { return }
                if try tx.objectKey(cls, primaryKey: key) == nil { out.append(SyncStoreModel.ObjectID(cls, pk)) }
            case .mixed(let inner): try visit(inner)
            case .list(let items), .set(let items): for i in items { try visit(i) }
            case .map(let entries): for e in entries { try visit(e.value) }
            case .embedded(let states): for s in states { try visit(s.value) }
            default: return
            }
        }
        try visit(value)
        return out
    }

    /// Before objects `ids` of `target` are erased (they left the client's view, or were
    /// deleted), removes every link to them from the file's objects, as RealmSwift's delete does
    /// (`Realm.removeLinks`; a list's identities go with its elements), and records each property
    /// that held one as waiting for them (§7.3): if they come back, the property gets its links
    /// again.
    static func unlink(_ ids: [ObjectKey: SyncStoreModel.ObjectID], of target: TableSchema, tx: WriteTransaction) throws {
        let unresolved = UnresolvedLinks(tx)
        let lists = ListIdentities(tx)
        try Realm.removeLinks(to: Set(ids.keys), in: target.name, tx) { t, k, c, current, removed in
            // The property as it was, to be applied again: only a top-level object's (an
            // embedded object's property is its owner's state, sent whole), and not one of the
            // objects going.
            guard let ownerPk = t.primaryKeyColumn, t.name != target.name || ids[k] == nil else { return }
            let awaited = removed.compactMap { ids[$0] }
            let pk = try syncValue(try tx.value(t.name, k, ownerPk.name), column: ownerPk, at: tx)
            var change = Instruction(t.name, pk, .set(path: [c.name], value: try wholeSyncValue(current, column: c, at: tx)))
            if c.isList && !c.isSet, let known = try lists.known(t.name, pk, c.name) {
                change = Instruction(t.name, pk, .listState(path: [c.name], ids: known.ids, values: known.values))
                // The identities follow the stored list: a link's element goes, a mixed one
                // becomes null.
                let links = Set(awaited.map { SyncValue.link(class: $0.className, primaryKey: $0.primaryKey) })
                var rest = ListIdentities.Known.empty
                for (id, v) in zip(known.ids, known.values) {
                    if case .mixed(let inner) = v, links.contains(inner) {
                        rest.ids.append(id)
                        rest.values.append(.null)
                    } else if !links.contains(v) {
                        rest.ids.append(id)
                        rest.values.append(v)
                    }
                }
                try lists.set(t.name, pk, c.name, rest)
            }
            try unresolved.add(change, waitingFor: awaited)
        }
    }
}
