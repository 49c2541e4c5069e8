import ArgumentParser
import Foundation
import Logging
import NIOSSL
import RealmSyncServer

/// `realm-sync`: the sync service of Spec/SYNC.md, storing everything in PostgreSQL.
@main
struct RealmSync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-sync",
        abstract: "The sync service for RealmSwift on Linux, storing in PostgreSQL (Spec/SYNC.md).",
        subcommands: [Serve.self]
    )
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve one application until SIGTERM or SIGINT.",
        discussion: """
            Creates or migrates the application's tables in the PostgreSQL database, then serves the \
            login endpoints and the sync WebSocket. Prints "listening on HOST:PORT" once it accepts \
            connections. Exit status: 0 after a graceful shutdown, 1 for a bad option or a database \
            it cannot use.
            """
    )

    @Option(help: "The PostgreSQL database: postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE.")
    var postgres: String

    @Option(help: "The address and port to listen on, e.g. 127.0.0.1:9090 or [::1]:9090 (port 0: any free port).")
    var listen: String

    @Option(help: "A file holding the HS256 secret (at least 32 bytes) that signs tokens.")
    var jwtSecretFile: String

    @Option(help: "The application id clients name in App(id:).")
    var appId = "default"

    @Option(help: "Seconds a client has, once connected, to send its first message (HELLO).")
    var handshakeTimeout = 10.0

    @Option(help: "The log level: trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    @Option(
        help:
            "A JSON file of roles with read and write filters per class (Spec/SYNC.md §10); without it every user reads and writes everything."
    )
    var permissions: String?

    @Option(
        help:
            "Seconds the history keeps entries not every client has (Spec/SYNC.md §8.5); a client offline for longer gets a client reset. Default: the history is kept whole."
    )
    var historyRetention: Double?

    @Option(help: "A PEM file of the server's TLS certificate chain; with --tls-key, the server speaks HTTPS and WSS.")
    var tlsCertificate: String?

    @Option(help: "A PEM file of the TLS certificate's private key.")
    var tlsKey: String?

    @Option(help: "The audience (aud claim) an application's JWT must name to log in. Default: any.")
    var jwtAudience: String?

    @Option(help: "The most sessions one user may have open on this server at once.")
    var maxSessionsPerUser = 100

    func run() async throws {
        let (host, port) = try Self.address(listen)
        guard let secret = FileManager.default.contents(atPath: jwtSecretFile) else {
            throw ValidationError("cannot read the JWT secret file \(jwtSecretFile)")
        }
        var bytes = Array(secret)
        while let last = bytes.last, last == 0x0A || last == 0x0D { bytes.removeLast() }
        let configuration: SyncServerConfiguration
        do {
            configuration = try SyncServerConfiguration(
                appId: appId, host: host, port: port, postgres: try SyncServerConfiguration.postgres(url: postgres), jwtSecret: bytes)
        } catch {
            throw ValidationError(error.description)
        }
        guard handshakeTimeout > 0 else { throw ValidationError("--handshake-timeout must be positive") }
        var configured = configuration
        configured.handshakeTimeout = .milliseconds(Int64(handshakeTimeout * 1000))
        if let permissions {
            guard let data = FileManager.default.contents(atPath: permissions) else {
                throw ValidationError("cannot read the permissions file \(permissions)")
            }
            do {
                configured.permissions = try Permissions(json: data)
            } catch {
                throw ValidationError(error.description)
            }
        }
        configured.jwtAudience = jwtAudience
        switch (tlsCertificate, tlsKey) {
        case (nil, nil): break
        case (let certificate?, let key?):
            do {
                configured.tls = TLSConfiguration.makeServerConfiguration(
                    certificateChain: try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) },
                    privateKey: .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)))
            } catch {
                throw ValidationError("cannot read the TLS certificate or key: \(error)")
            }
        default: throw ValidationError("--tls-certificate and --tls-key go together")
        }
        guard maxSessionsPerUser > 0 else { throw ValidationError("--max-sessions-per-user must be positive") }
        configured.maximumSessionsPerUser = maxSessionsPerUser
        if let historyRetention {
            guard historyRetention > 0 else { throw ValidationError("--history-retention must be positive") }
            configured.historyRetention = .milliseconds(Int64(historyRetention * 1000))
        }
        guard let level = Logger.Level(rawValue: logLevel) else { throw ValidationError("unknown log level \(logLevel)") }
        var logger = Logger(label: "realm-sync")
        logger.logLevel = level
        do {
            try await SyncServer(configured, logger: logger).run { port in
                let shown = host.contains(":") ? "[\(host)]" : host
                FileHandle.standardOutput.write(Data("listening on \(shown):\(port)\n".utf8))
            }
        } catch let error as SyncServerError {
            FileHandle.standardError.write(Data("realm-sync: \(error.description)\n".utf8))
            throw ExitCode(1)
        }
    }

    /// `HOST:PORT` or `[IPV6]:PORT`.
    static func address(_ text: String) throws -> (String, Int) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":") else { throw ValidationError("--listen \(text): expected [ADDRESS]:PORT") }
            portText = rest.dropFirst()
        } else if let colon = text.lastIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        } else {
            throw ValidationError("--listen \(text): expected HOST:PORT")
        }
        guard !host.isEmpty, let port = Int(portText), (0...65535).contains(port) else {
            throw ValidationError("--listen \(text): expected HOST:PORT with a port from 0 to 65535")
        }
        return (String(host), port)
    }
}
