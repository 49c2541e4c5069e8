// New arrays through the growth path the compiler specializes for the element type.
// `Array(repeating:count:)` and `Array(unsafeUninitializedCapacity:)` allocate through an entry point
// that is not specialized: it looks up the storage class's type metadata on every call, several
// hundred instructions, more than filling a small array (a one-object commit made a dozen).

/// The first `count` elements of `source` as a new array with room for `capacity` elements, copied
/// in one step: appending an array slice of structs copies them one by one, which for the row-group
/// list and index directory of a large table cost more than the rest of a one-object commit's list
/// work.
func prefixCopy<T: BitwiseCopyable>(_ source: [T], _ count: Int, capacity: Int) -> [T] {
    precondition(count >= 0 && count <= source.count)
    var out: [T] = []
    out.reserveCapacity(Swift.max(capacity, count))
    source.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[..<count])) }
    return out
}

/// `count` copies of `value`.
func filledArray<T>(_ value: T, count: Int) -> [T] {
    var out: [T] = []
    out.reserveCapacity(count)
    for _ in 0..<count { out.append(value) }
    return out
}

/// A byte array of `count` bytes that `fill` writes; it returns how many it wrote (at most `count`,
/// the array's length). Large arrays are allocated uninitialized (the lookup is nothing to them);
/// small ones are zeroed first.
func newBytes(count: Int, _ fill: (UnsafeMutableRawBufferPointer) throws -> Int) rethrows -> [UInt8] {
    precondition(count >= 0)
    if count > 1 << 14 {
        return try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            initialized = try fill(UnsafeMutableRawBufferPointer(buffer))
            precondition(initialized >= 0 && initialized <= count)
        }
    }
    var out: [UInt8] = []
    out.reserveCapacity(count)
    out.append(contentsOf: repeatElement(0, count: count))
    let n = try out.withUnsafeMutableBytes { try fill($0) }
    precondition(n >= 0 && n <= count)
    out.removeLast(count - n)
    return out
}
