import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The identity of the calling thread, for thread-confinement checks and the per-thread instance
/// cache of the layers above: a number drawn once per thread from a process-wide counter, so it is
/// never reused within the process. (`pthread_self` is not enough: the system hands a thread that
/// ended's value to a thread started later, and a Realm still referenced after its thread ended
/// must not pass as the new thread's.) One `pthread_getspecific` per call after the first.
@inline(__always)
package func currentThreadIdentity() -> UInt {
    if let slot = pthread_getspecific(ThreadIdentity.key) { return slot.load(as: UInt.self) }
    return ThreadIdentity.assign()
}

enum ThreadIdentity {
    /// The next identity to hand out; 0 is never one.
    private static let next = Atomic<UInt>(1)

    /// The thread-specific slot holding the thread's identity (freed when the thread exits).
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        let created = pthread_key_create(&key) { slot in slot?.deallocate() }
        precondition(created == 0, "pthread_key_create failed (\(created)): no thread-specific key is left")
        return key
    }()

    /// Draws the calling thread's identity and keeps it in its slot.
    static func assign() -> UInt {
        let id = next.add(1, ordering: .relaxed).oldValue
        let slot = UnsafeMutableRawPointer.allocate(byteCount: MemoryLayout<UInt>.size, alignment: MemoryLayout<UInt>.alignment)
        slot.storeBytes(of: id, as: UInt.self)
        pthread_setspecific(key, slot)
        return id
    }
}
