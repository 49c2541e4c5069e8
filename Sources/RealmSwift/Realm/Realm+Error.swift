import RealmQuery
import RealmStorage

extension Realm {
    /// An error thrown by Realm: a problem of the world (I/O, a damaged or locked file, a schema
    /// mismatch, the active-version limit) or of input text. Match codes in `catch`:
    ///
    /// ```swift
    /// do { _ = try Realm(configuration: config) }
    /// catch Realm.Error.schemaMismatch { ... }
    /// catch let error as Realm.Error where error.code == .fileNotFound { ... }
    /// ```
    ///
    /// `Sendable`.
    public struct Error: Swift.Error, CustomStringConvertible, Sendable, Equatable {
        /// Stable error codes; raw values are never reused.
        public enum Code: Int, Sendable, CaseIterable {
            /// An operation failed (the description says why).
            case fail = 1
            /// The file could not be read or written (I/O).
            case fileAccess = 2
            /// The process lacks permission to open or create the file.
            case filePermissionDenied = 3
            /// The file already exists.
            case fileExists = 4
            /// The file does not exist (and was opened read-only, or creation was not allowed).
            case fileNotFound = 5
            /// The lock file beside the Realm file is unusable.
            case incompatibleLockFile = 6
            /// The file was written by a newer format version.
            case fileFormatUpgradeRequired = 7
            /// The file is not a Realm file or is damaged.
            case invalidDatabase = 8
            /// The model classes differ from the file's schema and no migration was provided.
            case schemaMismatch = 10
            /// Another process has the file open and the operation needs exclusive access.
            case inUse = 11
            /// A commit would leave more pinned versions than `maximumNumberOfActiveVersions` allows.
            case maximumNumberOfActiveVersionsExceeded = 12
            /// An object with the same primary key already exists.
            case primaryKeyExists = 13
            /// A property, class or key path named at run time does not exist.
            case invalidProperty = 14
            /// A value does not fit the property's type.
            case invalidValue = 15
            /// A write was attempted on a read-only or frozen Realm.
            case readOnly = 16
            /// A query's text is malformed, names an unknown property, or mismatches types (the
            /// description shows the position).
            case invalidQuery = 17
            /// A sync server refused a subscription set (RealmSwiftSync's `subscriptions.update`,
            /// `Results.subscribe`): a query it does not support, or a class it does not sync.
            case subscriptionFailed = 18
        }

        /// What went wrong, as a stable code.
        public let code: Code
        /// A human-readable explanation.
        public let reason: String
        /// The file involved, when known.
        public let path: String?
        /// The underlying storage error, when there is one.
        public let underlying: StorageError?
        /// For ``Code/invalidQuery``: the query engine's error, typed (its code, message, and the
        /// offset of the problem in the query text), as thrown.
        package let query: QueryError?

        /// For ``Code/invalidQuery`` from query text: where in the text the problem is, in Unicode
        /// scalars from its start (nil when it has no single place, or the query was built with
        /// `where { }`). ``reason`` shows the text with a caret under it.
        public var queryOffset: Int? { query?.offset }

        /// An error of `code` with `reason` (for the sync module, which reports subscription
        /// failures in RealmSwift's error type).
        package init(code: Code, reason: String) { self.init(code, reason) }

        init(_ code: Code, _ reason: String, path: String? = nil, underlying: StorageError? = nil) {
            self.code = code
            self.reason = reason
            self.path = path
            self.underlying = underlying
            self.query = nil
        }

        /// `.invalidQuery` for an error of the query engine (kept typed when it is a
        /// ``QueryError``; a `Realm.Error` passes through as it is).
        static func query(_ error: any Swift.Error) -> Realm.Error {
            if let e = error as? Realm.Error { return e }
            if let e = error as? QueryError { return Realm.Error(query: e) }
            return Realm.Error(.invalidQuery, "\(error)")
        }

        /// `.invalidQuery` for the query engine's error `error`, kept typed.
        private init(query error: QueryError) {
            self.code = .invalidQuery
            self.reason = "\(error)"
            self.path = nil
            self.underlying = nil
            self.query = error
        }

        public var description: String { "Realm.Error.\(code): \(reason)" + (path.map { " (\($0))" } ?? "") }

