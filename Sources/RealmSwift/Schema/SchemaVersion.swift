import Foundation
import RealmStorage

/// The schema version stored in the Realm file at `fileURL` (0 for a file no schema version was
/// ever set in), read without opening the file for writing or changing anything beside it, as
/// RealmSwift's `schemaVersionAtURL` does. Useful before opening a Realm, to decide on a migration.
///
/// ```swift
/// let version = try schemaVersionAtURL(url)
/// ```
/// - Parameters:
///   - fileURL: the Realm file.
///   - encryptionKey: files are not encrypted on this platform (see the DocC article
///     "Differences from RealmSwift"); a key is refused with ``Realm/Error/Code/invalidDatabase``.
/// - Throws: ``Realm/Error`` — `.fileNotFound`, `.invalidDatabase` (not a Realm file, damaged),
///   I/O errors.
public func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
    if encryptionKey != nil {
        throw Realm.Error(.invalidDatabase, "encrypted Realm files are not supported on this platform", path: fileURL.path)
    }
    return try realmErrors {
        let store = try Store.open(at: fileURL.path, options: .init(readOnly: true))
        return SchemaSetup.storedVersion(try store.snapshot(kind: "other"))
    }
}

extension Realm {
    /// The schema version stored in the Realm file at `fileURL`: the same as the top-level
    /// ``schemaVersionAtURL(_:encryptionKey:)``.
    /// - Throws: ``Realm/Error``.
    public static func schemaVersionAtURL(_ fileURL: URL, encryptionKey: Data? = nil) throws -> UInt64 {
        try RealmSwift.schemaVersionAtURL(fileURL, encryptionKey: encryptionKey)
    }
}
