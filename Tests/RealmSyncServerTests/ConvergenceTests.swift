import Foundation
import NIOCore
import PostgresNIO
import RealmSyncProtocol
import RealmSyncServer
import RealmTestSupport
import Testing

/// Model-based: three clients upload random writes (creates, deletes, every scalar type, links)
/// with clocks close enough to conflict, while the server is killed (SIGKILL) and restarted and
/// PostgreSQL itself is stopped at once and started again. Every upload the server acknowledged is
/// in the history exactly once; the typed tables hold exactly what the conflict rules
/// (`SyncStoreModel`) give when the history's uploads are applied in its order; each entry holds
/// the effective changes the model computes; and a subscriber that applied every download holds
/// the tables' objects. A failure names its seed.
// In the suite of the other sync server tests, which run one at a time: this test restarts
// PostgreSQL, which a test running beside it would meet in the middle of its work.
extension SyncServerTests {
    static let people: [Int64] = Array(1...8)
    static let dogs = ["a", "b", "c"]

    struct Writer {
        var connection: SyncConnection
        var id: [UInt8]
        var clock: HybridClock
        var nextVersion: UInt64 = 1
    }

    /// A random upload of `writer` (its client file identity), made at its clock's next value;
    /// list elements it inserts join `elements`, where later uploads (of any writer) find anchors
    /// and elements to set and erase.
    static func randomUpload(_ rng: inout SplitMix, writer: [UInt8], clock: inout HybridClock, version: UInt64, elements: inout [ElementId])
        -> Upload
    {
        // Physical times within a few milliseconds of each other: writes of different clients conflict.
        let uploadClock = clock.next(milliseconds: 1_000_000 + UInt64(rng.below(40)))
        var inserted: UInt64 = 0
        var instructions: [Instruction] = []
        for _ in 0..<(1 + rng.below(4)) {
            let key = SyncValue.int(people[rng.below(people.count)])
            func set(_ name: String, _ value: SyncValue) {
                instructions.append(Instruction("Person", key, .set(path: [name], value: value)))
            }
            func known() -> ElementId { elements.isEmpty || rng.below(4) == 0 ? .head : elements[rng.below(elements.count)] }
            switch rng.below(14) {
            case 10:
                let id = ElementId(clock: uploadClock, clientFileId: writer, index: inserted)
                inserted += 1
                instructions.append(
                    Instruction("Person", key, .listInsert(path: ["tags"], id: id, after: known(), value: .string("t\(rng.below(50))"))))
                elements.append(id)
            case 11:
                let id = known()
                guard id != .head else { continue }
                instructions.append(
                    Instruction(
                        "Person", key,
                        rng.below(2) == 0
                            ? .listErase(path: ["tags"], id: id) : .listSet(path: ["tags"], id: id, value: .string("s\(rng.below(50))"))))
            case 12:
                let n = SyncValue.int(Int64(rng.below(5)))
                instructions.append(
                    Instruction("Person", key, rng.below(2) == 0 ? .setAdd(path: ["nums"], value: n) : .setErase(path: ["nums"], value: n)))
            case 13:
                let k = "k\(rng.below(3))"
                instructions.append(
                    Instruction(
                        "Person", key,
                        rng.below(3) == 0
                            ? .mapErase(path: ["marks"], key: k) : .mapSet(path: ["marks"], key: k, value: .int(Int64(rng.below(9))))))
            case 0, 1:
                instructions.append(Instruction("Person", key, .create))
                set("name", .string("p\(rng.below(100))"))
            case 2: instructions.append(Instruction("Person", key, .erase))
            case 3: set("name", .string(["Ann", "Bob", "Çelik", "", "日本"][rng.below(5)]))
            case 4: set("age", rng.below(3) == 0 ? .null : .int(Int64(rng.below(100)) - 10))
            case 5: set("score", .double(Double(rng.below(1000)) / 8))
            case 6:
                let dog = dogs[rng.below(dogs.count)]
                instructions.append(Instruction("Dog", .string(dog), .create))
                instructions.append(Instruction("Dog", .string(dog), .set(path: ["name"], value: .string(dog.uppercased()))))
                set("dog", .link(class: "Dog", primaryKey: .string(dog)))
            case 7: set("dog", .null)
            case 8:
                set(
                    "born",
                    .timestamp(seconds: Int64(rng.below(2_000_000_000)) - 1_000_000_000, nanoseconds: UInt32(rng.below(1_000_000_000))))
            default:
                let dog = dogs[rng.below(dogs.count)]
                instructions.append(Instruction("Dog", .string(dog), rng.below(2) == 0 ? .erase : .create))
            }
        }
        return Upload(clientVersion: version, clock: uploadClock, instructions: instructions)
    }

