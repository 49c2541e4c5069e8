/// A small, fast, deterministic random generator (SplitMix64) for seeded model-based and
/// differential tests: the same seed gives the same sequence on every machine.
public struct SplitMix: RandomNumberGenerator, Sendable {
    public var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// The value ``next()`` will return, without advancing.
    public var peek: UInt64 {
        var z = state &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    public mutating func next() -> UInt64 {
        let v = peek
        state &+= 0x9E37_79B9_7F4A_7C15
        return v
    }

    /// A value in `0..<n`.
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }
}
