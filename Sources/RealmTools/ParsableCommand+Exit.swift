import ArgumentParser
import Foundation

extension ParsableCommand {
    /// Ends the process after a failed parse: `--help` and `--version` print to standard output and
    /// exit 0; every other parse or validation error prints its message to standard error and exits
    /// with ``ToolExitCode/usage`` (1), where ArgumentParser alone would use 64.
    package static func exitForParseError(_ error: any Error) -> Never {
        let message = fullMessage(for: error)
        if exitCode(for: error) == .success {
            print(message)
            Foundation.exit(ToolExitCode.ok.rawValue)
        }
        FileHandle.standardError.write(Data((message + "\n" + usageString() + "\n").utf8))
        Foundation.exit(ToolExitCode.usage.rawValue)
    }

    private static func usageString() -> String {
        "Run with --help for the modes and exit codes."
    }
}
