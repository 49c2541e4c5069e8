/// Cutting what does not fit in one message into messages that do (Spec/SYNC.md §4), and putting
/// a history entry sent in parts back together.

extension Instruction {
    /// The bytes the instruction takes in an `Instruction[]`.
    public var encodedSize: Int {
        var w = WireWriter()
        w.instruction(self)
        return w.bytes.count
    }
}

extension Array where Element == Instruction {
    /// The instructions, in order, as runs of at most about `budget` encoded bytes; a run holds at
    /// least one instruction (one larger than `budget` goes alone). With `cuttingListStates`, a
    /// `LIST_STATE` larger than `budget` is cut into `LIST_STATE`s of the same list of about
    /// `budget` bytes, the first ending a run, the others each starting the next (how
    /// `DOWNLOAD_PART` carries a list too long for a message; ``DownloadAssembly`` joins them).
    public func runs(budget: Int, cuttingListStates: Bool = false) -> [[Instruction]] {
        var runs: [[Instruction]] = []
        var current: [Instruction] = []
        var size = 0
        func flush() {
            runs.append(current)
            current = []
            size = 0
        }
        func add(_ i: Instruction, _ n: Int) {
            if !current.isEmpty && size + n > budget { flush() }
            current.append(i)
            size += n
        }
        for i in self {
            let n = i.encodedSize
            guard n > budget, cuttingListStates, case .listState(let path, let ids, let values) = i.operation, ids.count > 1,
                ids.count == values.count
            else {
                add(i, n)
                continue
            }
            // Pieces of about `budget` bytes each, measured element by element.
            var start = 0
            var bytes = 0
            for k in ids.indices {
                var w = WireWriter()
                w.elementId(ids[k])
                w.value(values[k])
                if k > start && bytes + w.bytes.count > budget {
                    add(Self.piece(of: i, path, ids[start..<k], values[start..<k]), bytes)
                    flush()
                    start = k
                    bytes = 0
                }
                bytes += w.bytes.count
            }
            add(Self.piece(of: i, path, ids[start...], values[start...]), bytes)
        }
        if !current.isEmpty || runs.isEmpty { runs.append(current) }
        return runs
    }

    private static func piece(of i: Instruction, _ path: [String], _ ids: ArraySlice<ElementId>, _ values: ArraySlice<SyncValue>)
        -> Instruction
    {
        Instruction(i.className, i.primaryKey, .listState(path: path, ids: [ElementId](ids), values: [SyncValue](values)))
    }
}

extension SyncMessage {
    /// `entries`, consecutive history entries after server version `fromVersion`, as the messages
    /// that carry them: `DOWNLOAD`s of at most about `budget` bytes each, and each entry larger
    /// than that alone in `DOWNLOAD_PART`s of about `budget` bytes (§8.3). No message is made
    /// for no entries.
    public static func downloads(fromVersion: UInt64, entries: [Entry], latestServerVersion: UInt64, budget: Int) -> [SyncMessage] {
        var messages: [SyncMessage] = []
        var from = fromVersion
        var batch: [Entry] = []
        var size = 0
        func flush() {
            guard let last = batch.last else { return }
            messages.append(.download(fromVersion: from, entries: batch, latestServerVersion: latestServerVersion))
            from = last.serverVersion
            batch = []
            size = 0
        }
        for e in entries {
            var w = WireWriter()
            w.entry(e)
            let n = w.bytes.count
            if !batch.isEmpty && size + n > budget { flush() }
            guard n > budget else {
                batch.append(e)
                size += n
                continue
            }
            let runs = e.instructions.runs(budget: budget, cuttingListStates: true)
            for (k, run) in runs.enumerated() {
                var part = e
                part.instructions = run
                messages.append(
                    .downloadPart(fromVersion: from, entry: part, last: k == runs.count - 1, latestServerVersion: latestServerVersion))
            }
            from = e.serverVersion
        }
        flush()
        return messages
    }
}

/// A history entry received in `DOWNLOAD_PART`s (Spec/SYNC.md §4), put back together: the parts'
/// instructions in order, a `LIST_STATE` that ends one part joined with a `LIST_STATE` of the same
/// list that starts the next.
public struct DownloadAssembly: Sendable {
    /// The entry whose parts are being received (its instructions so far, but for a list still
    /// being joined); nil when none is.
    public private(set) var partial: Entry?
    /// The `LIST_STATE` that ended the last part, kept aside so that the next parts' pieces are
    /// appended to its arrays in place.
    private var open: (className: String, primaryKey: SyncValue, path: [String], ids: [ElementId], values: [SyncValue])?

    /// No entry being received.
    public init() {}

    /// Forgets the parts received (the connection that brought them ended).
    public mutating func reset() {
        partial = nil
        open = nil
    }

    /// Adds the next part of an entry and returns the whole entry after its last part.
    /// - Throws: ``WireError`` (offset 0) when `part` belongs to another entry than the parts
    ///   before it: a protocol error.
    public mutating func add(_ part: Entry, last: Bool) throws(WireError) -> Entry? {
        var rest = part.instructions[...]
        if let e = partial {
            guard
                e.serverVersion == part.serverVersion && e.originClientFileId == part.originClientFileId
                    && e.originClientVersion == part.originClientVersion && e.clock == part.clock
            else {
                throw WireError(offset: 0, "a DOWNLOAD_PART of entry \(part.serverVersion) inside the parts of entry \(e.serverVersion)")
            }
            if var list = open, let head = rest.first, case .listState(list.path, let ids, let values) = head.operation,
                head.className == list.className && head.primaryKey == list.primaryKey
            {
                open = nil
                list.ids += ids
                list.values += values
                open = list
                rest = rest.dropFirst()
            }
        } else {
            var e = part
            e.instructions = []
            partial = e
        }
        if !rest.isEmpty { closeList() }
        partial?.instructions += rest
        if !last, !rest.isEmpty, let tail = partial?.instructions.last, case .listState(let path, let ids, let values) = tail.operation {
            partial?.instructions.removeLast()
            open = (tail.className, tail.primaryKey, path, ids, values)
        }
        guard last else { return nil }
        closeList()
        defer { partial = nil }
        return partial
    }

    private mutating func closeList() {
        guard let list = open else { return }
        open = nil
        partial?.instructions.append(
            Instruction(list.className, list.primaryKey, .listState(path: list.path, ids: list.ids, values: list.values)))
    }
}
