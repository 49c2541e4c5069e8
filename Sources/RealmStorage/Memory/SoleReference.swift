/// Whether a variable holds the only reference of any kind to its object: no other strong,
/// unowned or weak one (a cache may then reuse the object for something else unseen).
///
/// Swift's runtime answers through three calls (the strong, unowned and weak counts: ~50
/// instructions, a tenth of what iterating an object costs). The check first compares the
/// object's reference-count word with the word of an object that is referenced once and nothing
/// else, read from a probe at first use; a different word is asked of the runtime, so the answer
/// never rests on the comparison alone saying yes wrongly. The word's layout is the runtime's
/// own, so the probe also confirms that the word changes with each kind of reference (one more
/// strong, one unowned, one weak) and returns when they go; if any of that does not hold, the
/// comparison is never used.
@usableFromInline package struct SoleReferenceCheck: Sendable {
    /// The reference-count word of a solely referenced object; 0 when the probe failed.
    @usableFromInline let soleWord: UInt64

    /// The check for this process (probed once).
    package static let shared = SoleReferenceCheck(soleWord: probeSoleWord())

    /// The check that always asks the runtime (tests compare the two).
    package static let runtimeOnly = SoleReferenceCheck(soleWord: 0)

    init(soleWord: UInt64) { self.soleWord = soleWord }

    /// Whether the probe recognized the reference-count word, so the comparison is used.
    package var comparesWords: Bool { soleWord != 0 }

    @inlinable
    static func runtimeSaysSole<T: AnyObject>(_ reference: inout T?) -> Bool {
        guard isKnownUniquelyReferenced(&reference), reference != nil else { return false }
        return Unmanaged.passUnretained(reference!)._withUnsafeGuaranteedRef {
            _getUnownedRetainCount($0) == 1 && _getWeakRetainCount($0) <= 1
        }
    }
}

/// Whether `reference` holds the only reference of any kind to its object (false for nil), by
/// `check`. Reads the counts through an unretained handle, so the check itself retains nothing.
@inlinable @inline(__always)
package func isSolelyReferenced<T: AnyObject>(_ reference: inout T?, by check: SoleReferenceCheck) -> Bool {
    guard reference != nil else { return false }
    let handle = Unmanaged.passUnretained(reference.unsafelyUnwrapped)
    if check.soleWord != 0, referenceCountWord(handle.toOpaque()) == check.soleWord { return true }
    return SoleReferenceCheck.runtimeSaysSole(&reference)
}

/// The word after a native Swift object's metadata pointer: its inline reference counts. A plain
/// read, as `isKnownUniquelyReferenced`'s is: the answer is only meant to hold for references on
/// the caller's thread (another thread's reference only makes the word differ, and the answer no).
@inlinable @inline(__always)
func referenceCountWord(_ object: UnsafeMutableRawPointer) -> UInt64 {
    object.load(fromByteOffset: MemoryLayout<UnsafeRawPointer>.size, as: UInt64.self)
}

private final class Probe {}

private final class StrongHolder {
    let target: Probe
    init(_ target: Probe) { self.target = target }
}

private final class UnownedHolder {
    unowned let target: Probe
    init(_ target: Probe) { self.target = target }
}

private final class WeakHolder {
    weak var target: Probe?
    init(_ target: Probe) { self.target = target }
}

/// The reference-count word of a solely referenced probe, once the runtime agrees it is sole and
/// the word is seen to change with one more strong, unowned or weak reference (and to come back
/// when the strong and unowned ones go); 0 otherwise. Not optimized: the optimizer would remove
/// the extra references, which nothing uses.
@_optimize(none)
private func probeSoleWord() -> UInt64 {
    #if _pointerBitWidth(_64)
        var reference: Probe? = Probe()
        guard SoleReferenceCheck.runtimeSaysSole(&reference) else { return 0 }
        let handle = Unmanaged.passUnretained(reference!)
        func word() -> UInt64 { referenceCountWord(handle.toOpaque()) }
        let sole = word()
        guard sole != 0 else { return 0 }
        // One more strong reference.
        let strong = withExtendedLifetime(StrongHolder(reference!)) { _ in word() }
        guard strong != sole, word() == sole else { return 0 }
        // One unowned reference.
        let unowned = withExtendedLifetime(UnownedHolder(reference!)) { _ in
            (word(), _getUnownedRetainCount(reference!))
        }
        guard unowned.0 != sole, unowned.1 == 2, word() == sole, SoleReferenceCheck.runtimeSaysSole(&reference)
        else { return 0 }
        // One weak reference (the runtime moves the counts to a side table for good).
        let weak = withExtendedLifetime(WeakHolder(reference!)) { _ in
            (word(), SoleReferenceCheck.runtimeSaysSole(&reference))
        }
        guard weak.0 != sole, !weak.1 else { return 0 }
        return sole
    #else
        return 0
    #endif
}
