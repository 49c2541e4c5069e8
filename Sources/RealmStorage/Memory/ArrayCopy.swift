/// The first `count` elements of `source` as a new array with room for `capacity` elements, copied
/// in one step: appending an array slice of structs copies them one by one, which for the row-group
/// list and index directory of a large table cost more than the rest of a one-object commit's list
/// work.
func prefixCopy<T: BitwiseCopyable>(_ source: [T], _ count: Int, capacity: Int) -> [T] {
    precondition(count >= 0 && count <= source.count)
    return [T](unsafeUninitializedCapacity: Swift.max(capacity, count)) { buffer, initialized in
        source.withUnsafeBufferPointer { src in
            if count > 0, let from = src.baseAddress, let to = buffer.baseAddress { to.initialize(from: from, count: count) }
        }
        initialized = count
    }
}
