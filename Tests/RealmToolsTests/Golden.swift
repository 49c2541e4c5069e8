import Foundation
import Testing

/// Golden output files under `Tests/RealmToolsTests/Golden/`. Regenerate them (then read the diff)
/// with `REALM_WRITE_GOLDEN=1 swift test --filter RealmToolsTests`.
enum Golden {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden").path
    static var writing: Bool { ProcessInfo.processInfo.environment["REALM_WRITE_GOLDEN"] == "1" }

    /// Commit times (this century's, from now on) become `<time>`; the values stored in the
    /// fixtures are all older, so they stay.
    static func normalize(_ text: String, replacing paths: [String: String] = [:]) -> String {
        var out = text
        for (path, name) in paths { out = out.replacingOccurrences(of: path, with: name) }
        return out.replacingOccurrences(of: #"20[2-9]\d-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z"#, with: "<time>", options: .regularExpression)
    }

    /// Compares `actual` with the golden file `name` (or writes it when regenerating).
    static func check(_ name: String, _ actual: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let path = directory + "/" + name
        if writing {
            try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: path, contents: Data(actual.utf8))
            return
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            Issue.record("golden file \(name) is missing; run with REALM_WRITE_GOLDEN=1", sourceLocation: sourceLocation)
            return
        }
        let expected = String(decoding: data, as: UTF8.self)
        guard expected != actual else { return }
        let a = actual.components(separatedBy: "\n")
        let e = expected.components(separatedBy: "\n")
        let line = Array(zip(a, e)).firstIndex { $0 != $1 } ?? min(a.count, e.count)
        Issue.record(
            "\(name) differs at line \(line + 1):\n  expected: \(line < e.count ? e[line] : "<end>")\n  actual:   \(line < a.count ? a[line] : "<end>")",
            sourceLocation: sourceLocation)
    }
}
