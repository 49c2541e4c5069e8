import Foundation

/// Where a tool's output goes: standard output for results, standard error for messages and
/// progress. Tests capture both. Not `Sendable`: a tool runs on one thread.
package struct Console {
    package var out: (String) -> Void
    package var err: (String) -> Void

    package init(out: @escaping (String) -> Void, err: @escaping (String) -> Void) {
        self.out = out
        self.err = err
    }

    /// The process's standard output (buffered by stdio) and standard error (flushed first, so the
    /// two keep their order on a terminal).
    package static var standard: Console {
        Console(
            out: { print($0, terminator: "") },
            err: { text in
                fflush(nil)
                FileHandle.standardError.write(Data(text.utf8))
            })
    }
}