        /// Each ``Code`` as a pattern of its own: `catch Realm.Error.primaryKeyExists { … }`.
        ///
        /// ``Code/fail``: an operation failed (the description says why).
        public static let fail = Code.fail
        /// ``Code/fileAccess``: the file could not be read or written (I/O).
        public static let fileAccess = Code.fileAccess
        /// ``Code/filePermissionDenied``: the process lacks permission to open or create the file.
        public static let filePermissionDenied = Code.filePermissionDenied
        /// ``Code/fileExists``: the file already exists.
        public static let fileExists = Code.fileExists
        /// ``Code/fileNotFound``: the file does not exist (and was opened read-only, or creation was not allowed).
        public static let fileNotFound = Code.fileNotFound
        /// ``Code/incompatibleLockFile``: the lock file beside the Realm file is unusable.
        public static let incompatibleLockFile = Code.incompatibleLockFile
        /// ``Code/fileFormatUpgradeRequired``: the file was written by a newer format version.
        public static let fileFormatUpgradeRequired = Code.fileFormatUpgradeRequired
        /// ``Code/invalidDatabase``: the file is not a Realm file or is damaged.
        public static let invalidDatabase = Code.invalidDatabase
        /// ``Code/schemaMismatch``: the model classes differ from the file's schema and no migration was provided.
        public static let schemaMismatch = Code.schemaMismatch
        /// ``Code/inUse``: another process has the file open and the operation needs exclusive access.
        public static let inUse = Code.inUse
        /// ``Code/maximumNumberOfActiveVersionsExceeded``: a commit would leave more pinned versions than
        /// `maximumNumberOfActiveVersions` allows.
        public static let maximumNumberOfActiveVersionsExceeded = Code.maximumNumberOfActiveVersionsExceeded
        /// ``Code/primaryKeyExists``: an object with the same primary key already exists.
        public static let primaryKeyExists = Code.primaryKeyExists
        /// ``Code/invalidProperty``: a property, class or key path named at run time does not exist.
        public static let invalidProperty = Code.invalidProperty
        /// ``Code/invalidValue``: a value does not fit the property's type.
        public static let invalidValue = Code.invalidValue
        /// ``Code/readOnly``: a write was attempted on a read-only or frozen Realm.
        public static let readOnly = Code.readOnly
        /// ``Code/invalidQuery``: a query's text is malformed, names an unknown property, or mismatches
        /// types (the description shows the position).
        public static let invalidQuery = Code.invalidQuery
        /// ``Code/subscriptionFailed``, for `catch Realm.Error.subscriptionFailed`.
        public static let subscriptionFailed = Code.subscriptionFailed

        static func unknownProperty(_ name: String, _ className: String) -> Error {
            Error(.invalidProperty, "class '\(className)' has no property named '\(name)'")
        }

        /// The Realm error for a storage error.
        init(_ e: StorageError) {
            let code: Code =
                switch e.code {
                case .notARealmFile, .corrupted: .invalidDatabase
                case .unsupportedFormatVersion: .fileFormatUpgradeRequired
                case .inUseByAnotherProcess, .compactionInProgress: .inUse
                case .maximumNumberOfActiveVersionsExceeded: .maximumNumberOfActiveVersionsExceeded
                case .io: e.errno == 13 || e.errno == 1 ? .filePermissionDenied : .fileAccess
                case .readOnly: .readOnly
                case .notFound: .invalidProperty
                case .typeMismatch: .invalidValue
                case .duplicatePrimaryKey: .primaryKeyExists
                case .invalidSchema: .schemaMismatch
                case .fileExists: .fileExists
                case .fileNotFound: .fileNotFound
                case .invalidTransactionState, .hardLinked: .fail
                case .superseded: .fileAccess
                }
            self.init(code, e.reason, path: e.path, underlying: e)
        }
    }
}

/// Lets `catch Realm.Error.fileNotFound` match a ``Realm/Error`` with that code.
public func ~= (code: Realm.Error.Code, error: any Swift.Error) -> Bool {
    (error as? Realm.Error)?.code == code
}

/// Runs `body`, converting storage errors to ``Realm/Error``.
func realmErrors<T>(_ body: () throws -> T) throws -> T {
    do { return try body() } catch let e as StorageError { throw Realm.Error(e) }
}
