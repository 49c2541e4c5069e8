/// A hybrid logical clock (Spec/SYNC.md §6.1): the high 48 bits milliseconds since 1970, the low
/// 16 bits a counter. It never goes backwards, whatever the wall clock does, and moves past every
/// clock it is told of.
public struct HybridClock: Equatable, Sendable {
    /// The last value handed out or observed.
    public private(set) var last: UInt64

    /// A clock that has handed out nothing yet (or resumes after `last`).
    public init(last: UInt64 = 0) { self.last = last }

    /// The clock value of physical time `milliseconds`.
    public static func value(milliseconds: UInt64) -> UInt64 { (milliseconds & 0xFFFF_FFFF_FFFF) << 16 }

    /// The next value at physical time `milliseconds`: that time's value if it is later than the
    /// last one, else the last plus one (the counter advances).
    public mutating func next(milliseconds: UInt64) -> UInt64 {
        last = max(Self.value(milliseconds: milliseconds), last &+ 1)
        return last
    }

    /// Moves the clock past `other` (a value received from the server).
    public mutating func observe(_ other: UInt64) { last = max(last, other) }
}