    static func sortedInts(_ values: [SyncValue]) -> [SyncValue] {
        values.compactMap { if case .int(let i) = $0 { i } else { nil } }.sorted().map(SyncValue.int)
    }

    /// Restarts PostgreSQL at once (`pg_ctl stop -m immediate`: no shutdown checkpoint, as a crash
    /// leaves it), when the cluster is the one Tools/with-test-postgres started.
    static func crashPostgres() async -> Bool {
        guard let dir = ProcessInfo.processInfo.environment["REALM_SYNC_POSTGRES_DIR"] else { return false }
        let bin = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql"))?.sorted().last.map {
            "/usr/lib/postgresql/\($0)/bin/pg_ctl"
        }
        guard let pgctl = bin else { return false }
        for arguments in [
            ["-D", dir + "/data", "-m", "immediate", "-w", "stop"], ["-D", dir + "/data", "-l", dir + "/server.log", "-w", "start"],
        ] {
            let p = Process()
            if getuid() == 0 {
                p.executableURL = URL(fileURLWithPath: "/usr/sbin/runuser")
                p.arguments = ["-u", "postgres", "--", pgctl] + arguments
            } else {
                p.executableURL = URL(fileURLWithPath: pgctl)
                p.arguments = arguments
            }
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            guard (try? p.run()) != nil else { return false }
            // Reaped here: Foundation's Process was seen never to notice runuser's exit (a zombie
            // that waitUntilExit() and isRunning wait on forever).
            var status: Int32 = 0
            while waitpid(p.processIdentifier, &status, WNOHANG) == 0 { try? await Task.sleep(for: .milliseconds(20)) }
        }
        return true
    }

    @Test(arguments: [UInt64(51), 52])
    func threeClientsAndCrashesConvergeToTheModel(seed: UInt64) async throws {
        var rng = SplitMix(seed: seed)
        var server = try await ServerProcess()
        let appId = server.appId
        let port = server.port
        let token = try await server.anonymousToken()
        var writers: [Writer] = []
        for _ in 0..<3 {
            let c = try await SyncConnection(server, token: token)
            writers.append(Writer(connection: c, id: try await c.hello(), clock: HybridClock()))
        }
        var uploads: [[UInt8]: [UInt64: Upload]] = [:]
        var acknowledged: [([UInt8], UInt64)] = []
        var crashes = 0
        var elements: [ElementId] = []
        for step in 0..<120 {
            let w = rng.below(writers.count)
            let upload = Self.randomUpload(
                &rng, writer: writers[w].id, clock: &writers[w].clock, version: writers[w].nextVersion, elements: &elements)
            writers[w].nextVersion += 1
            uploads[writers[w].id, default: [:]][upload.clientVersion] = upload
            writers[w].connection.send(.upload([upload]))
            if rng.below(25) == 0 {
                // Kill the server with the upload in flight, or PostgreSQL under it; then every
                // client reconnects and sends again what was not acknowledged.
                crashes += 1
                let crashedPostgres = rng.below(2) == 0 ? false : await Self.crashPostgres()
                if !crashedPostgres {
                    server.stop(signal: SIGKILL)
                    server = try await ServerProcess(appId: appId, port: port)
                }
                for i in writers.indices {
                    await writers[i].connection.close()
                    // The same token: any server of the deployment checks any token.
                    let c = try await SyncConnection(server, token: token)
                    #expect(try await c.hello(writers[i].id) == writers[i].id, "seed \(seed) step \(step)")
                    writers[i].connection = c
                    var pending = (uploads[writers[i].id] ?? [:]).values.filter { u in
                        !acknowledged.contains { $0.0 == writers[i].id && $0.1 == u.clientVersion }
                    }
                    pending.sort { $0.clientVersion < $1.clientVersion }
                    var tries = 0
                    while let last = pending.last {
                        tries += 1
                        try #require(tries < 20, "seed \(seed) step \(step): uploads never acknowledged after a crash")
                        c.send(.upload(pending))
                        let m = try await c.receive(
                            until: { if case .uploadAck = $0 { true } else if case .error = $0 { true } else { false } }, within: 20)
                        if case .uploadAck(let cv, _) = m {
                            #expect(cv == last.clientVersion, "seed \(seed) step \(step)")
                            for u in pending { acknowledged.append((writers[i].id, u.clientVersion)) }
                            pending = []
                        } else {
                            try await Task.sleep(for: .milliseconds(200))  // the store is coming back
                        }
                    }
                }
                continue
            }
            let m = try await writers[w].connection.receive(
                until: {
                    if case .uploadAck = $0 { true } else if case .error = $0 { true } else { false }
                }, within: 20)
            guard case .uploadAck(let cv, _) = m else {
                Issue.record("seed \(seed) step \(step): \(m)")
                return
            }
            #expect(cv == upload.clientVersion, "seed \(seed) step \(step)")
            acknowledged.append((writers[w].id, cv))
        }
        // A subscriber that saw nothing before: bootstrap, then nothing more to come.
        let reader = try await SyncConnection(server, token: token)
        _ = try await reader.hello()
        reader.send(
            .query(
                querySetVersion: 1,
                subscriptions: [
                    Subscription(className: "Person", query: "TRUEPREDICATE"), Subscription(className: "Dog", query: "TRUEPREDICATE"),
                ]))
        var replica: [SyncStoreModel.ObjectID: [String: SyncValue]] = [:]
        while true {
            let m = try await reader.receive(within: 20)
            guard let (objects, _, last) = m.bootstrapped() else { continue }
            for o in objects {
                replica[.init(o.className, o.primaryKey)] = Dictionary(uniqueKeysWithValues: o.properties.map { ($0.name, $0.value) })
            }
            if last { break }
        }

        let (history, tables) = try await TestDatabase.withClient { pg in
            var history: [([UInt8], UInt64, [Instruction])] = []
            for try await (client, version, changeset) in try await pg.query(
                PostgresQuery(
                    unsafeSQL: "SELECT client_file_id, client_version, changeset FROM \"\(appId)\"._sync_history ORDER BY server_version")
            ).decode((ByteBuffer, Int64, ByteBuffer).self) {
                var reader = WireReader(Array(changeset.readableBytesView))
                history.append((Array(client.readableBytesView), UInt64(version), try reader.instructions()))
            }
            var tables: [SyncStoreModel.ObjectID: [String: SyncValue]] = [:]
            // Collections as SQL users read them: the list in order, the set and the map sorted.
            let person = """
                SELECT _id, name, age, score, dog, ARRAY(SELECT jsonb_array_elements_text(tags)), \
                ARRAY(SELECT x::bigint FROM jsonb_array_elements_text(nums) x ORDER BY 1), \
                ARRAY(SELECT key || '=' || value FROM jsonb_each_text(marks) ORDER BY 1) FROM "\(appId)"."Person"
                """
            for try await (id, name, age, score, dog, tags, nums, marks) in try await pg.query(PostgresQuery(unsafeSQL: person)).decode(
                (Int64, String?, Int64?, Double?, String?, [String], [Int64], [String]).self)
            {
                var o: [String: SyncValue] = [:]
                if let name { o["name"] = .string(name) }
                o["age"] = age.map(SyncValue.int) ?? .null
                if let score { o["score"] = .double(score) }
                o["dog"] = dog.map { .link(class: "Dog", primaryKey: .string($0)) } ?? .null
                o["tags"] = .list(tags.map(SyncValue.string))
                o["nums"] = .list(nums.map(SyncValue.int))
                o["marks"] = .list(marks.map(SyncValue.string))
                tables[.init("Person", .int(id))] = o
            }
            for try await (id, name) in try await pg.query(PostgresQuery(unsafeSQL: "SELECT _id, name FROM \"\(appId)\".\"Dog\"")).decode(
                (String, String?).self)
            {
                tables[.init("Dog", .string(id))] = name.map { ["name": .string($0)] } ?? [:]
            }
            return (history, tables)
        }
        // A server that lived through restarts of PostgreSQL stops gracefully too.
        #expect(server.stop() == 0, "seed \(seed): the graceful shutdown failed or hung")
        // Every acknowledged upload is in the history, once; nothing is there twice.
        let recorded = history.map { "\($0.0)/\($0.1)" }
        #expect(Set(recorded).count == recorded.count, "seed \(seed): an upload applied twice")
        for (id, cv) in acknowledged { #expect(recorded.contains("\(id)/\(cv)"), "seed \(seed): acknowledged upload \(cv) missing") }
        // The tables are the model's objects; each entry is the model's effective changes.
        var model = SyncStoreModel()
        for (client, version, effective) in history {
            let upload = try #require(uploads[client]?[version], "seed \(seed)")
            #expect(model.apply(upload, from: client) == effective, "seed \(seed): entry of \(version)")
        }
        var expected: [SyncStoreModel.ObjectID: [String: SyncValue]] = [:]
        for name in ["Person", "Dog"] {
            for key in name == "Person" ? Self.people.map(SyncValue.int) : Self.dogs.map(SyncValue.string) {
                let id = SyncStoreModel.ObjectID(name, key)
                guard let o = model.object(id) else { continue }
                var values = o.properties.mapValues(\.value)
                if name == "Person" {
                    values["age"] = values["age"] ?? .null
                    values["dog"] = values["dog"] ?? .null
                    values["tags"] = .list(o.lists["tags"]?.values ?? [])
                    values["nums"] = .list(Self.sortedInts((o.sets["nums"] ?? [:]).values.filter(\.present).map(\.value)))
                    values["marks"] = .list(
                        (o.maps["marks"] ?? [:]).filter(\.value.present).map { k, slot in
                            guard case .int(let v) = slot.value else { return SyncValue.string("\(k)=?") }
                            return .string("\(k)=\(v)")
                        }.sorted { "\($0)" < "\($1)" })
                }
                values["born"] = nil
                expected[id] = values
            }
        }
        #expect(tables == expected, "seed \(seed) (\(crashes) crashes)")
        // The subscriber holds the same objects and values (a timestamp's aside).
        func normalized(_ objects: [SyncStoreModel.ObjectID: [String: SyncValue]]) -> [SyncStoreModel.ObjectID: [String: SyncValue]] {
            var out = objects
            for (id, o) in objects {
                var o = o
                o["born"] = nil
                if id.className == "Person" {
                    o["age"] = o["age"] ?? .null
                    o["dog"] = o["dog"] ?? .null
                    if case .set(let nums) = o["nums"] { o["nums"] = .list(Self.sortedInts(nums)) }
                    if case .map(let marks) = o["marks"] {
                        o["marks"] = .list(
                            marks.map { e in
                                guard case .int(let v) = e.value else { return SyncValue.string("\(e.key)=?") }
                                return .string("\(e.key)=\(v)")
                            }.sorted { "\($0)" < "\($1)" })
                    }
                }
                out[id] = o
            }
            return out
        }
        #expect(normalized(replica) == expected, "seed \(seed)")
        #expect(acknowledged.count == uploads.values.map(\.count).reduce(0, +), "seed \(seed): every upload acknowledged")
    }
}
