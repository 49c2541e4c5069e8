import Foundation
import RealmSwift
import RealmSwiftSync

/// The synced class of the client crash tests.
final class CrashDog: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var name = ""
}

/// A child process for the client crash tests: logs in (or goes on as the app's current user),
/// opens its synced file, commits one `CrashDog` per id in `START..<START+COUNT` and prints
/// "wrote ID" after each commit returns, then waits until the server has every local commit and
/// prints "uploaded". The parent kills it at any point and starts it again on the same root.
///
/// usage: SyncClientWriter BASE_URL[,BASE_URL…] APP_ID ROOT START COUNT (several base URLs: the
/// servers of one deployment, the first tried first)
@main
struct SyncClientWriter {
    static func main() async throws {
        let args = CommandLine.arguments
        guard args.count == 6, let start = Int(args[4]), let count = Int(args[5]) else {
            FileHandle.standardError.write(Data("usage: SyncClientWriter BASE_URL APP_ID ROOT START COUNT\n".utf8))
            exit(1)
        }
        let servers = args[1].split(separator: ",").map(String.init)
        let app = App(
            id: args[2],
            configuration: AppConfiguration(
                baseURL: servers.first, rootDirectory: URL(fileURLWithPath: args[3]),
                syncTimeouts: SyncTimeoutOptions(connectTimeout: 15_000), additionalBaseURLs: Array(servers.dropFirst())))
        let user: User
        if let current = app.currentUser { user = current } else { user = try await app.login(credentials: .anonymous) }
        var config = user.flexibleSyncConfiguration(initialSubscriptions: { $0.append(QuerySubscription<CrashDog>(name: "all")) })
        config.objectTypes = [CrashDog.self]
        config.syncConfiguration?.errorHandler = { error, _ in
            FileHandle.standardError.write(Data("sync error: \(error)\n".utf8))
        }
        try write(config, start, count)
        let session = try Realm(configuration: config).syncSession!
        try await session.wait(for: .upload)
        print("uploaded")
        fflush(nil)
    }

    /// The commits, on this thread (a Realm stays on the thread that opened it).
    static func write(_ config: Realm.Configuration, _ start: Int, _ count: Int) throws {
        let realm = try Realm(configuration: config)
        for id in start..<(start + count) {
            try realm.write {
                let dog = CrashDog()
                dog._id = id
                dog.name = "dog \(id)"
                realm.add(dog)
            }
            print("wrote \(id)")
            fflush(nil)
        }
    }
}
