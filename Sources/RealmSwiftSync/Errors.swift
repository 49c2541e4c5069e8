import Foundation
import RealmSwift
import RealmSyncProtocol

/// An error of a sync session, as RealmSwift's `SyncError` codes name them. The session's error
/// handler (``SyncConfiguration`` or ``SyncManager/errorHandler``) receives them; waits and
/// subscription updates throw them.
///
/// ```swift
/// app.syncManager.errorHandler = { error, session in
///     if let error = error as? SyncError, error.code == .invalidFlexibleSyncSubscriptions { … }
/// }
/// ```
public struct SyncError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of error it is (RealmSwift's `SyncError.Code` values).
    public enum Code: Int, Sendable {
        /// The session failed for a reason not listed here (a protocol error, the store failed).
        case clientSessionError = 4
        /// The user's login is not valid (a token the server refused).
        case clientUserError = 5
        /// The client failed itself (its file's sync state is damaged).
        case clientInternalError = 6
        /// The file cannot go on syncing as it is (the server does not know it, or its history
        /// was compacted before it was uploaded).
        case clientResetError = 7
        /// The server refused the user's credentials.
        case underlyingAuthError = 8
        /// The user may not do what was asked.
        case permissionDeniedError = 9
        /// A subscription's query is not supported or names an unknown class or property.
        case invalidFlexibleSyncSubscriptions = 10
        /// The server refused a write (an object outside every subscription, a bad value).
        case writeRejected = 11
        /// The server could not be reached or the connection failed; the session retries.
        case connectionFailed = 12
        /// The server sent a warning that did not stop the session.
        case serverWarning = 14
    }

    /// The kind of error.
    public let code: Code
    /// What happened, for people.
    public let message: String
    /// Whether the session stopped because of it (it then stays inactive until resumed).
    public let isFatal: Bool
    /// For `.writeRejected`: the objects whose writes were undone.
    public let compensatingWriteInfo: [CompensatingWriteInfo]?
    /// For a client reset in `.manual` mode: where the file goes when the reset is carried out.
    let backupPath: String?
    /// For a client reset in `.manual` mode: the file to reset.
    let resetPath: String?
    /// The protocol's error code (Spec/SYNC.md §9) when the server sent the error.
    var serverCode: UInt64?
    /// Whether the server asked for a client reset (error 11).
    var resetRequested: Bool { serverCode == 11 }

    init(
        _ code: Code, _ message: String, fatal: Bool = false, compensatingWriteInfo: [CompensatingWriteInfo]? = nil,
        backupPath: String? = nil, resetPath: String? = nil
    ) {
        self.code = code
        self.message = message
        self.isFatal = fatal
        self.compensatingWriteInfo = compensatingWriteInfo
        self.backupPath = backupPath
        self.resetPath = resetPath
    }

    /// What carries out a client reset in `.manual` mode (RealmSwift's `SyncError.ActionToken`):
    /// given to ``SyncSession/immediatelyHandleError(_:syncManager:)``.
    public struct ActionToken: Sendable, Equatable {
        let path: String
        let backupPath: String
    }

    /// For a `.clientResetError` in `.manual` mode: the path the file is moved to when the reset
    /// is carried out, and the token that carries it out (RealmSwift's `clientResetInfo()`).
    public func clientResetInfo() -> (String, ActionToken)? {
        guard code == .clientResetError, let backupPath, let resetPath else { return nil }
        return (backupPath, ActionToken(path: resetPath, backupPath: backupPath))
    }

    /// The error's code and message.
    public var description: String { "SyncError(\(code)): \(message)" }
    /// The message (Foundation's name).
    public var localizedDescription: String { message }

    /// The error an `ERROR` message of the protocol stands for (Spec/SYNC.md §9).
    static func fromServer(code: UInt64, message: String, fatal: Bool) -> SyncError {
        let kind: Code =
            switch code {
            case 2: .clientUserError
            case 4, 5, 6: .clientSessionError
            case 7: .invalidFlexibleSyncSubscriptions
            case 8: .writeRejected
            case 9, 11: .clientResetError
            default: .clientSessionError
            }
        // Too many sessions (12): the server closes the connection, and the client tries again later.
        var error = SyncError(kind, "the server reported error \(code): \(message)", fatal: fatal && code != 12)
        error.serverCode = code
        return error
    }
}

/// An object whose write was undone because no subscription matches it, or the user's role may
/// not make it (RealmSwift's `CompensatingWriteInfo`).
public struct CompensatingWriteInfo: Equatable, Sendable {
    /// The object's class.
    public let objectType: String
    /// Why the write was undone.
    public let reason: String
    let key: SyncValue

    /// The object's primary key.
    public var primaryKey: AnyRealmValue {
        switch key {
        case .int(let i): .int(Int(i))
        case .string(let s): .string(s)
        case .objectId(let b): ObjectId(bytes: b).map { .objectId($0) } ?? .none
        case .uuid(let b) where b.count == 16: .uuid(SyncFile.uuid(b))
        default: .none
        }
    }

    init(objectType: String, primaryKey: SyncValue, reason: String = "no subscription of the client matches the object") {
        self.objectType = objectType
        self.key = primaryKey
        self.reason = reason
    }
}

/// An error of the application's HTTP services (logging in), as RealmSwift's `AppError`.
public struct AppError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of error it is (RealmSwift's `AppError.Code` values that apply here).
    public enum Code: Int, Sendable {
        /// Something not listed here.
        case unknown = -1
        /// The HTTP request failed: the server could not be reached or answered with an error.
        case httpRequestFailed = 1
        /// The session (a refresh token) is no longer valid: log in again.
        case invalidSession = 2
        /// The credentials were refused.
        case authError = 27
    }

    /// The kind of error.
    public let code: Code
    /// What happened, for people.
    public let message: String
    /// The HTTP status the server answered with, if it answered.
    public let httpStatusCode: Int?

    init(_ code: Code, _ message: String, status: Int? = nil) {
        self.code = code
        self.message = message
        self.httpStatusCode = status
    }

    /// The error's code and message.
    public var description: String { "AppError(\(code)): \(message)" }
    /// The message (Foundation's name).
    public var localizedDescription: String { message }
}
