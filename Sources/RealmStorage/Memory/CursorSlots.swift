/// The segments of one row group an object accessor reads, by property, filled on demand and read
/// in place: the per-read path of `RealmSwift`'s accessors, which see only these typed reads and
/// never a cursor or a pointer.
///
/// Why it is here: a Swift array held in a class property is read under a dynamic exclusivity
/// check (a runtime call that looks the access up in thread-local storage, ~70 instructions when
/// the access may overlap a call), and a ``SegmentCursor`` is ~200 bytes, copied at each step out
/// of an array; both cost more than the rest of a property read. This table keeps its cursors in
/// memory it allocated itself and reads them in place, so a read is a bounds check, a load and
/// the cursor's own read. It is safe by construction: the memory is owned (freed in `deinit`, after
/// deinitializing every cursor), every index is checked, each cursor's segment reader is kept with
/// it (so the memory the cursor reads stays alive as long as the table), no pointer or cursor
/// leaves the type, and the owner is confined to one thread (not `Sendable`), as its users'
/// contract already requires.
package final class CursorSlots {
    private let base: UnsafeMutablePointer<SegmentCursor?>
    /// The segment readers whose memory the cursors read.
    private var owners: [SegmentReader?]
    /// The number of slots.
    package let count: Int

    /// `count` empty slots.
    package init(count: Int) {
        precondition(count >= 0)
        self.count = count
        owners = [SegmentReader?](repeating: nil, count: count)
        base = UnsafeMutablePointer<SegmentCursor?>.allocate(capacity: max(count, 1))
        base.initialize(repeating: nil, count: count)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    @inline(__always)
    private func check(_ i: Int) {
        precondition(i >= 0 && i < count, "slot index out of range")
    }

    /// Whether slot `i` was filled (by ``fill(_:with:)`` or ``fillEmpty(_:)``).
    package func isFilled(_ i: Int) -> Bool {
        check(i)
        if case Optional<SegmentCursor>.none = base[i] { return false }
        return true
    }

    /// Fills slot `i` with `segment`'s cursor (and keeps `segment`).
    package func fill(_ i: Int, with segment: SegmentReader) {
        check(i)
        owners[i] = segment
        base[i] = segment.rowCursor
    }

    /// Fills slot `i` with a cursor that answers nothing (every read falls back).
    package func fillEmpty(_ i: Int) {
        check(i)
        base[i] = SegmentCursor.none
    }

    // Four typed reads, not one generic read taking a closure: optional chaining reads the cursor
    // in place, where handing it to a closure copies it (and retains its short-string table).

    /// Row `row` of slot `i`'s integer lane (nil: empty slot, or the cursor cannot answer; see
    /// ``SegmentCursor``).
    package func int(_ i: Int, _ row: Int) -> Int64? {
        check(i)
        return base[i]?.int(row)
    }

    /// Row `row` of slot `i`'s `double` segment.
    package func double(_ i: Int, _ row: Int) -> Double? {
        check(i)
        return base[i]?.double(row)
    }

    /// Row `row` of slot `i`'s `float` segment.
    package func float(_ i: Int, _ row: Int) -> Float? {
        check(i)
        return base[i]?.float(row)
    }

    /// Row `row` of slot `i`'s `string` segment.
    package func string(_ i: Int, _ row: Int) -> String? {
        check(i)
        return base[i]?.string(row)
    }
}
