import Foundation
import Testing

/// What must not compile, as in RealmSwift: aggregates constrained to the types that have them
/// (issue 29). Each snippet is type-checked by `swiftc` against the RealmSwift module this test
/// run built; a control snippet that must compile shows the check itself works.
@Suite struct CompileTimeConstraintTests {
    static let models = """
        import Foundation
        import RealmSwift
        final class Item: Object {
            @Persisted var name = ""
            @Persisted var age = 0
            @Persisted var data = Data()
            @Persisted var when = Date()
            @Persisted var names: List<String>
        }
        """

    /// Type-checks `body` after the models; the exit status and the compiler's diagnostics.
    static func typecheck(_ body: String) throws -> (ok: Bool, output: String) {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        let modules = binary.deletingLastPathComponent().appendingPathComponent("Modules")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("snippet.swift")
        try (models + "\n" + body + "\n").write(to: file, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "swiftc", "-typecheck", "-swift-version", "6", "-I", modules.path, "-I", root.appendingPathComponent("Sources/CLZ4").path,
            "-I", root.appendingPathComponent("Sources/CLinuxIO").path,
            file.path,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus == 0, output)
    }

    @Test func allowedAggregatesCompile() throws {
        let result = try Self.typecheck(
            """
            func use(_ items: Results<Item>) {
                let total: Int = items.sum(ofProperty: "age")
                let latest: Date? = items.max(ofProperty: "when")
                let mean: Double? = items.average(ofProperty: "age")
                let first: Date? = items.min(of: \\.when)
                _ = (total, latest, mean, first)
            }
            """)
        #expect(result.ok, "\(result.output)")
    }

    @Test(arguments: [
        #"func f(_ items: Results<Item>) -> String { items.sum(ofProperty: "name") }"#,
        #"func f(_ items: Results<Item>) -> Double? { let s: String? = items.average(ofProperty: "name"); return nil }"#,
        #"func f(_ items: Results<Item>) -> Data? { items.max(ofProperty: "data") }"#,
        #"func f(_ items: Results<Item>) -> String { items.sum(of: \.name) }"#,
        #"func f(_ items: Results<Item>) -> Date? { let d: Date? = items.average(of: \.when); return d }"#,
        #"func f(_ item: Item) -> String { item.names.sum() }"#,
        #"func f(_ item: Item) -> Bool? { List<Bool>().max() }"#,
    ])
    func disallowedAggregatesDoNotCompile(_ snippet: String) throws {
        let result = try Self.typecheck(snippet)
        #expect(!result.ok, "compiled: \(snippet)")
        #expect(result.output.contains("error:"), "\(result.output)")
        #expect(!result.output.contains("no such module"), "\(result.output)")
    }
}
