/// Whether `reference` holds the only reference of any kind to its object: no other strong,
/// unowned or weak one (a cache may then reuse the object for something else unseen). The counts
/// are read through an unretained handle, so the check itself retains nothing.
@inlinable @inline(__always)
package func isSolelyReferenced<T: AnyObject>(_ reference: inout T?) -> Bool {
    guard isKnownUniquelyReferenced(&reference), reference != nil else { return false }
    return Unmanaged.passUnretained(reference!)._withUnsafeGuaranteedRef {
        _getUnownedRetainCount($0) == 1 && _getWeakRetainCount($0) <= 1
    }
}
