import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The identity of the calling thread (`pthread_self`), for thread-confinement checks in the
/// layers above. Cheap enough to call on every access.
@inlinable @inline(__always)
package func currentThreadIdentity() -> UInt {
    UInt(bitPattern: Int(bitPattern: UInt(pthread_self())))
}
