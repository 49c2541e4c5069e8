/// The single-value rows of one segment, read without retaining anything: the object accessors'
/// per-row path. Made by ``SegmentReader/cursor``; valid while that reader is alive (it keeps the
/// memory the cursors read).
///
/// Each read returns nil when it cannot answer here — a null row, a row out of range, a segment of
/// another lane, damaged offsets — and the caller then takes the checked path
/// (``SegmentReader/value(_:)``), which returns the null or throws with the reason. The object
/// accessors read cursors through ``CursorSlots``, which keeps each with its reader.
package struct SegmentCursor: Sendable {
    let rows: Int
    /// Whether `fixed` holds doubles, floats.
    let isDouble: Bool
    let isFloat: Bool
    let ints: LaneCursor?
    let fixed: FixedCursor?
    let items: ItemsCursor?
    /// For dictionary-encoded strings: the item of each row.
    let indices: LaneCursor?
    /// For strings decoded into memory: each row's short string, ready (see ``ShortStringTable``).
    private(set) var shorts: ShortStringTable?
    /// Present only when the segment has nulls.
    let validity: FixedCursor?

    /// A cursor that answers nothing (every read falls back).
    package static let none = SegmentCursor(
        rows: 0, type: .int, ints: nil, fixed: nil, items: nil, indices: nil, shorts: nil, validity: nil)

    init(
        rows: Int, type: ColumnType, ints: LaneCursor?, fixed: FixedCursor?, items: ItemsCursor?, indices: LaneCursor?,
        shorts: ShortStringTable?, validity: FixedCursor?
    ) {
        self.rows = rows
        isDouble = type == .double
        isFloat = type == .float
        self.ints = ints
        self.fixed = fixed
        self.items = items
        self.indices = indices
        self.shorts = shorts
        self.validity = validity
    }

    /// This cursor with `shorts` as its short-string table.
    func with(shorts: ShortStringTable) -> SegmentCursor {
        var c = self
        c.shorts = shorts
        return c
    }

    /// Whether row `row` exists and holds a value.
    @inline(__always)
    func present(_ row: Int) -> Bool {
        guard row >= 0, row < rows else { return false }
        guard let validity else { return true }
        return validity.bit(row) ?? false
    }

    /// The raw integer of row `row` of an integer lane (int, bool, link).
    @inline(__always)
    package func int(_ row: Int) -> Int64? {
        guard let ints, present(row), row < ints.valueCount else { return nil }
        return ints[row]
    }

    /// Row `row` of a `double` segment.
    @inline(__always)
    package func double(_ row: Int) -> Double? {
        guard isDouble, let fixed, present(row), let bits = fixed.u64(row &* 8) else { return nil }
        return Double(bitPattern: bits)
    }

    /// Row `row` of a `float` segment.
    @inline(__always)
    package func float(_ row: Int) -> Float? {
        guard isFloat, let fixed, present(row), let bits = fixed.u32(row &* 4) else { return nil }
        return Float(bitPattern: bits)
    }

    /// Row `row` of a `string` segment.
    @inline(__always)
    package func string(_ row: Int) -> String? {
        guard let items, present(row) else { return nil }
        if let s = shorts?.string(row) { return s }
        guard let indices else { return items.string(row) }
        guard row < indices.valueCount else { return nil }
        return items.string(Int(truncatingIfNeeded: indices[row]))
    }
}
