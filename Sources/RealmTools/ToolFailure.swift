import RealmStorage

/// The exit codes of `realm-dump` and `realm-compact`.
package enum ToolExitCode: Int32, Sendable, CaseIterable {
    /// Done; for `--verify`, no problem found.
    case ok = 0
    /// Bad arguments: an unknown option, a missing file, an unknown table, an invalid predicate.
    case usage = 1
    /// The file is not a Realm file, or its format version is not one this library reads.
    case notARealmFile = 2
    /// The file (or, for `realm-compact`, the copy) is damaged: the message names the byte offset.
    case corrupted = 3
    /// `realm-compact` only: another process has the file open (the message names its pid).
    case inUse = 4
    /// Any other failure of the world: an I/O error, no permission, no space.
    case failure = 5
    /// `realm-dump --verify` only: damage in dead bytes alone (a commit head recovery no longer
    /// needs): every version reads and nothing is lost, but the medium may be failing.
    case damagedDeadBytes = 6
}

/// A failure the tools report with a message and an exit code. `Sendable`.
package struct ToolFailure: Error, Sendable, CustomStringConvertible {
    package var code: ToolExitCode
    package var message: String
    /// The byte offset of the damage, for ``ToolExitCode/corrupted``.
    package var offset: UInt64?

    package init(_ code: ToolExitCode, _ message: String, offset: UInt64? = nil) {
        self.code = code
        self.message = message
        self.offset = offset
    }

    /// The failure a storage error means to a tool user.
    package init(_ e: StorageError) {
        switch e.code {
        case .notARealmFile, .unsupportedFormatVersion: self.init(.notARealmFile, e.reason)
        case .corrupted: self.init(.corrupted, e.offset.map { "at byte \($0): \(e.reason)" } ?? e.reason, offset: e.offset)
        case .inUseByAnotherProcess, .compactionInProgress: self.init(.inUse, e.reason)
        case .fileNotFound: self.init(.usage, "no such file")
        case .notFound, .fileExists: self.init(.usage, e.reason)
        default: self.init(.failure, e.description)
        }
    }

    /// Any error as a tool failure.
    package static func from(_ error: any Error) -> ToolFailure {
        if let f = error as? ToolFailure { return f }
        if let e = error as? StorageError { return ToolFailure(e) }
        return ToolFailure(.failure, "\(error)")
    }

    package var description: String { message }

    /// The failure as JSON: `{"exitCode": 3, "error": "...", "offset": 123}`.
    package var json: JSONValue {
        .object([("exitCode", .int(code.rawValue)), ("error", .string(message)), ("offset", .int(offset))])
    }
}
