import Foundation
import RealmStorage

extension FuzzHarness {
    /// `Operations`: the bytes as a program of up to 48 steps on a store with a small fixed schema
    /// (``ReferenceModel/schema``) and a small row-group capacity (so that objects span groups):
    /// inserts, sets and deletes (including ones that must fail: duplicate primary keys, wrong types,
    /// missing objects, typed links to missing tables), commits, cancels, freezes (snapshots held
    /// across later steps), compactions and reopens — and a fault countdown that makes the n-th next
    /// `pwrite`, `fsync`, `ftruncate`, `mmap`, `rename` or `open` fail (fault points are compiled in
    /// debug builds and in the fuzz build, see `REALM_FAULT_INJECTION`). After every step the engine
    /// is compared with a plain model: the open transaction, the current version, every held
    /// snapshot; after a failure (an injected fault or an expected error) the last committed state
    /// must still read back equal to the model, also from a store opened anew.
    public static func operations(_ data: [UInt8]) {
        require(
            FaultInjection.isAvailable, "Operations needs the engine's fault points: build with Fuzz/run.sh (-DREALM_FAULT_INJECTION)")
        var input = FuzzInput(data)
        let run: OperationsRun
        do { run = try OperationsRun(rowGroupCapacity: 1 + input.below(5)) } catch {
            fatalError("Operations: could not create the store: \(error)")
        }
        defer { run.close() }
        var steps = 0
        while !input.isAtEnd && steps < 48 {
            run.step(&input)
            steps += 1
        }
        run.reopen(faults: false)
    }
}

/// One `Operations` program's state: the store, the open transaction, the held snapshots and the
/// models of each.
final class OperationsRun {
    let directory: String
    let path: String
    let rowGroupCapacity: Int
    var store: Store
    var transaction: WriteTransaction?
    /// The model of the open transaction (valid while `transaction` is not nil).
    var pending = ReferenceModel()
    /// The model of the last committed version.
    var committed = ReferenceModel()
    /// Snapshots held across steps with the model of their version.
    var frozen: [(Snapshot, ReferenceModel)] = []
    /// The fault countdown, active during every engine call a step makes.
    var plan = FaultPlan()
    var tableIDs: [String: UInt32] = [:]

    init(rowGroupCapacity: Int) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("realm-fuzz-ops-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        path = directory + "/ops.realm"
        self.rowGroupCapacity = rowGroupCapacity
        store = try Store.open(at: path, options: .init(create: true, rowGroupCapacity: rowGroupCapacity))
        let tx = try store.beginWrite()
        for t in ReferenceModel.schema {
            try tx.createTable(t.table, primaryKey: t.primaryKey)
            for c in t.columns { try tx.addColumn(t.table, c) }
            tableIDs[t.table] = tx.catalog.table(t.table)!.id
        }
        try tx.commit()
    }

