import Foundation

/// A fresh temporary directory per test, removed when the value goes away.
///
/// `@unchecked Sendable`: immutable after `init`.
public final class TempDir: @unchecked Sendable {
    /// The directory's path.
    public let path: String

    public init() {
        path = NSTemporaryDirectory() + "realm-tests-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// The path of a file in the directory.
    public func file(_ name: String = "test.realm") -> String { path + "/" + name }

    /// The URL of a file in the directory.
    public func url(_ name: String = "test.realm") -> URL { URL(fileURLWithPath: file(name)) }
}
