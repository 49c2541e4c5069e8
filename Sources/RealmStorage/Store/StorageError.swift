import Foundation

/// An error thrown by the storage engine.
///
/// Every problem of the world (I/O, a damaged file, a lock held by another process, the active-version
/// limit) surfaces as a `StorageError` with a stable ``Code`` and the context that explains it. Match
/// with `catch let error as StorageError where error.code == .corrupted`.
public struct StorageError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Stable error codes. Raw values are never reused.
    public enum Code: Int, Sendable, CaseIterable {
        /// The file does not start with the Realm magic bytes.
        case notARealmFile = 1
        /// The file was written by a format version this library cannot read.
        case unsupportedFormatVersion = 2
        /// A structure failed validation; ``StorageError/offset`` says where.
        case corrupted = 3
        /// Another process holds the file in a way that forbids the operation.
        case inUseByAnotherProcess = 4
        /// A commit would leave more pinned versions than `maximumNumberOfActiveVersions` allows.
        case maximumNumberOfActiveVersionsExceeded = 5
        /// A system call failed; ``StorageError/errno`` says why.
        case io = 6
        /// A write was attempted on a store opened read-only.
        case readOnly = 7
        /// A table, column or object named by the caller does not exist.
        case notFound = 8
        /// A value does not fit the column's type or nullability.
        case typeMismatch = 9
        /// An insert or update would store a primary key that already exists.
        case duplicatePrimaryKey = 10
        /// A schema change is invalid (duplicate name, bad link target, …).
        case invalidSchema = 11
        /// The file already exists (create) or does not exist (open).
        case fileExists = 12
        /// The file does not exist.
        case fileNotFound = 13
        /// A write transaction is required or already in progress.
        case invalidTransactionState = 14
        /// Another store (in this or another process) is compacting the file.
        case compactionInProgress = 15
        /// The file has more than one name (hard link): replacing it with a compacted copy would
        /// leave the other names on the old file, a second database (Spec/FORMAT.md §8).
        case hardLinked = 16
        /// The file was replaced by a compacted copy at another name (``StorageError/supersededBy``)
        /// and is no longer the database: it is reached through a name that still led to the old
        /// file (a hard link made while it was compacted). Open the path the error names.
        case superseded = 17
    }

    /// What went wrong, as a stable code.
    public var code: Code
    /// A human-readable explanation.
    public var reason: String
    /// The file involved, when known.
    public var path: String?
    /// The byte offset of the damaged structure, for ``Code/corrupted``.
    public var offset: UInt64?
    /// The operation that failed, for ``Code/io``.
    public var operation: String?
    /// The `errno` value, for ``Code/io``.
    public var errno: Int32?
    /// Active and maximum version counts, for ``Code/maximumNumberOfActiveVersionsExceeded``.
    public var active: Int?
    /// The limit that was reached (see ``active``).
    public var limit: Int?
    /// For a damaged commit chain (``Code/corrupted``): the newest version that exists in the file
    /// but cannot be reached because an earlier commit is damaged. Such a file opens only when
    /// salvaging is asked for (``Store/Options/salvage``).
    public var unreachableVersion: UInt64?
    /// For ``Code/superseded``: the path of the compacted copy that replaced the file, which is
    /// the database now.
    public var supersededBy: String?

    /// An error of `code` with a reason in words, and where known the file, byte offset, failed operation and `errno`.
    public init(
        _ code: Code, _ reason: String, path: String? = nil, offset: UInt64? = nil,
        operation: String? = nil, errno: Int32? = nil
    ) {
        self.code = code
        self.reason = reason
        self.path = path
        self.offset = offset
        self.operation = operation
        self.errno = errno
    }

    static func corrupted(_ reason: String, at offset: Int) -> StorageError {
        StorageError(.corrupted, reason, offset: UInt64(max(0, offset)))
    }

    static func maximumActiveVersions(active: Int, limit: Int) -> StorageError {
        var e = StorageError(
            .maximumNumberOfActiveVersionsExceeded,
            "committing would leave \(active) active versions, more than the limit of \(limit); release frozen snapshots first"
        )
        e.active = active
        e.limit = limit
        return e
    }

    func withPath(_ p: String) -> StorageError {
        var e = self
        if e.path == nil { e.path = p }
        return e
    }

    public var description: String {
        var s = "StorageError.\(code): \(reason)"
        if let offset { s += " (at byte offset \(offset))" }
        if let operation { s += " [\(operation)" + (errno.map { " errno \($0): \(String(cString: strerror($0)))" } ?? "") + "]" }
        if let path { s += " — \(path)" }
        return s
    }
}