    func close() {
        transaction?.cancel()
        transaction = nil
        frozen = []
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with the fault countdown active.
    func faulty<R>(_ body: () throws -> R) throws -> R { try FaultInjection.run(plan, body) }

    /// `REALM_FUZZ_TRACE=1` prints each step and its outcome (to read a crasher's program).
    static let tracing = ProcessInfo.processInfo.environment["REALM_FUZZ_TRACE"] != nil

    func trace(_ line: @autoclosure () -> String) { if Self.tracing { print("ops: \(line())") } }

    static let stepNames = [
        "insert", "insert", "insert", "insert keyed", "set", "set", "delete", "delete all", "commit", "commit", "cancel", "freeze",
        "release", "compact", "reopen", "arm fault",
    ]

    func step(_ input: inout FuzzInput) {
        let op = input.below(16)
        trace("\(Self.stepNames[op]) (tx \(transaction == nil ? "closed" : "open"), v\(store.currentVersion), \(frozen.count) held)")
        switch op {
        case 0, 1, 2: insertItems(&input, count: input.below(8) == 0 ? 1 + input.below(8) : 1)
        case 3: insertKeyed(&input)
        case 4, 5: set(&input)
        case 6: delete(&input)
        case 7: deleteAll()
        case 8, 9: commit()
        case 10:
            transaction?.cancel()
            transaction = nil
            checkCommitted("after a cancel")
        case 11:
            if frozen.count == 4 { frozen.removeFirst() }
            if let s = try? store.snapshot(kind: "frozen") {
                require(s.version == store.currentVersion, "Operations: a snapshot is not at the current version")
                frozen.append((s, committed))
            }
        case 12: if !frozen.isEmpty { frozen.remove(at: input.below(frozen.count)) }
        case 13: compact()
        case 14: reopen(faults: true)
        default:
            // The fault countdown: the n-th next call at a point fails (one armed point at a time).
            let point = FaultPoint.allCases[input.below(FaultPoint.allCases.count)]
            plan = FaultPlan()
            let n = 1 + input.below(6)
            plan.arm(point, at: n)
            trace("fault armed: \(point) #\(n)")
        }
    }

    // MARK: Writes

    /// The open transaction, begun (under the fault countdown) when there is none.
    func write() -> WriteTransaction? {
        if let transaction { return transaction }
        do {
            transaction = try faulty { try store.beginWrite() }
            pending = committed
        } catch let e as StorageError where e.code == .io {
            return nil
        } catch {
            fatalError("Operations: beginWrite failed: \(error)")
        }
        return transaction
    }

    /// Handles an error a mutation threw: the expected one leaves the transaction as it was; an
    /// injected I/O error abandons the transaction; anything else is a finding.
    func failed(_ error: any Error, expected: StorageError.Code?, _ what: String) {
        trace("\(what) threw \(error)")
        if let e = error as? StorageError, e.code == expected {
            checkPending(what)
            return
        }
        if let e = error as? StorageError, e.code == .io {
            transaction?.cancel()
            transaction = nil
            checkCommitted("after an I/O error in \(what)")
            return
        }
        fatalError("Operations: \(what) threw \(error), expected \(expected.map { "\($0)" } ?? "no error")")
    }

    func succeeded(_ what: String, expected: StorageError.Code?) {
        require(expected == nil, "Operations: \(what) succeeded; the model expected \(expected!)")
    }

    func itemValues(_ input: inout FuzzInput) -> [String: StorageValue] {
        var values: [String: StorageValue] = ["n": .int(input.int())]
        values["s"] = input.below(4) == 0 ? .null : .string(input.string())
        values["d"] = input.below(4) == 0 ? .null : input.value(.double)
        values["x"] = mixedValue(&input)
        values["tags"] = .list((0..<input.below(4)).map { _ in .string(input.string()) })
        values["m"] = .map(
            Dictionary(
                (0..<input.below(4)).map { _ in (input.string(), input.below(4) == 0 ? .null : .int(input.int())) },
                uniquingKeysWith: { a, _ in a }))
        return values
    }

    /// A value for the mixed column; typed links name one of the two tables or a missing one.
    func mixedValue(_ input: inout FuzzInput) -> StorageValue {
        let v = input.value(.mixed)
        guard case .typedLink(let table, let key) = v else { return v }
        return .typedLink(table: table % 2 == 0 ? tableIDs[ReferenceModel.item]! : table + 100, key: key)
    }

    /// The error the model expects when `value` goes into column `name` of `table`.
    func expectedError(_ table: String, _ name: String, _ value: StorageValue) -> StorageError.Code? {
        if case .typedLink(let t, let key) = value, !tableIDs.values.contains(t) || key.rawValue < 0 { return .notFound }
        return nil
    }

    func insertItems(_ input: inout FuzzInput, count: Int) {
        for _ in 0..<count {
            let values = itemValues(&input)
            guard let tx = write() else { return }
            let expected = expectedError(ReferenceModel.item, "x", values["x"]!)
            do {
                let key = try faulty { try tx.insert(ReferenceModel.item, values) }
                succeeded("insert", expected: expected)
                require(pending.objects[ReferenceModel.item]![key] == nil, "Operations: insert reused key \(key)")
                pending.objects[ReferenceModel.item]![key] = values
                pending.check("after an insert", ReferenceModel.item, key, value: tx.value)
            } catch {
                failed(error, expected: expected, "insert into Item")
                if transaction == nil { return }
            }
        }
    }

    func insertKeyed(_ input: inout FuzzInput) {
        let id = StorageValue.int(Int64(input.below(8)))
        let values: [String: StorageValue] = ["id": id, "v": .string(input.string()), "b": input.value(.binary)]
        guard let tx = write() else { return }
        let expected: StorageError.Code? = pending.key(ReferenceModel.keyed, primaryKey: id) == nil ? nil : .duplicatePrimaryKey
        do {
            let key = try faulty { try tx.insert(ReferenceModel.keyed, values) }
            succeeded("insert of Keyed \(id)", expected: expected)
            pending.objects[ReferenceModel.keyed]![key] = values
            pending.check("after an insert", ReferenceModel.keyed, key, value: tx.value)
            require(
                (try? tx.objectKey(ReferenceModel.keyed, primaryKey: id)) == key, "Operations: primary key \(id) does not find \(key)")
        } catch {
            failed(error, expected: expected, "insert of Keyed \(id)")
        }
    }

    /// A key of `table` in the pending model, or now and then one that does not exist.
    func someKey(_ input: inout FuzzInput, _ table: String) -> ObjectKey {
        let keys = pending.keys(table)
        if keys.isEmpty || input.below(8) == 0 { return ObjectKey(Int64(input.below(64))) }
        return keys[input.below(keys.count)]
    }

    func set(_ input: inout FuzzInput) {
        let table = input.bool() ? ReferenceModel.item : ReferenceModel.keyed
        let columns = ReferenceModel.columns(table)
        let column = columns[input.below(columns.count)]
        var value: StorageValue
        if table == ReferenceModel.keyed && column.name == "id" {
            value = .int(Int64(input.below(8)))
        } else {
            value = column.name == "x" ? mixedValue(&input) : itemOrKeyedValue(&input, column)
        }
        var wrongType = false
        if input.below(8) == 0 {
            value = .list([.bool(true)])  // no column here holds a list of bools
            wrongType = true
        }
        guard let tx = write() else { return }
        let key = someKey(&input, table)
        var expected = wrongType ? .typeMismatch : expectedError(table, column.name, value)
        if pending.objects[table]![key] == nil {
            expected = .notFound
        } else if column.name == "id", expected == nil, let other = pending.key(table, primaryKey: value), other != key {
            expected = .duplicatePrimaryKey
        }
        do {
            try faulty { try tx.set(table, key, column.name, value) }
            succeeded("set \(table) \(key).\(column.name) = \(value)", expected: expected)
            pending.objects[table]![key]![column.name] = value
            pending.check("after a set", table, key, value: tx.value)
        } catch {
            failed(error, expected: expected, "set \(table) \(key).\(column.name) = \(value)")
        }
    }

    func itemOrKeyedValue(_ input: inout FuzzInput, _ column: ColumnSchema) -> StorageValue {
        if column.isNullable && !column.isMap && input.below(4) == 0 { return .null }
        switch column.name {
        case "tags": return .list((0..<input.below(4)).map { _ in .string(input.string()) })
        case "m":
            return .map(
                Dictionary(
                    (0..<input.below(4)).map { _ in (input.string(), input.below(4) == 0 ? .null : .int(input.int())) },
                    uniquingKeysWith: { a, _ in a }))
        default: return input.value(column.type)
        }
    }

    func delete(_ input: inout FuzzInput) {
        let table = input.bool() ? ReferenceModel.item : ReferenceModel.keyed
        guard let tx = write() else { return }
        let key = someKey(&input, table)
        let expected: StorageError.Code? = pending.objects[table]![key] == nil ? .notFound : nil
        do {
            try faulty { try tx.delete(table, key) }
            succeeded("delete \(table) \(key)", expected: expected)
            pending.objects[table]![key] = nil
            require((try? tx.contains(table, key)) == false, "Operations: \(table) \(key) is still there after its delete")
            require((try? tx.objectCount(table)) == pending.objects[table]!.count, "Operations: \(table) count after a delete")
        } catch {
            failed(error, expected: expected, "delete \(table) \(key)")
        }
    }

    func deleteAll() {
        guard let tx = write() else { return }
        do {
            try faulty { try tx.deleteAll(ReferenceModel.item) }
            pending.objects[ReferenceModel.item] = [:]
            checkPending("after deleteAll")
        } catch {
            failed(error, expected: nil, "deleteAll")
        }
    }

    func commit() {
        guard let tx = transaction else { return }
        transaction = nil
        do {
            let s = try faulty { try tx.commit() }
            trace("committed v\(s.version)")
            committed = pending
            committed.check("the snapshot a commit returned", keys: s.objectKeys, value: s.value)
        } catch let e as StorageError where e.code == .io {
            trace("commit failed: \(e)")
            // The file stays at the previous version, and reads so from a new store too.
            checkCommitted("after a failed commit")
            checkReopened("after a failed commit")
            return
        } catch {
            fatalError("Operations: commit threw \(error)")
        }
        checkCommitted("after a commit", verify: true)
    }

    // MARK: Compaction and reopening

    func compact() {
        guard transaction == nil else { return }
        do {
            try faulty { _ = try store.compact() }
        } catch let e as StorageError where e.code == .io || e.code == .inUseByAnotherProcess {
            trace("compaction failed: \(e)")
            checkReopened("after a failed compaction")
        } catch {
            fatalError("Operations: compact threw \(error)")
        }
        checkCommitted("after a compaction", verify: true)
    }

    /// Drops the store (the open transaction is cancelled, held snapshots stay) and opens the file
    /// again, first under the fault countdown and, when that fails, without.
    func reopen(faults: Bool) {
        transaction?.cancel()
        transaction = nil
        let options = Store.Options(rowGroupCapacity: rowGroupCapacity)
        do {
            store = faults ? try faulty { try Store.open(at: path, options: options) } : try Store.open(at: path, options: options)
        } catch let e as StorageError where e.code == .io {
            do { store = try Store.open(at: path, options: options) } catch {
                fatalError("Operations: the file does not open after a failed open: \(error)")
            }
        } catch {
            fatalError("Operations: reopening threw \(error)")
        }
        checkCommitted("after reopening", verify: true)
    }

    // MARK: Checks

    func checkPending(_ what: String) {
        guard let tx = transaction else { return }
        for t in ReferenceModel.schema {
            require((try? tx.objectCount(t.table)) == pending.objects[t.table]!.count, "Operations: \(what): \(t.table) count")
        }
        if pending.objects.values.reduce(0, { $0 + $1.count }) <= 64 { pending.check(what, keys: tx.objectKeys, value: tx.value) }
    }

    /// The current version (and every held snapshot) equals its model.
    func checkCommitted(_ what: String, verify: Bool = false) {
        let s: Snapshot
        do { s = try store.snapshot() } catch { fatalError("Operations: \(what): no snapshot: \(error)") }
        committed.check(what, keys: s.objectKeys, value: s.value)
        if verify {
            let report = Verifier().verify(s)
            require(report.isClean, "Operations: \(what): \(report.problems.prefix(3))")
        }
        for (snapshot, model) in frozen { model.check("\(what), a held snapshot", keys: snapshot.objectKeys, value: snapshot.value) }
    }

    /// The file read by a new read-only store equals the committed model.
    func checkReopened(_ what: String) {
        do {
            let s = try Store.open(at: path, options: .init(readOnly: true)).snapshot()
            committed.check("\(what), read by a new store", keys: s.objectKeys, value: s.value)
        } catch {
            fatalError("Operations: \(what): the file does not open: \(error)")
        }
    }
}
