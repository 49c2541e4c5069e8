import Foundation
import HummingbirdWebSocket
import Logging
import Metrics
import NIOCore
import PostgresNIO
import RealmSyncProtocol

/// One client connection (Spec/SYNC.md §4): the handshake, uploads applied in one transaction each
/// and acknowledged after the commit, subscription changes answered by a bootstrap, and the
/// history sent as it grows. Everything it does happens in one loop, in message order, so a
/// download never overtakes the bootstrap it follows.
struct SyncSession: Sendable {
    let store: SyncStore
    let feed: VersionFeed
    let user: String
    /// Why the client is refused (a protocol version not served, a bad token), told in answer to
    /// its first message.
    let refusal: SessionFailure?
    let configuration: SyncServerConfiguration
    let outbound: WebSocketOutboundWriter
    let logger: Logger

    private enum Event: Sendable {
        case message([UInt8])
        case notText
        case newVersion(UInt64)
        case handshakeDeadline
        case failed(String)
        case closed
    }

    private struct State {
        var clientFileId: [UInt8]?
        var catalog = Catalog()
        var subscriptions = CompiledSubscriptions()
        var sentVersion: UInt64 = 0
        var latest: UInt64 = 0
    }

    static let downloadBatch = 500

    func run(_ inbound: WebSocketInboundStream) async throws {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self)
        let (feedId, versions) = feed.subscribe()
        // The session's work runs in a task of its own, so that a connection that ends is not held
        // by work stuck in the store: a PostgreSQL lease was seen to wait forever after PostgreSQL
        // restarted, and a server's graceful shutdown waits for every connection's handler.
        let (finished, done) = AsyncStream.makeStream(of: Void.self)
        let work = Task {
            defer {
                feed.unsubscribe(feedId)
                done.finish()
            }
            try? await process(events)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await v in versions { continuation.yield(.newVersion(v)) }
            }
            group.addTask {
                try? await Task.sleep(for: configuration.handshakeTimeout)
                continuation.yield(.handshakeDeadline)
            }
            do {
                for try await message in inbound.messages(maxSize: configuration.maximumMessageSize) {
                    if case .binary(let buffer) = message {
                        continuation.yield(.message(Array(buffer.readableBytesView)))
                    } else {
                        continuation.yield(.notText)
                    }
                }
                continuation.yield(.closed)
            } catch {
                continuation.yield(.failed("\(error)"))
            }
            continuation.finish()
            group.cancelAll()
        }
        // The connection is over: the work is cancelled and given 5 s to end.
        work.cancel()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { for await _ in finished {} }
            group.addTask { try? await Task.sleep(for: .seconds(5)) }
            await group.next()
            group.cancelAll()
        }
    }

    private func process(_ events: AsyncStream<Event>) async throws {
        var state = State()
        loop: for await event in events {
            do {
                switch event {
                case .closed: break loop
                case .handshakeDeadline:
                    if state.clientFileId == nil {
                        throw refusal ?? SessionFailure.badMessage("no HELLO within \(configuration.handshakeTimeout)")
                    }
                case .failed(let reason): throw SessionFailure.badMessage("the connection failed: \(reason)")
                case .notText: throw SessionFailure.badMessage("sync messages are binary WebSocket messages")
                case .newVersion(let v):
                    state.latest = max(state.latest, v)
                    try await sendDownloads(&state)
                case .message(let bytes):
                    if let refusal { throw refusal }
                    let message: SyncMessage
                    do {
                        message = try SyncMessage.decode(bytes)
                    } catch {
                        throw SessionFailure.badMessage(error.description)
                    }
                    try await handle(message, &state)
                }
            } catch let failure as SessionFailure {
                Counter(label: "realm_sync_errors", dimensions: [("code", "\(failure.code)")]).increment()
                logger.info("session error", metadata: ["code": "\(failure.code)", "message": "\(failure.message)"])
                try? await send(.error(code: failure.code, message: failure.message, fatal: failure.isFatal, clientVersion: 0))
                if failure.isFatal {
                    try? await outbound.close(.policyViolation, reason: "sync error \(failure.code)")
                    break loop
                }
            } catch {
                // The store failed (PostgreSQL unreachable, a transaction aborted, the session
                // cancelled): nothing of that message was applied. The connection ends here, so
                // that no later upload of the client is applied before the failed one: the client
                // connects again and sends everything not acknowledged, in order.
                logger.warning("store error", metadata: ["error": "\(String(reflecting: error))"])
                try? await send(.error(code: 10, message: "the store failed; connect again", fatal: false, clientVersion: 0))
                try? await outbound.close(.unexpectedServerError, reason: "the store failed")
                break loop
            }
        }
    }

    private func send(_ message: SyncMessage) async throws {
        try await outbound.writeBinaryMessage(ByteBuffer(bytes: message.encoded()))
    }

    private func handle(_ message: SyncMessage, _ state: inout State) async throws {
        switch message {
        case .hello(let id, let lastServerVersion, _, let schema):
            guard state.clientFileId == nil else { throw SessionFailure.badMessage("HELLO sent twice") }
            let clientFileId: [UInt8]
            if id.isEmpty {
                clientFileId = try await store.registerClient(user: user)
            } else {
                guard let owner = try await store.owner(ofClient: id) else {
                    throw SessionFailure.badClientFileId("the store does not know this client file; reset it")
                }
                guard owner == user else { throw SessionFailure.badClientFileId("this client file belongs to another user") }
                clientFileId = id
            }
            state.catalog = try await store.ensure(schema)
            state.clientFileId = clientFileId
            state.sentVersion = lastServerVersion
            let saved = try await store.subscriptions(of: clientFileId)
            state.subscriptions = (try? CompiledSubscriptions(saved.subscriptions, catalog: state.catalog)) ?? CompiledSubscriptions()
            let latest = try await store.latestVersion()
            state.latest = max(state.latest, latest)
            let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
            try await send(.welcome(clientFileId: clientFileId, serverVersion: latest, serverClock: HybridClock.value(milliseconds: now)))
            if lastServerVersion > latest {
                throw SessionFailure.badClientFileId(
                    "the client has server version \(lastServerVersion), newer than the store's \(latest); reset it")
            }
            try await sendDownloads(&state)
        case .upload(let uploads):
            guard let clientFileId = state.clientFileId else { throw SessionFailure.badMessage("UPLOAD before HELLO") }
            let result = try await store.apply(uploads, from: clientFileId, catalog: state.catalog)
            Counter(label: "realm_sync_uploads").increment(by: uploads.count)
            try await send(.uploadAck(clientVersion: result.clientVersion, serverVersion: result.serverVersion))
            feed.announce(result.serverVersion)
        case .query(let version, let subscriptions):
            guard let clientFileId = state.clientFileId else { throw SessionFailure.badMessage("QUERY before HELLO") }
            let compiled = try CompiledSubscriptions(subscriptions, catalog: state.catalog)
            try await store.saveSubscriptions(subscriptions, version: version, of: clientFileId)
            state.subscriptions = compiled
            let outbound = self.outbound
            let bootstrapVersion = try await store.bootstrap(compiled, catalog: state.catalog, batch: configuration.bootstrapBatch) {
                objects, serverVersion in
                try await outbound.writeBinaryMessage(
                    ByteBuffer(
                        bytes: SyncMessage.bootstrap(querySetVersion: version, serverVersion: serverVersion, objects: objects, last: false)
                            .encoded()))
            }
            try await send(.bootstrap(querySetVersion: version, serverVersion: bootstrapVersion, objects: [], last: true))
            state.sentVersion = bootstrapVersion
            state.latest = max(state.latest, bootstrapVersion)
            try await sendDownloads(&state)
        case .mark(let id, _):
            guard state.clientFileId != nil else { throw SessionFailure.badMessage("MARK before HELLO") }
            state.latest = max(state.latest, try await store.latestVersion())
            try await sendDownloads(&state)
            try await send(.mark(requestId: id, serverVersion: state.latest))
        case .welcome, .uploadAck, .bootstrap, .download:
            throw SessionFailure.badMessage("a server's message sent by a client")
        case .error(let code, let message, _, _):
            logger.info("client reported an error", metadata: ["code": "\(code)", "message": "\(message)"])
        }
    }

    private func sendDownloads(_ state: inout State) async throws {
        guard let own = state.clientFileId else { return }
        while state.sentVersion < state.latest {
            let entries = try await store.download(
                after: state.sentVersion, limit: Self.downloadBatch, subscriptions: state.subscriptions, catalog: state.catalog, own: own)
            guard let last = entries.last else { return }
            try await send(.download(fromVersion: state.sentVersion, entries: entries, latestServerVersion: state.latest))
            state.sentVersion = last.serverVersion
        }
    }
}
