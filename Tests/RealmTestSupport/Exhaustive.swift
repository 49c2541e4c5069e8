import Foundation

/// The long sweeps (thousands of damaged files, each opened and verified) run whole where the
/// build is fast enough, and sampled elsewhere: `.ci/run` sets `REALM_EXHAUSTIVE=1` for its
/// optimized AddressSanitizer pass, which runs every case, while the debug `swift test` runs a
/// fixed-seed sample of them, so every check still runs in CI on every change.
public enum Exhaustive {
    /// Whether the whole sweeps run (`REALM_EXHAUSTIVE=1`).
    public static var isOn: Bool { ProcessInfo.processInfo.environment["REALM_EXHAUSTIVE"] == "1" }

    /// `cases` whole when ``isOn``, else `count` of them spread evenly (always the same ones),
    /// the first `keepingFirst` always among them.
    public static func sample<T>(_ cases: [T], count: Int, keepingFirst: Int = 0) -> [T] {
        guard !isOn, cases.count > count else { return cases }
        let head = Array(cases.prefix(keepingFirst))
        let rest = Array(cases.dropFirst(keepingFirst))
        let wanted = max(0, count - head.count)
        guard wanted > 0, !rest.isEmpty else { return head }
        let stride = Double(rest.count) / Double(wanted)
        return head + (0..<min(wanted, rest.count)).map { rest[Int(Double($0) * stride)] }
    }
}
