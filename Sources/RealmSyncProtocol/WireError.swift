/// Why bytes received are not a valid message of the sync protocol (Spec/SYNC.md §4, §9
/// `badMessage`): the offset of the first byte that could not be read and what was expected there.
public struct WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The byte offset in the message where reading failed.
    public var offset: Int
    /// What was wrong there.
    public var reason: String

    /// An error at `offset` for `reason`.
    public init(offset: Int, _ reason: String) {
        self.offset = offset
        self.reason = reason
    }

    public var description: String { "bad sync message at byte \(offset): \(reason)" }
}
