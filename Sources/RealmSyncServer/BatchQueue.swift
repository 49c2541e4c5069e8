import RealmStorage

/// A queue between one producer of events (a connection's reader) and one consumer that takes
/// everything queued at once: while the consumer works on one batch, what arrives waits and comes
/// in the next, so that consecutive uploads are applied in one transaction. Order is kept. (The
/// lock is the project's `Locked`, which ThreadSanitizer sees.)
final class BatchQueue<Element: Sendable>: Sendable {
    private let items = Locked<[Element]>([])
    private let wakes: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    /// An empty queue.
    init() {
        (wakes, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues `element` (after everything queued before).
    func push(_ element: Element) {
        items.withLock { $0.append(element) }
        continuation.yield()
    }

    /// Ends the queue: the consumer gets what is left, then ``forEachBatch(_:)`` returns.
    func finish() { continuation.finish() }

    /// Calls `body` with every batch, in order, until the queue is finished and empty (or `body`
    /// throws). One consumer only.
    func forEachBatch(_ body: ([Element]) async throws -> Void) async rethrows {
        for await _ in wakes {
            let batch = take()
            if !batch.isEmpty { try await body(batch) }
        }
        let rest = take()
        if !rest.isEmpty { try await body(rest) }
    }

    private func take() -> [Element] {
        items.withLock { queued in
            defer { queued.removeAll(keepingCapacity: true) }
            return queued
        }
    }
}
