import Foundation
import RealmStorage
@_exported import RealmTestSupport
import Testing

/// A finished run of one of the package's executables.
struct ToolRun {
    var code: Int32
    var stdout: String
    var stderr: String
}

enum Tools {
    /// The build directory holding the test bundle and, beside it, the executables.
    static func binary(_ name: String) -> String? { BuiltExecutable.path(name) }

    /// Starts `name` with `arguments` in `directory`; the caller waits for it.
    static func start(_ name: String, _ arguments: [String], in directory: String? = nil) throws -> (Process, Pipe, Pipe) {
        try start(executable: try #require(binary(name), "\(name) was not built next to the tests"), arguments, in: directory)
    }

    /// Starts the program at `path` with `arguments` in `directory`; the caller waits for it.
    static func start(executable path: String, _ arguments: [String], in directory: String? = nil) throws -> (Process, Pipe, Pipe) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = arguments
        if let directory { p.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe()
        let err = Pipe()
        p.standardOutput = out
        p.standardError = err
        p.standardInput = FileHandle.nullDevice
        try p.run()
        return (p, out, err)
    }

    /// Runs `name` to its end and collects its output.
    static func run(_ name: String, _ arguments: [String], in directory: String? = nil) throws -> ToolRun {
        try run(executable: try #require(binary(name), "\(name) was not built next to the tests"), arguments, in: directory)
    }

    /// Runs the program at `path` to its end and collects its output.
    static func run(executable path: String, _ arguments: [String], in directory: String? = nil) throws -> ToolRun {
        let (p, out, err) = try start(executable: path, arguments, in: directory)
        // Read both pipes to their ends before waiting, so a large output cannot block the child.
        let group = DispatchGroup()
        nonisolated(unsafe) var errData = Data()
        group.enter()
        DispatchQueue.global().async {
            errData = err.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        p.waitUntilExit()
        return ToolRun(
            code: p.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }

    static func dump(_ arguments: [String], in directory: String? = nil) throws -> ToolRun {
        try run("realm-dump", arguments, in: directory)
    }
    static func compact(_ arguments: [String], in directory: String? = nil) throws -> ToolRun {
        try run("realm-compact", arguments, in: directory)
    }

    /// Starts `StorageCrashWriter FILE hold`: a process that keeps the file open, pins its current
    /// version as "frozen", and waits to be killed. Returns once it said so.
    static func holder(_ path: String) throws -> Process {
        let (p, out, _) = try start("StorageCrashWriter", [path, "hold"])
        var line = ""
        while !line.contains("\n") {
            let d = out.fileHandleForReading.availableData
            if d.isEmpty { break }
            line += String(decoding: d, as: UTF8.self)
        }
        #expect(line.hasPrefix("holding"))
        return p
    }
}

/// The names and bytes of every file in a directory: what must not change when a file in it is
/// inspected.
func directoryState(_ dir: String) throws -> [String: [UInt8]] {
    var out: [String: [UInt8]] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: dir) {
        out[name] = Array(FileManager.default.contents(atPath: dir + "/" + name) ?? Data())
    }
    return out
}

func fileBytes(_ path: String) -> [UInt8] { Array(FileManager.default.contents(atPath: path) ?? Data()) }

func writeBytes(_ path: String, _ bytes: [UInt8]) {
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
}

/// Fixture files made with the engine.
enum Fixture {
    /// A file with every column type, tricky values (quotes, commas, newlines, non-ASCII, nulls,
    /// NaN, instants before 1970), links, lists, sets, maps and mixed values, written in four
    /// commits (an insert, an update, a delete) so that it has history and dead bytes. The lock
    /// file is removed: the directory holds the data file alone. With `chains` (the default) the
    /// three commits are chained after version 1; without, each is named by a header slot.
    static func allTypes(_ path: String, chains: Bool = true) throws {
        do {
            var options = Store.Options(create: true, rowGroupCapacity: 4)
            options.chainsCommits = chains
            let store = try Store.open(at: path, options: options)
            var tx = try store.beginWrite()
            try tx.createTable("Dog", primaryKey: ColumnSchema("name", .string))
            try tx.addColumn("Dog", ColumnSchema("age", .int))
            try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
            for c in [
                ColumnSchema("name", .string, indexed: true), ColumnSchema("age", .int), ColumnSchema("score", .double, nullable: true),
                ColumnSchema("ratio", .float), ColumnSchema("active", .bool), ColumnSchema("born", .timestamp, nullable: true),
                ColumnSchema("photo", .binary, nullable: true), ColumnSchema("oid", .objectId), ColumnSchema("uid", .uuid),
                ColumnSchema("price", .decimal128), ColumnSchema("best", .link, nullable: true, linkTarget: "Dog"),
                ColumnSchema("dogs", .link, list: true, linkTarget: "Dog"), ColumnSchema("tags", .string, list: true),
                ColumnSchema("lucky", .int, set: true), ColumnSchema("scores", .int, nullable: true, map: true),
                ColumnSchema("extra", .mixed, nullable: true),
            ] {
                try tx.addColumn("Person", c)
            }
            let rex = try tx.insert("Dog", ["name": .string("Rex"), "age": .int(3)])
            let fido = try tx.insert("Dog", ["name": .string("Fido, \"the\" dog"), "age": .int(11)])
            for i in 0..<10 {
                try tx.insert("Person", person(i, rex, fido))
            }
            try tx.commit()
            tx = try store.beginWrite()
            for k in stride(from: 0, to: 10, by: 3) { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(99)) }
            try tx.commit()
            tx = try store.beginWrite()
            try tx.delete("Person", ObjectKey(4))
            try tx.commit()
        }
        SystemFile.unlink(path + ".lock")
    }

    static func person(_ i: Int, _ rex: ObjectKey, _ fido: ObjectKey) -> [String: StorageValue] {
        let names = ["Ada", "Grace, \"Amazing\"", "Line\nbreak", "Émile", " padded ", "", "Zoë", "comma,comma", "Tab\there", "最后"]
        let extras: [StorageValue] = [
            .int(7), .string("text"), .double(2.5), .bool(true), .null, .timestamp(seconds: 0, nanoseconds: 500_000_000),
            .objectId(Array(0..<12)), .typedLink(table: 1, key: rex), .binary([0, 255]), .decimal128(low: 15, high: 0x303C_0000_0000_0000),
        ]
        return [
            "id": .int(Int64(i) * 10 - 20),
            "name": .string(names[i]),
            "age": .int(Int64(i * 7 % 100)),
            "score": i == 3 ? .null : .double(i == 5 ? .nan : Double(i) / 4),
            "ratio": .float(Float(i) / 3),
            "active": .bool(i % 2 == 0),
            "born": i == 2 ? .null : .timestamp(seconds: Int64(i - 5) * 86_400 * 4000, nanoseconds: Int32(i * 1_000_000)),
            "photo": i % 3 == 0 ? .binary([UInt8](repeating: UInt8(i), count: i)) : .null,
            "oid": .objectId((0..<12).map { UInt8(($0 * 17 + i) & 255) }),
            "uid": .uuid(UUID(uuidString: String(format: "6F9619FF-8B86-D011-B42D-00C04FC964%02X", i))!),
            "price": .decimal128(low: UInt64(i * 125), high: 0x303A_0000_0000_0000),
            "best": i % 4 == 1 ? .null : .link(i % 2 == 0 ? rex : fido),
            "dogs": .list(i % 2 == 0 ? [.link(rex), .link(fido)] : []),
            "tags": .list((0..<(i % 3)).map { .string("t\($0),\"x\"") }),
            "lucky": .list([.int(Int64(i)), .int(Int64(i + 1))]),
            "scores": .map(i % 2 == 0 ? ["chess": .int(Int64(i * 100)), "go": .null] : [:]),
            "extra": extras[i],
        ]
    }

    /// A table of `count` people written in `rounds` commits, each rewriting every object's age:
    /// a file with many dead bytes.
    static func people(_ path: String, count: Int, rounds: Int, payload: Int = 16) throws {
        do {
            let store = try Store.open(at: path, options: .init(create: true))
            var tx = try store.beginWrite()
            try tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
            try tx.addColumn("Person", ColumnSchema("name", .string))
            try tx.addColumn("Person", ColumnSchema("age", .int))
            try tx.addColumn("Person", ColumnSchema("note", .string))
            var rng = SplitMix(seed: 42)
            for i in 0..<count {
                let note = String((0..<payload).map { _ in Character(UnicodeScalar(UInt8(97 + rng.next() % 26))) })
                try tx.insert("Person", row: [.int(Int64(i)), .string("name-\(i % 1000)"), .int(Int64(i % 100)), .string(note)])
            }
            try tx.commit()
            for r in 0..<rounds {
                tx = try store.beginWrite()
                for k in stride(from: r % 2, to: count, by: 2) { try tx.set("Person", ObjectKey(Int64(k)), "age", .int(Int64(r))) }
                try tx.commit()
            }
        }
        SystemFile.unlink(path + ".lock")
    }
}
