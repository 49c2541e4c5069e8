import Foundation

/// The package's executables that tests start as child processes (crash writers, the tools, the
/// sync server): built beside the test bundle by `swift build --build-tests`.
public enum BuiltExecutable {
    /// The path of the executable `name` next to the test bundle (or in the package's debug build
    /// directory), or nil when it was not built.
    public static func path(_ name: String) -> String? {
        let here = (CommandLine.arguments[0] as NSString).deletingLastPathComponent
        let candidates = [
            here, (here as NSString).deletingLastPathComponent,
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent(".build/debug").path,
        ]
        return candidates.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
