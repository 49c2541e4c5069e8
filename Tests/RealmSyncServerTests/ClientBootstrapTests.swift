import Foundation
import RealmSwift
import RealmSwiftSync
import Testing

/// A synced class with a property of every scalar type, optional ones, a link and a collection:
/// what a bootstrap sends as columns (and, for the list, among each row's other properties).
final class ClientSample: Object {
    @Persisted(primaryKey: true) var _id = 0
    @Persisted var flag = false
    @Persisted var count = 0
    @Persisted var ratio: Float = 0
    @Persisted var amount = 0.0
    @Persisted var text = ""
    @Persisted var bytes = Data()
    @Persisted var at = Date(timeIntervalSince1970: 0)
    @Persisted var oid = ObjectId()
    @Persisted var key = UUID()
    @Persisted var price = Decimal128(0)
    @Persisted var maybe: Int?
    @Persisted var maybeText: String?
    @Persisted var dog: ClientDog?
    @Persisted var tags = List<String>()

    /// Every value, as text, to compare two files' objects.
    var summary: String {
        [
            "\(_id)", "\(flag)", "\(count)", "\(ratio)", "\(amount)", text, bytes.base64EncodedString(),
            "\(at.timeIntervalSince1970)", oid.stringValue, key.uuidString, "\(price)", "\(maybe.map(String.init) ?? "nil")",
            maybeText ?? "nil", dog?.name ?? "nil", tags.joined(separator: ","),
        ].joined(separator: "|")
    }
}

extension SyncServerTests {
    /// A subscriber bootstraps 1,500 wide objects (several `BOOTSTRAP_TABLE`s: a first range of
    /// 64 pages holds a few hundred) with every scalar type, nulls, links and lists, and holds
    /// exactly what the writer wrote; a second bootstrap of a file that holds some of the objects
    /// keeps those and removes the others.
    @Test func aBootstrapBringsEveryTypeExactlyOverSeveralMessages() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let types: [ObjectBase.Type] = [ClientSample.self, ClientDog.self, ClientOwner.self]
        let a = try await TestClient(server, objectTypes: types) {
            $0.append(QuerySubscription<ClientSample>(name: "samples"))
            $0.append(QuerySubscription<ClientDog>(name: "dogs"))
        }
        let n = 1_500
        try a.write { realm in
            let dogs = (0..<3).map { ClientDog(name: "dog\($0)", age: $0) }
            for d in dogs { realm.add(d) }
            for i in 0..<n {
                let s = ClientSample()
                s._id = i
                s.flag = i % 2 == 0
                s.count = i * 7 - 5_000
                s.ratio = Float(i) / 8
                s.amount = Double(i) * 1.25
                s.text = i % 5 == 0 ? "" : "sample-\(i)-é"
                s.bytes = Data([UInt8(i % 256), 0, 255])
                s.at = Date(timeIntervalSince1970: 1_700_000_000 + Double(i) + 0.000_000_5)
                s.oid = ObjectId.generate()
                s.key = UUID()
                s.price = Decimal128(stringLiteral: "\(i).25")
                s.maybe = i % 3 == 0 ? nil : i
                s.maybeText = i % 4 == 0 ? nil : "m\(i)"
                s.dog = i % 10 == 0 ? nil : dogs[i % 3]
                if i % 7 == 0 { s.tags.append(objectsIn: ["a\(i)", "b"]) }
                realm.add(s)
            }
        }
        try await bounded(120) { try await a.sync() }
        let expected = try Realm(configuration: a.configuration).objects(ClientSample.self).sorted(by: \._id).map(\.summary)
        #expect(expected.count == n)

        let b = try await TestClient(server, objectTypes: types) {
            $0.append(QuerySubscription<ClientSample>(name: "samples"))
            $0.append(QuerySubscription<ClientDog>(name: "dogs"))
        }
        let summaries = { () -> [String] in
            Array(try Realm(configuration: b.configuration).objects(ClientSample.self).sorted(by: \._id).map(\.summary))
        }
        try await bounded(120) { try await b.sync() }
        let got = try summaries()
        #expect(got.count == n)
        #expect(got == Array(expected), "first difference: \(zip(got, expected).first { $0 != $1 }.map { "\($0) ≠ \($1)" } ?? "none")")

        // A new subscription set on a file that holds objects: those it still matches keep their
        // values, the others leave.
        let subscriptions = try Realm(configuration: b.configuration).subscriptions
        try await subscriptions.update {
            subscriptions.removeAll()
            subscriptions.append(QuerySubscription<ClientSample>(name: "some") { $0._id < 100 })
            subscriptions.append(QuerySubscription<ClientDog>(name: "dogs"))
        }
        #expect(try await eventually { try summaries() == Array(expected.prefix(100)) })
        await a.close()
        await b.close()
    }
}
