/// A synced list as Spec/SYNC.md §6.4 orders it: every element hangs after the element it was
/// inserted after (or the head); siblings after one element are ordered by descending identity
/// (the newest first); the list reads depth-first. Erased elements stay as anchors. Replicas that
/// apply the same inserts and erases, in any order that inserts an anchor before what hangs after
/// it, hold the same list.
public struct SyncList: Equatable, Sendable {
    /// One element: its identity, its anchor, its value, and whether it was erased.
    public struct Element: Equatable, Sendable {
        public var id: ElementId
        public var after: ElementId
        public var value: SyncValue
        public var isErased: Bool
    }

    /// Every element ever inserted, erased ones included.
    public private(set) var elements: [ElementId: Element] = [:]
    /// The identities hanging after each element (the head included), in no particular order.
    private var children: [ElementId: [ElementId]] = [:]

    /// An empty list.
    public init() {}

    /// Inserts `value` as element `id` after `after` (``ElementId/head``: at the head).
    /// - Returns: false, changing nothing, when `id` is already in the list or `after` is not (an
    ///   anchor always arrives before what hangs after it; a replica that sees otherwise was sent
    ///   entries out of order).
    @discardableResult
    public mutating func insert(_ id: ElementId, after: ElementId, _ value: SyncValue) -> Bool {
        guard id != .head, elements[id] == nil, after == .head || elements[after] != nil else { return false }
        elements[id] = Element(id: id, after: after, value: value, isErased: false)
        children[after, default: []].append(id)
        return true
    }

    /// Sets the value of element `id`; false when it is unknown or erased.
    @discardableResult
    public mutating func set(_ id: ElementId, _ value: SyncValue) -> Bool {
        guard let e = elements[id], !e.isErased else { return false }
        elements[id]?.value = value
        return true
    }

    /// Erases element `id` (it stays an anchor); false when it is unknown or already erased.
    @discardableResult
    public mutating func erase(_ id: ElementId) -> Bool {
        guard let e = elements[id], !e.isErased else { return false }
        elements[id]?.isErased = true
        return true
    }

    /// The identities of the elements not erased, in list order.
    public var ids: [ElementId] { ordered(includingErased: false) }

    /// Every identity, erased ones included, in list order: an order in which each element comes
    /// after its anchor, so inserting them in it rebuilds the list.
    public var allIds: [ElementId] { ordered(includingErased: true) }

    private func ordered(includingErased: Bool) -> [ElementId] {
        var out: [ElementId] = []
        // Depth-first without recursion: a stack of identities still to visit, newest sibling on top.
        var stack = (children[.head] ?? []).sorted()
        while let id = stack.popLast() {
            if includingErased || elements[id]?.isErased == false { out.append(id) }
            stack += (children[id] ?? []).sorted()
        }
        return out
    }

    /// The values of the elements not erased, in list order.
    public var values: [SyncValue] { ids.map { elements[$0]!.value } }

    /// Whether both hold the same elements (so the same order), whatever order they arrived in.
    public static func == (a: SyncList, b: SyncList) -> Bool { a.elements == b.elements }
}
