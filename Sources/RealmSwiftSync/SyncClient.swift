import Foundation
import HummingbirdWSClient
import Logging
import NIOCore
import RealmStorage
import RealmSwift
import RealmSyncProtocol

/// The sync client of one file (Spec/SYNC.md §7): converts local commits into uploads, keeps one
/// WebSocket to the server open while the user is logged in and the session is not suspended,
/// and applies downloads and bootstraps as local commits. Everything it does to the file happens
/// on this actor, in message order.
actor SyncClient {
    nonisolated let user: User
    nonisolated let core: AppCore
    nonisolated let path: String
    nonisolated let status = Locked(Status())

    struct Status {
        var state: SyncSession.State = .active
        var connection: SyncSession.ConnectionState = .disconnected
        var errorHandler: (@Sendable (any Error, SyncSession?) -> Void)?
        var progress:
            [UInt64: (
                direction: SyncSession.ProgressDirection, mode: SyncSession.ProgressMode, block: @Sendable (SyncSession.Progress) -> Void
            )] =
                [:]
        var nextProgressToken: UInt64 = 1
        var suspended = false
        /// What the connection loop did last, for a test that waits in vain to say why.
        var trace: [String] = []

        mutating func note(_ event: String) {
            trace.append("\(Date().timeIntervalSince1970): \(event)")
            if trace.count > 12 { trace.removeFirst() }
        }
    }

    private nonisolated let linkBox = Locked<RealmFileLink?>(nil)
    private var link: RealmFileLink? { linkBox.withLock { $0 } }
    private var embedded: Set<String> { embeddedClasses }
    nonisolated var linkStore: Store? { linkBox.withLock { $0?.store } }
    nonisolated var embeddedClasses: Set<String> { linkBox.withLock { $0?.embeddedClasses } ?? [] }
    /// The subscription set being edited by `update` (SyncSubscriptionSet).
    nonisolated let editing = Locked<[StoredSubscription]?>(nil)
    private var runTask: Task<Void, Never>?
    private var outbound: WebSocketOutboundWriter?
    private var queue: AsyncStream<[UInt8]>.Continuation?
    private var welcomed = false
    /// The access token the current connection was made with.
    private var connectedToken: String?
    /// The newest client version acknowledged (persisted with the next commit of the client).
    private var acked: UInt64 = 0
    /// The newest client version sent on this connection.
    private var sentThrough: UInt64 = 0
    /// The newest client version of each upload message sent on this connection and not yet
    /// acknowledged (an upload in parts counts once).
    private var unacknowledged: [UInt64] = []
    /// How many upload messages may wait for their acknowledgement: commits made meanwhile go
    /// together in the next message (one server transaction, one download back) instead of a
    /// message each.
    static let uploadWindow = 2
    private var bootstrap: [BootstrapTable] = []
    /// The parts of an entry received in DOWNLOAD_PARTs so far.
    private var assembly = DownloadAssembly()
    /// Who waits, for what: an acknowledgement through a client version, the answer to a MARK,
    /// or a complete subscription set version. Keyed by a number, so a cancelled wait leaves.
    private enum Awaited {
        case upload(UInt64)
        case mark
        case query(UInt64)
    }
    private var waiters: [UInt64: (awaited: Awaited, continuation: CheckedContinuation<Void, any Error>)] = [:]
    private var nextMark: UInt64 = 1
    private var wake: AsyncStream<Void>.Continuation?
    private var reportedOffline = false
    /// The server's error that ends this connection (a refused token, a fatal error).
    private var refusal: SyncError?
    /// The journal, decoded once per row (SyncFile.Journal).
    private var journal = SyncFile.Journal()
    private var fatal: SyncError?
    /// What happens on a client reset, and the configuration to open Realms of the file with.
    private nonisolated let resetSettings = Locked<(mode: ClientResetMode, configuration: Realm.Configuration)?>(nil)
    /// A client reset under way: the file as it was, and what to call once the reset's bootstrap
    /// is applied.
    private var resetting: (before: Realm?, after: (@Sendable (Realm, Realm) -> Void)?)?

    init(user: User, core: AppCore, path: String) {
        self.user = user
        self.core = core
        self.path = path
    }

    // MARK: Starting

    /// Attaches the client to the file `link` opens, the first time a Realm opens it; runs the
    /// initial subscriptions when the file is new (or `rerunOnOpen`).
    nonisolated func attach(_ link: RealmFileLink, configuration: SyncConfiguration) throws {
        let store = link.store
        let (isNew, rejected) = try SyncFile.transaction(store, embedded: link.embeddedClasses)
        link.committed()
        linkBox.withLock { $0 = link }
        status.withLock { $0.errorHandler = configuration.errorHandler }
        resetSettings.withLock { $0 = (configuration.clientResetMode, link.configuration) }
        reportRejected(rejected)
        if let initial = configuration.initialSubscriptions, isNew || configuration.rerunOnOpen {
            let set = SyncSubscriptionSet(client: self, store: store)
            try set.apply { initial(set) }
        }
        // The hook keeps the store, not the link: the file's handle holds its hooks.
        let embedded = link.embeddedClasses
        link.addCommitHook { [weak self] tx in
            guard let self else { return }
            do {
                let base = try store.snapshot(kind: "sync")
                self.reportRejected(try SyncFile.describe(tx, base: base, embedded: embedded))
            } catch {
                // Left to the conversion after the commit, which reads the file's history.
            }
        }
        link.observeLocalCommits { [weak self] in
            guard let self else { return }
            Task { await self.localCommitted() }
        }
        Task { await self.start(link) }
    }

    private func start(_ link: RealmFileLink) {
        guard runTask == nil else { return }
        if let state = try? SyncFileState.read(try link.store.snapshot(kind: "sync")) { acked = state.uploadAcked }
        runTask = Task { await self.run() }
    }

    /// Tells the file's Realms of a commit the client made outside them.
    nonisolated func committedDirectly() { linkBox.withLock { $0 }?.committed() }

    nonisolated func userLoggedIn() {
        status.withLock { if !$0.suspended { $0.state = .active } }
        Task { await self.reconnectIfTokenChanged() }
    }

    /// Wakes the loop; a connection made with an older token is closed and made again with the
    /// new one, so that the server serves the user's claims as they are now (a role that changed
    /// rebootstraps the file, Spec/SYNC.md §10).
    private func reconnectIfTokenChanged() async {
        if let connectedToken, connectedToken != user.accessToken {
            try? await outbound?.close(.normalClosure, reason: "new access token")
        }
        poke()
    }

    nonisolated func userLoggedOut() {
        status.withLock { $0.state = .inactive }
        Task { await self.disconnect() }
    }

    private func poke() { wake?.yield() }

    // MARK: The connection

    /// How long a connection may take to be established, up to the server's WELCOME, before it
    /// is closed and made again (`SyncTimeoutOptions.connectTimeout`).
    var connectTimeout: Duration { .milliseconds(Int64(core.configuration.syncTimeouts?.connectTimeout ?? 120_000)) }

    /// The current connection attempt; a connection of an earlier one (abandoned while its
    /// WebSocket handshake hung) closes as soon as it opens.
    private var attempt = 0

    private func isCurrent(_ a: Int) -> Bool { a == attempt }

    /// A connection that was not established within the connect timeout (reported once, as a
    /// server that cannot be reached is).
    private struct ConnectTimeout: Error, CustomStringConvertible {
        let description: String
    }

    private func run() async {
        var delay = Duration.milliseconds(100)
        while !Task.isCancelled {
            if status.withLock({ $0.suspended }) || !user.isLoggedIn || fatal != nil {
                await sleepUntilWoken(.seconds(1))
                continue
            }
            let connected = await connectOnce()
            if Task.isCancelled { break }
            if connected { delay = .milliseconds(100) } else { delay = min(delay * 2, .seconds(5)) }
            await sleepUntilWoken(delay)
        }
    }

    private func sleepUntilWoken(_ duration: Duration) async {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        wake = continuation
        let timer = Task {
            try? await Task.sleep(for: duration)
            continuation.finish()
        }
        for await _ in stream { break }
        timer.cancel()
        wake = nil
    }

    /// One connection, until it closes. Returns whether the server welcomed the client.
    private func connectOnce() async -> Bool {
        guard let token = user.accessToken else {
            status.withLock { $0.note("no access token") }
            return false
        }
        status.withLock { $0.note("connecting") }
        setConnection(.connecting)
        let base = core.baseURL
        let url =
            (base.hasPrefix("https://") ? "wss://" + base.dropFirst(8) : "ws://" + base.dropFirst(base.hasPrefix("http://") ? 7 : 0))
            + "/api/v1/apps/\(core.appId)/sync"
        let configuration = WebSocketClientConfiguration(
            maxFrameSize: 64 << 20,
            additionalHeaders: [.secWebSocketProtocol: "realm-swift-linux.sync.1", .authorization: "Bearer \(token)"],
            // A ping every 10 s; a pong missing by the next one closes the connection (SYNC §2.2).
            autoPing: .enabled(timePeriod: .seconds(10)))
        welcomed = false
        refusal = nil
        connectedToken = token
        var refused: SyncError?
        attempt += 1
        let current = attempt
        let timeout = connectTimeout
        // The connection runs in a task of its own, raced against the connect timeout: the
        // WebSocket client waits for the handshake's answer without a timeout and without
        // heeding cancellation, so a server that accepts the connection but never answers (seen
        // once in about 45 runs of the convergence tests) would hold the session in
        // `.connecting` for good.
        let (ended, signal) = AsyncStream.makeStream(of: (any Error)??.self)
        let connection = Task {
            do {
                _ = try await WebSocketClient.connect(
                    url: url, configuration: configuration, tlsConfiguration: self.core.tls, logger: Logger(label: "realm.sync")
                ) {
                    inbound, outbound, _ in
                    guard await self.isCurrent(current) else { return }
                    // One writer per connection: messages reach the server in the order the
                    // client queued them (two uploads sent by two concurrent writes could overtake
                    // each other, and the server skips an upload older than one it applied).
                    let (queue, queued) = AsyncStream.makeStream(of: [UInt8].self)
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await bytes in queue { try await outbound.writeBinaryMessage(ByteBuffer(bytes: bytes)) }
                        }
                        defer {
                            queued.finish()
                            group.cancelAll()
                        }
                        try await self.opened(outbound, queued)
                        for try await message in inbound.messages(maxSize: 64 << 20) {
                            guard case .binary(let buffer) = message else { continue }
                            try await self.received(Array(buffer.readableBytesView))
                        }
                    }
                }
                signal.yield(.some(nil))
            } catch {
                signal.yield(.some(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            signal.yield(nil)
        }
        var failure: (any Error)?
        for await event in ended {
            if let event {
                failure = event
                break
            }
            if welcomed { continue }
            if let outbound {
                // Open, but no WELCOME (the server's store stalled): close, and the connection
                // task ends as the server answers the close.
                try? await outbound.close(.goingAway, reason: "no WELCOME within \(timeout)")
                continue
            }
            // The handshake never answered: the attempt is abandoned (its connection closes
            // if it ever opens) and the loop connects again.
            attempt += 1
            connection.cancel()
            failure = ConnectTimeout(description: "no answer within \(timeout)")
            break
        }
        timer.cancel()
        signal.finish()
        if let error = failure {
            status.withLock { $0.note("connection failed: \(error)") }
            if let refusal {
                refused = refusal
            } else if let e = error as? SyncError {
                refused = e
            } else if !welcomed {
                // The next attempt goes to the deployment's next server, if it has several.
                core.unreachable(base)
                if !reportedOffline {
                    reportedOffline = true
                    report(SyncError(.connectionFailed, "the sync server at \(base) could not be reached: \(error)"))
                }
            }
        }
        let wasWelcomed = welcomed
        status.withLock { $0.note("connection ended (welcomed: \(wasWelcomed), refused: \(refused.map { "\($0)" } ?? "no"))") }
        outbound = nil
        connectedToken = nil
        queue = nil
        welcomed = false
        setConnection(.disconnected)
        if let refused {
            if refused.code == .clientUserError {
                // The access token was refused: renew it once through the refresh token.
                do {
                    _ = try await user.refreshAccessToken()
                    return wasWelcomed
                } catch {
                    fail(SyncError(.clientUserError, "the user's tokens were refused; log in again: \(error)", fatal: true))
                }
            } else if refused.resetRequested {
                await clientReset(refused)
            } else if refused.isFatal {
                fail(refused)
            } else {
                report(refused)
            }
        }
        return wasWelcomed
    }

    /// The server cannot bring the file up to date (Spec/SYNC.md §8.5): the configuration's
    /// ``ClientResetMode`` says what happens. In the automatic modes the file's server version is
    /// cleared, the unsynced changes are dropped or kept, and the next connection bootstraps it;
    /// in `.manual` the session stops with an error that can move the file aside.
    private func clientReset(_ error: SyncError) async {
        guard let link, let (mode, configuration) = resetSettings.withLock({ $0 }) else { return fail(error) }
        if case .manual(let handler) = mode {
            let file = URL(fileURLWithPath: link.path)
            let backup = file.deletingLastPathComponent().appendingPathComponent("recovered-realms")
                .appendingPathComponent("\(file.lastPathComponent)-\(UUID().uuidString)").path
            let manual = SyncError(
                .clientResetError, "client reset required: \(error.message)", fatal: true, backupPath: backup, resetPath: link.path)
            fatal = manual
            status.withLock { $0.state = .inactive }
            if let handler { handler(manual, SyncSession(client: self)) } else { report(manual) }
            for id in Array(waiters.keys) { resume(id, throwing: manual) }
            return
        }
        let (beforeReset, afterReset) = mode.callbacks
        let before = try? Realm(configuration: configuration).freeze()
        if let before { beforeReset?(before) }
        let recovers = mode.recovers
        let journal = self.journal
        var kept: UInt64 = 0
        do {
            try write(link) { tx, state in
                // Acknowledged uploads are in the server's state; the others are kept (recover)
                // or dropped (discard).
                try journal.refresh(tx)
                let newest = journal.entries.last?.upload.clientVersion ?? 0
                kept = recovers ? state.uploadAcked : max(state.uploadAcked, newest)
                state.integratedOwn = max(state.integratedOwn, kept)
                state.uploadAcked = max(state.uploadAcked, kept)
                try journal.integrate(through: state.integratedOwn, in: tx)
                state.serverVersion = 0
            }
            acked = max(acked, kept)
        } catch {
            return fail(SyncError(.clientResetError, "the client reset failed: \(error)", fatal: true))
        }
        resetting = (before, afterReset)
        report(SyncError(.clientResetError, "client reset: \(error.message); the file is brought to the server's state"))
    }

    /// Stops the session for good and lets go of the file (a manual client reset moves it).
    nonisolated func detach() {
        linkBox.withLock { $0 = nil }
        Task { await self.stopRunning() }
    }

    private func stopRunning() async {
        runTask?.cancel()
        await disconnect()
    }

    private func setConnection(_ c: SyncSession.ConnectionState) {
        status.withLock { $0.connection = c }
    }

    private func opened(_ outbound: WebSocketOutboundWriter, _ queue: AsyncStream<[UInt8]>.Continuation) async throws {
        // Suspended while the connection was being made: it would send nothing (not even HELLO)
        // and wait for the server's handshake timeout; it ends now, and resuming connects again.
        if status.withLock({ $0.suspended }) {
            try? await outbound.close(.normalClosure, reason: "suspended")
            return
        }
        self.outbound = outbound
        self.queue = queue
        sentThrough = acked
        unacknowledged = []
        bootstrap = []
        assembly.reset()
        guard let link else { return }
        let state = try SyncFileState.read(try link.store.snapshot(kind: "sync")) ?? SyncFileState()
        let schema = SyncedSchema(try link.store.snapshot(kind: "sync").catalog, embedded: embedded)
        if let problem = schema.problems.first {
            throw SyncError(.clientSessionError, problem, fatal: true)
        }
        try await send(
            .hello(clientFileId: state.clientFileId, lastServerVersion: state.serverVersion, lastUploadAcked: acked, schema: schema.all)
        )
    }

    /// Queues `message` for the connection's writer (in call order).
    private func send(_ message: SyncMessage) async throws {
        // A suspended session sends nothing more, though its connection may not have closed yet;
        // what it would have sent goes on the next connection (§7).
        guard !status.withLock({ $0.suspended }) else { return }
        queue?.yield(message.encoded())
    }

    private func received(_ bytes: [UInt8]) async throws {
        let message: SyncMessage
        do {
            message = try SyncMessage.decode(bytes)
        } catch {
            throw SyncError(.clientSessionError, "the server sent a malformed message: \(error)")
        }
        try await received(message)
    }

    private func received(_ message: SyncMessage) async throws {
        guard let link else { return }
        if let partial = assembly.partial, message.type != SyncMessage.downloadPartType {
            throw SyncError(
                .clientSessionError, "the server sent a message of type \(message.type) inside the parts of entry \(partial.serverVersion)")
        }
        switch message {
        case .welcome(let id, _, let serverClock):
            try write(link) { tx, state in
                if state.clientFileId.isEmpty { state.clientFileId = id }
                var clock = HybridClock(last: state.clock)
                clock.observe(serverClock)
                state.clock = clock.last
            }
            welcomed = true
            status.withLock { $0.note("welcomed") }
            reportedOffline = false
            setConnection(.connected)
            let state = try SyncFileState.read(try link.store.snapshot(kind: "sync")) ?? SyncFileState()
            // A pending set is sent; so is a complete one of a file with no server version (reset,
            // or bootstrapped from an empty store): the server does not send it the history.
            if (state.queryState == 0 || state.serverVersion == 0) && state.querySetVersion > 0 { try await sendQuery(state) }
            try await sendUploads()
            for (id, w) in waiters.sorted(by: { $0.key < $1.key }) {
                if case .mark = w.awaited { try await send(.mark(requestId: id, serverVersion: 0)) }
            }
        case .uploadAck(let clientVersion, _):
            acked = max(acked, clientVersion)
            unacknowledged.removeAll { $0 <= clientVersion }
            resolveUploadWaiters()
            notifyProgress(.upload)
            try await sendUploads()
        case .download(_, let entries, _):
            try applyDownload(entries, link)
        case .downloadPart(_, let part, let last, _):
            let entry: Entry?
            do {
                entry = try assembly.add(part, last: last)
            } catch {
                throw SyncError(.clientSessionError, "the server sent a malformed message: \(error)")
            }
            if let entry { try applyDownload([entry], link) }
        case .bootstrapTable(_, _, let table):
            bootstrap.append(table)
        case .bootstrap(let querySetVersion, let serverVersion, let objects, let last):
            // Objects sent one by one: a table of one row each, every property among its others.
            bootstrap += objects.map {
                BootstrapTable(className: $0.className, properties: [], keys: [$0.primaryKey], columns: [], others: [$0.properties])
            }
            guard last else { return }
            let tables = bootstrap
            bootstrap = []
            let embedded = self.embedded
            let journal = self.journal
            var current = false
            try write(link) { tx, state in
                // Acknowledged uploads were applied before the bootstrap was read: its state has
                // them, and only unacknowledged ones are pending (Spec/SYNC.md §8.5).
                state.integratedOwn = max(state.integratedOwn, state.uploadAcked)
                try journal.integrate(through: state.integratedOwn, in: tx)
                try SyncFile.applyBootstrap(tables, tx, state, embedded: embedded, journal: journal)
                state.serverVersion = serverVersion
                if querySetVersion == state.querySetVersion {
                    state.queryState = 1
                    state.queryError = ""
                    current = true
                }
            }
            resolveQueryWaiters(through: querySetVersion, error: nil)
            notifyProgress(.download)
            if current, let reset = resetting {
                resetting = nil
                if let after = reset.after, let before = reset.before,
                    let configuration = resetSettings.withLock({ $0?.configuration }), let realm = try? Realm(configuration: configuration)
                {
                    after(before, realm)
                }
            }
        case .error(let code, let text, let isFatal, _):
            let error = SyncError.fromServer(code: code, message: text, fatal: isFatal)
            if code == 7 {
                var failed: UInt64 = 0
                try write(link) { _, state in
                    state.queryState = 2
                    state.queryError = error.message
                    failed = state.querySetVersion
                }
                resolveQueryWaiters(through: failed, error: error)
            }
            if code == 2 || isFatal {
                // The connection ends; the loop renews the token (code 2) or stops the session
                // and reports the error (fatal).
                refusal = error
                throw error
            }
            report(error)
            if code == 6 || code == 8 {
                // Refused uploads are never acknowledged: the window is free again (a later
                // acknowledgement covers the versions before it).
                unacknowledged.removeAll()
                try await sendUploads()
            }
        case .mark(let id, _):
            resume(id)
        case .writeRefused(_, let objects, let reason):
            // The writes were not applied; the upload's own entry brings the objects back as the
            // store has them (RealmSwift's compensating write).
            let info = objects.map { CompensatingWriteInfo(objectType: $0.className, primaryKey: $0.primaryKey, reason: reason) }
            report(
                SyncError(
                    .writeRejected,
                    "the server did not apply writes to " + info.map { "\($0.objectType) \($0.key)" }.joined(separator: ", ")
                        + ": \(reason)",
                    compensatingWriteInfo: info))
        case .hello, .upload, .uploadPart, .query:
            throw SyncError(.clientSessionError, "the server sent a client's message")
        }
    }

    /// Applies downloaded entries as one commit (Spec/SYNC.md §7.3).
    private func applyDownload(_ entries: [Entry], _ link: RealmFileLink) throws {
        let journal = self.journal
        try write(link) { tx, state in try SyncFile.apply(entries, tx, &state, journal: journal) }
        notifyProgress(.download)
    }

    /// Runs `body` in a write transaction of the file with its sync state, after converting the
    /// local commits not yet converted, and commits.
    private func write(_ link: RealmFileLink, _ body: (WriteTransaction, inout SyncFileState) throws -> Void) throws {
        let acked = self.acked
        var integrated: UInt64 = 0
        let rejected: [SyncFile.Rejected]
        do {
            (_, rejected) = try SyncFile.transaction(link.store, embedded: embedded) { tx, state in
                state.uploadAcked = max(state.uploadAcked, acked)
                try body(tx, &state)
                state.uploadAcked = max(state.uploadAcked, state.integratedOwn)
                integrated = state.integratedOwn
            }
        } catch {
            // The journal cache may have followed a transaction that did not commit: read it anew.
            journal = SyncFile.Journal()
            throw error
        }
        link.committed()
        reportRejected(rejected)
        // An upload whose own entry came back was applied, even when its acknowledgement was lost
        // with a connection.
        if integrated > self.acked {
            self.acked = integrated
            resolveUploadWaiters()
        }
    }

    // MARK: Local changes

    /// A Realm of this process committed: its changes become uploads, sent when connected.
    func localCommitted() async {
        guard let link else { return }
        do {
            try convertNow(link)
            try await sendUploads()
        } catch let e as SyncError {
            fail(e)
        } catch {
            report(SyncError(.clientInternalError, "a local commit could not be prepared for upload: \(error)"))
        }
    }

    private func convertNow(_ link: RealmFileLink) throws {
        let store = link.store
        guard let converted = try SyncFileState.convertedThrough(try store.snapshot(kind: "sync")), converted < store.currentVersion else {
            return
        }
        try write(link) { _, _ in }
    }

    private func sendUploads() async throws {
        guard welcomed, let link, unacknowledged.count < Self.uploadWindow else { return }
        try journal.refresh(try link.store.snapshot(kind: "sync"))
        let due = journal.entries.filter { $0.upload.clientVersion > max(acked, sentThrough) }
        // At most 100 uploads and about `messageBudget` bytes to an UPLOAD; an upload larger than
        // that goes alone, in UPLOAD_PARTs (Spec/SYNC.md §4), so no message nears the server's
        // limit (16 MiB by default).
        var messages: [(message: SyncMessage, through: UInt64)] = []
        var batch: [Upload] = []
        var size = 0
        for entry in due {
            if !batch.isEmpty && (batch.count == 100 || size + entry.size > Self.messageBudget || entry.size > Self.messageBudget) {
                messages.append((.upload(batch), batch.last!.clientVersion))
                batch = []
                size = 0
            }
            if entry.size > Self.messageBudget {
                messages += Self.parts(of: entry.upload).map { ($0, entry.upload.clientVersion) }
            } else {
                batch.append(entry.upload)
                size += entry.size
            }
        }
        if let last = batch.last { messages.append((.upload(batch), last.clientVersion)) }
        for m in messages {
            if m.through != sentThrough {
                guard unacknowledged.count < Self.uploadWindow else { break }
                unacknowledged.append(m.through)
            }
            sentThrough = m.through
            try await send(m.message)
        }
        resolveUploadWaiters()
    }

    /// The bytes an UPLOAD message aims to stay under.
    static let messageBudget = 4 << 20

    /// `upload` as UPLOAD_PART messages of about ``messageBudget`` bytes each, in order.
    static func parts(of upload: Upload) -> [SyncMessage] {
        let runs = upload.instructions.runs(budget: messageBudget)
        return runs.enumerated().map { k, run in
            .uploadPart(Upload(clientVersion: upload.clientVersion, clock: upload.clock, instructions: run), last: k == runs.count - 1)
        }
    }

    func subscriptionsChanged() async {
        guard welcomed, let link, let state = try? SyncFileState.read(try link.store.snapshot(kind: "sync")) else { return }
        try? await sendQuery(state)
    }

    private func sendQuery(_ state: SyncFileState) async throws {
        try await send(
            .query(
                querySetVersion: state.querySetVersion,
                subscriptions: state.subscriptions.map { Subscription(name: $0.name, className: $0.className, query: $0.query) }))
    }

    // MARK: Waiting

    /// Waits until every local commit made before the call is acknowledged.
    func waitForUpload() async throws {
        guard let link else { return }
        if let fatal { throw fatal }
        try convertNow(link)
        let target = link.store.currentVersion
        try journal.refresh(try link.store.snapshot(kind: "sync"))
        guard let last = journal.entries.last(where: { $0.upload.clientVersion <= target })?.upload.clientVersion, last > acked else {
            return
        }
        try await sendUploads()
        try await wait(for: .upload(last))
    }

    /// Suspends until `awaited` happens, the session fails, or the task is cancelled.
    private func wait(for awaited: Awaited) async throws {
        let id = nextMark
        nextMark += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                if Task.isCancelled {
                    c.resume(throwing: CancellationError())
                    return
                }
                waiters[id] = (awaited, c)
                if case .mark = awaited, welcomed { queue?.yield(SyncMessage.mark(requestId: id, serverVersion: 0).encoded()) }
                if case .upload = awaited { resolveUploadWaiters() }
            }
        } onCancel: {
            Task { await self.resume(id, throwing: CancellationError()) }
        }
    }

    private func resume(_ id: UInt64, throwing error: (any Error)? = nil) {
        guard let w = waiters.removeValue(forKey: id) else { return }
        if let error { w.continuation.resume(throwing: error) } else { w.continuation.resume() }
    }

    private func resolveUploadWaiters() {
        for (id, w) in waiters {
            if case .upload(let target) = w.awaited, target <= acked { resume(id) }
        }
    }

    /// Waits until every change on the server when the call was made is in the file.
    func waitForDownload() async throws {
        if let fatal { throw fatal }
        // A subscription change made just before is part of what the server has for this file,
        // but its QUERY is sent from a task of its own: wait for its bootstrap first, so that a
        // MARK sent ahead of that QUERY cannot be answered before it (a failed set is the
        // subscriptions' error to report, not this wait's).
        if let link, let state = try SyncFileState.read(try link.store.snapshot(kind: "sync")), state.querySetVersion > 0,
            state.queryState == 0
        {
            do {
                try await waitForSubscriptions(state.querySetVersion)
            } catch is CancellationError {
                throw CancellationError()
            } catch {}
        }
        try await wait(for: .mark)
    }

    /// Waits until the file holds the server's data: the current subscription set's bootstrap,
    /// then every change the server has.
    func waitForOpen() async throws {
        guard let link else { return }
        let state = try SyncFileState.read(try link.store.snapshot(kind: "sync")) ?? SyncFileState()
        if state.querySetVersion > 0 { try await waitForSubscriptions(state.querySetVersion) }
        try await waitForDownload()
    }

    /// Waits until the subscription set `version` is complete (its bootstrap applied).
    func waitForSubscriptions(_ version: UInt64) async throws {
        guard let link else { return }
        let state = try SyncFileState.read(try link.store.snapshot(kind: "sync")) ?? SyncFileState()
        if state.querySetVersion > version || (state.querySetVersion == version && state.queryState == 1) { return }
        if state.querySetVersion == version && state.queryState == 2 {
            throw Realm.Error(code: .subscriptionFailed, reason: state.queryError)
        }
        if let fatal { throw fatal }
        try await wait(for: .query(version))
    }

    private func resolveQueryWaiters(through version: UInt64, error: SyncError?) {
        for (id, w) in waiters {
            guard case .query(let v) = w.awaited, v <= version else { continue }
            resume(id, throwing: error.flatMap { v == version ? Realm.Error(code: .subscriptionFailed, reason: $0.message) : nil })
        }
    }

    // MARK: Errors and control

    /// Tells the error handler of objects created outside every subscription, which the client
    /// removed instead of uploading (RealmSwift's compensating writes).
    nonisolated func reportRejected(_ rejected: [SyncFile.Rejected]) {
        guard !rejected.isEmpty else { return }
        let info = rejected.map { CompensatingWriteInfo(objectType: $0.className, primaryKey: $0.primaryKey) }
        report(
            SyncError(
                .writeRejected,
                "\(rejected.count) object(s) created outside every subscription were removed instead of uploaded: "
                    + info.map { "\($0.objectType) \($0.primaryKey)" }.joined(separator: ", "), compensatingWriteInfo: info))
    }

    private nonisolated func report(_ error: SyncError) {
        let handler = status.withLock { $0.errorHandler } ?? core.syncManager.errorHandler
        handler?(error, SyncSession(client: self))
    }

    /// A fatal error: the session stops (inactive) and every wait fails with it.
    private func fail(_ error: SyncError) {
        fatal = error
        status.withLock { $0.state = .inactive }
        report(error)
        for id in Array(waiters.keys) { resume(id, throwing: error) }
        Task { try? await outbound?.close(.normalClosure, reason: nil) }
    }

    func suspend() async {
        status.withLock {
            $0.suspended = true
            $0.state = .inactive
        }
        try? await outbound?.close(.normalClosure, reason: nil)
    }

    func resume() {
        fatal = nil
        status.withLock {
            $0.suspended = false
            $0.state = .active
        }
        wake?.yield()
    }

    private func disconnect() async {
        try? await outbound?.close(.normalClosure, reason: nil)
    }

    /// Tells the progress blocks of `direction` that the work they watch is done (the protocol
    /// does not size transfers yet); a block registered for the outstanding work is then removed.
    private nonisolated func notifyProgress(_ direction: SyncSession.ProgressDirection) {
        let blocks = status.withLock { s -> [@Sendable (SyncSession.Progress) -> Void] in
            let due = s.progress.filter { $0.value.direction == direction }
            for (id, p) in due where p.mode == .forCurrentlyOutstandingWork { s.progress[id] = nil }
            return due.values.map(\.block)
        }
        for b in blocks { b(SyncSession.Progress(transferredBytes: 1, transferrableBytes: 1, progressEstimate: 1)) }
    }
}
