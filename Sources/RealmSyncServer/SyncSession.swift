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
    let user: SyncUser
    /// Why the client is refused (a protocol version not served, a bad token), told in answer to
    /// its first message.
    let refusal: SessionFailure?
    let configuration: SyncServerConfiguration
    let outbound: WebSocketOutboundWriter
    let logger: Logger

    private enum Event: Sendable {
        /// A binary message, decoded as it arrived (once: the batching below looks at it too).
        case message(Result<SyncMessage, WireError>)
        /// The uploads of consecutive `UPLOAD` messages, applied together.
        case uploads([Upload])
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
        /// What the user may write of each class whose filter is not TRUEPREDICATE (§10).
        var writeFilters: [String: SubscriptionSQL] = [:]
        var sentVersion: UInt64 = 0
        var latest: UInt64 = 0
        /// The parts of an upload received so far (`UPLOAD_PART`), and their instructions' count.
        var partial: Upload?
        var partialInstructions = 0
    }

    /// The most instructions an upload sent in parts may hold.
    static let maximumPartedInstructions = 1 << 25

    static let downloadBatch = 500

    func run(_ inbound: WebSocketInboundStream) async throws {
        let queue = BatchQueue<Event>()
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
            await process(queue)
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await v in versions { queue.push(.newVersion(v)) }
            }
            group.addTask {
                try? await Task.sleep(for: configuration.handshakeTimeout)
                queue.push(.handshakeDeadline)
            }
            do {
                for try await message in inbound.messages(maxSize: configuration.maximumMessageSize) {
                    if case .binary(let buffer) = message {
                        queue.push(.message(Result { () throws(WireError) in try SyncMessage.decode(Array(buffer.readableBytesView)) }))
                    } else {
                        queue.push(.notText)
                    }
                }
                queue.push(.closed)
            } catch {
                queue.push(.failed("\(error)"))
            }
            queue.finish()
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

    /// Handles the events in order, a batch at a time (what arrived while the previous batch was
    /// handled): consecutive uploads of a batch are applied in one transaction (Spec/SYNC.md
    /// §8.2), and new versions announced together are answered by one download.
    private func process(_ queue: BatchQueue<Event>) async {
        var state = State()
        var stopped = false
        await queue.forEachBatch { batch in
            var i = batch.startIndex
            while i < batch.endIndex && !stopped {
                var event = batch[i]
                i += 1
                if case .newVersion(var v) = event {
                    while i < batch.endIndex, case .newVersion(let w) = batch[i] {
                        v = max(v, w)
                        i += 1
                    }
                    event = .newVersion(v)
                } else if case .message(.success(.upload(var uploads))) = event, refusal == nil {
                    // The uploads of the messages that follow it, up to 1,000 in all.
                    while i < batch.endIndex, uploads.count < 1_000, case .message(.success(.upload(let more))) = batch[i] {
                        uploads += more
                        i += 1
                    }
                    stopped = await handle(.uploads(uploads), &state)
                    continue
                }
                stopped = await handle(event, &state)
            }
        }
    }

    /// Handles one event; returns whether the session ends.
    private func handle(_ event: Event, _ state: inout State) async -> Bool {
        do {
            switch event {
            case .closed: return true
            case .handshakeDeadline:
                if state.clientFileId == nil {
                    throw refusal ?? SessionFailure.badMessage("no HELLO within \(configuration.handshakeTimeout)")
                }
            case .failed(let reason): throw SessionFailure.badMessage("the connection failed: \(reason)")
            case .notText: throw SessionFailure.badMessage("sync messages are binary WebSocket messages")
            case .newVersion(let v):
                state.latest = max(state.latest, v)
                try await sendDownloads(&state)
            case .uploads(let uploads):
                try await handle(.upload(uploads), &state)
            case .message(let decoded):
                if let refusal { throw refusal }
                let message: SyncMessage
                do {
                    message = try decoded.get()
                } catch {
                    throw SessionFailure.badMessage(error.description)
                }
                try await handle(message, &state)
            }
            return false
        } catch let failure as SessionFailure {
            Counter(label: "realm_sync_errors", dimensions: [("code", "\(failure.code)")]).increment()
            logger.info("session error", metadata: ["code": "\(failure.code)", "message": "\(failure.message)"])
            try? await send(.error(code: failure.code, message: failure.message, fatal: failure.isFatal, clientVersion: 0))
            if failure.isFatal {
                try? await outbound.close(.policyViolation, reason: "sync error \(failure.code)")
                return true
            }
            return false
        } catch {
            // The store failed (PostgreSQL unreachable, a transaction aborted, the session
            // cancelled): nothing of that message was applied. The connection ends here, so
            // that no later upload of the client is applied before the failed one: the client
            // connects again and sends everything not acknowledged, in order.
            logger.warning("store error", metadata: ["error": "\(String(reflecting: error))"])
            try? await send(.error(code: 10, message: "the store failed; connect again", fatal: false, clientVersion: 0))
            try? await outbound.close(.unexpectedServerError, reason: "the store failed")
            return true
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
            var readRoles: String?
            if id.isEmpty {
                clientFileId = try await store.registerClient(user: user.id)
            } else {
                let known = try await store.helloOfClient(id, user: user.id, serverVersion: lastServerVersion)
                guard let owner = known.owner else {
                    throw SessionFailure.badClientFileId("the store does not know this client file; reset it")
                }
                guard owner == user.id else { throw SessionFailure.badClientFileId("this client file belongs to another user") }
                clientFileId = id
                readRoles = known.readRoles
            }
            state.catalog = try await store.ensure(schema)
            if let permissions = configuration.permissions {
                for (name, cls) in state.catalog.classes where !cls.isEmbedded {
                    let filter = permissions.writeFilter(name, for: user, catalog: state.catalog)
                    if filter.condition != "TRUE" { state.writeFilters[name] = filter }
                }
            }
            state.clientFileId = clientFileId
            state.sentVersion = lastServerVersion
            let saved = try await store.subscriptions(of: clientFileId)
            state.subscriptions =
                (try? CompiledSubscriptions(saved.subscriptions, catalog: state.catalog, user: user, permissions: configuration.permissions))
                ?? CompiledSubscriptions()
            let (latest, compacted) = try await store.versions()
            state.latest = max(state.latest, latest)
            if compacted > lastServerVersion {
                // The entries after the client's version are gone (§8.5): a file that has some of
                // the history must be reset; one that has none (it is about to be bootstrapped)
                // starts after them.
                if lastServerVersion > 0 {
                    throw SessionFailure.clientReset(
                        "the history was compacted through server version \(compacted) and this file has \(lastServerVersion); reset it")
                }
                state.sentVersion = compacted
            }
            let now = UInt64(max(0, Date().timeIntervalSince1970 * 1000))
            try await send(.welcome(clientFileId: clientFileId, serverVersion: latest, serverClock: HybridClock.value(milliseconds: now)))
            if lastServerVersion > latest {
                throw SessionFailure.badClientFileId(
                    "the client has server version \(lastServerVersion), newer than the store's \(latest); reset it")
            }
            if let permissions = configuration.permissions, !state.subscriptions.byClass.isEmpty,
                permissions.readRoles(of: state.subscriptions.byClass.keys, for: user) != readRoles
            {
                // The user's roles changed since the file was bootstrapped (a claim changed):
                // what it may read is sent again, whole, and the rest leaves the file (§10).
                Counter(label: "realm_sync_role_bootstraps").increment()
                try await sendBootstrap(querySetVersion: saved.version, &state)
            }
            try await sendDownloads(&state)
        case .uploadPart(let part, let last):
            guard let clientFileId = state.clientFileId else { throw SessionFailure.badMessage("UPLOAD_PART before HELLO") }
            var upload = state.partial ?? Upload(clientVersion: part.clientVersion, clock: part.clock, instructions: [])
            guard upload.clientVersion == part.clientVersion, upload.clock == part.clock else {
                state.partial = nil
                throw SessionFailure.badMessage("UPLOAD_PART of another upload before the last part of \(upload.clientVersion)")
            }
            state.partialInstructions += part.instructions.count
            guard state.partialInstructions <= Self.maximumPartedInstructions else {
                state.partial = nil
                throw SessionFailure.badMessage("an upload in parts larger than \(Self.maximumPartedInstructions) instructions")
            }
            upload.instructions += part.instructions
            guard last else {
                state.partial = upload
                return
            }
            state.partial = nil
            state.partialInstructions = 0
            let result = try await store.apply([upload], from: clientFileId, catalog: state.catalog, writeFilters: state.writeFilters)
            try await sendRefusals(result.refused)
            Counter(label: "realm_sync_uploads").increment()
            try await send(.uploadAck(clientVersion: result.clientVersion, serverVersion: result.serverVersion))
            feed.announce(result.serverVersion)
        case .upload(let uploads):
            guard let clientFileId = state.clientFileId else { throw SessionFailure.badMessage("UPLOAD before HELLO") }
            guard state.partial == nil else { throw SessionFailure.badMessage("UPLOAD before the last part of an UPLOAD_PART") }
            let result = try await store.apply(uploads, from: clientFileId, catalog: state.catalog, writeFilters: state.writeFilters)
            try await sendRefusals(result.refused)
            Counter(label: "realm_sync_uploads").increment(by: uploads.count)
            try await send(.uploadAck(clientVersion: result.clientVersion, serverVersion: result.serverVersion))
            feed.announce(result.serverVersion)
        case .query(let version, let subscriptions):
            guard let clientFileId = state.clientFileId else { throw SessionFailure.badMessage("QUERY before HELLO") }
            let compiled = try CompiledSubscriptions(
                subscriptions, catalog: state.catalog, user: user, permissions: configuration.permissions)
            try await store.saveSubscriptions(subscriptions, version: version, of: clientFileId)
            state.subscriptions = compiled
            try await sendBootstrap(querySetVersion: version, &state)
            try await sendDownloads(&state)
        case .mark(let id, _):
            guard state.clientFileId != nil else { throw SessionFailure.badMessage("MARK before HELLO") }
            state.latest = max(state.latest, try await store.latestVersion())
            try await sendDownloads(&state)
            try await send(.mark(requestId: id, serverVersion: state.latest))
        case .welcome, .uploadAck, .bootstrap, .bootstrapTable, .download, .downloadPart, .writeRefused:
            throw SessionFailure.badMessage("a server's message sent by a client")
        case .error(let code, let message, _, _):
            logger.info("client reported an error", metadata: ["code": "\(code)", "message": "\(message)"])
        }
    }

    /// Tells the client which writes of its uploads were not applied (§10), before their
    /// acknowledgement.
    private func sendRefusals(_ refused: [(clientVersion: UInt64, objects: [SyncStoreModel.ObjectID])]) async throws {
        for r in refused {
            Counter(label: "realm_sync_refused_writes").increment(by: r.objects.count)
            try await send(
                .writeRefused(clientVersion: r.clientVersion, objects: r.objects, reason: "the user's role may not write the object"))
        }
    }

    /// Sends every object the session's subscriptions let its user read, as of one server version,
    /// and records the user's read roles with the client file (§7.4, §10).
    private func sendBootstrap(querySetVersion version: UInt64, _ state: inout State) async throws {
        guard let clientFileId = state.clientFileId else { return }
        let outbound = self.outbound
        // Every upload of the client applied so far is in the bootstrap: acknowledged before it,
        // they are not pending when it is applied, so the client takes the store's values for
        // what they wrote (their own entries precede the bootstrap's version, or were compacted
        // away, §8.5).
        let applied = try await store.lastClientVersion(of: clientFileId)
        if applied > 0 { try await send(.uploadAck(clientVersion: applied, serverVersion: state.latest)) }
        let bootstrapVersion = try await store.bootstrap(
            state.subscriptions, querySetVersion: version, catalog: state.catalog, batch: configuration.bootstrapBatch
        ) { message in
            try await outbound.writeBinaryMessage(ByteBuffer(bytes: message))
        }
        try await send(.bootstrap(querySetVersion: version, serverVersion: bootstrapVersion, objects: [], last: true))
        state.sentVersion = bootstrapVersion
        state.latest = max(state.latest, bootstrapVersion)
        if let permissions = configuration.permissions {
            try await store.setReadRoles(permissions.readRoles(of: state.subscriptions.byClass.keys, for: user), of: clientFileId)
        }
    }

    private func sendDownloads(_ state: inout State) async throws {
        guard let own = state.clientFileId else { return }
        while state.sentVersion < state.latest {
            let entries = try await store.download(
                after: state.sentVersion, limit: Self.downloadBatch, bytes: configuration.maximumMessageSize,
                subscriptions: state.subscriptions, catalog: state.catalog, own: own)
            guard let last = entries.last else { return }
            for message in SyncMessage.downloads(
                fromVersion: state.sentVersion, entries: entries, latestServerVersion: state.latest,
                budget: configuration.downloadMessageSize)
            {
                try await send(message)
            }
            state.sentVersion = last.serverVersion
        }
    }
}
