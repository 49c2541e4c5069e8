import Foundation
import RealmSyncProtocol
import Testing

extension SyncServerTests {
    /// Subscriptions through a link's primary key and a collection's `@count` (issue 52 §1):
    /// compiled to SQL on the typed tables, they bootstrap exactly the objects they match, and
    /// what SQL cannot answer from the object's own row stays a clear error.
    @Test func subscriptionsMayUseALinksPrimaryKeyAndACollectionsCount() async throws {
        let server = try await ServerProcess()
        defer { server.stop() }
        let writer = try await SyncConnection(server, token: try await server.anonymousToken())
        let origin = try await writer.hello()
        func dog(_ key: String) -> [Instruction] {
            [Instruction("Dog", .string(key), .create), Instruction("Dog", .string(key), .set(path: ["name"], value: .string(key)))]
        }
        func person(_ id: Int64, dog: String?, tags: Int, nums: [Int64], marks: [String]) -> [Instruction] {
            var out = TestSchema.person(id, name: "p\(id)", age: id)
            out.append(
                Instruction(
                    "Person", .int(id), .set(path: ["dog"], value: dog.map { .link(class: "Dog", primaryKey: .string($0)) } ?? .null)))
            var after = ElementId.head
            for k in 0..<tags {
                let element = ElementId(clock: 1 << 20, clientFileId: origin, index: UInt64(id * 10) + UInt64(k))
                out.append(Instruction("Person", .int(id), .listInsert(path: ["tags"], id: element, after: after, value: .string("t\(k)"))))
                after = element
            }
            out += nums.map { Instruction("Person", .int(id), .setAdd(path: ["nums"], value: .int($0))) }
            out += marks.map { Instruction("Person", .int(id), .mapSet(path: ["marks"], key: $0, value: .int(1))) }
            return out
        }
        writer.send(
            .upload([
                Upload(
                    clientVersion: 1, clock: 1 << 20,
                    instructions: dog("rex") + dog("fido") + person(1, dog: "rex", tags: 2, nums: [1, 2, 3], marks: [])
                        + person(2, dog: "fido", tags: 0, nums: [7], marks: ["a", "b"])
                        + person(3, dog: nil, tags: 3, nums: [], marks: ["c"])
                        + person(4, dog: "rex", tags: 1, nums: [4, 5], marks: []))
            ]))
        _ = try await writer.receiveAck()

        let reader = try await SyncConnection(server, token: try await server.anonymousToken())
        _ = try await reader.hello()
        var version: UInt64 = 0
        func matched(_ query: String) async throws -> [Int64] {
            version += 1
            reader.send(.query(querySetVersion: version, subscriptions: [Subscription(className: "Person", query: query)]))
            var keys: [Int64] = []
            while true {
                let m = try await reader.receive()
                if case .download = m { continue }
                guard let (objects, _, last) = m.bootstrapped() else {
                    Issue.record("\(query): expected a bootstrap, got \(m)")
                    return []
                }
                keys += objects.compactMap { if case .int(let k) = $0.primaryKey { k } else { nil } }
                if last { return keys.sorted() }
            }
        }
        #expect(try await matched("dog._id == 'rex'") == [1, 4])
        #expect(try await matched("dog._id != 'rex'") == [2, 3])
        #expect(try await matched("dog == nil") == [3])
        #expect(try await matched("dog != nil AND dog._id BEGINSWITH 'f'") == [2])
        #expect(try await matched("dog._id IN {'fido', 'none'}") == [2])
        #expect(try await matched("tags.@count >= 2") == [1, 3])
        #expect(try await matched("tags.@count == 0") == [2])
        #expect(try await matched("nums.@count BETWEEN {1, 2}") == [2, 4])
        #expect(try await matched("marks.@count > 0 OR nums.@count > 2") == [1, 2, 3])
        #expect(try await matched("marks.@count == 0 AND NOT dog._id == 'rex'") == [])
        // What the object's own row cannot answer is a clear error, and the session goes on.
        for query in ["dog == 'rex'", "dog.name == 'rex'", "tags.@max > 1", "ANY tags == 't0'", "name.@count > 1"] {
            version += 1
            reader.send(.query(querySetVersion: version, subscriptions: [Subscription(className: "Person", query: query)]))
            let m = try await reader.receive(until: { if case .error = $0 { true } else { false } })
            guard case .error(let code, let message, let fatal, _) = m else { continue }
            #expect(code == 7 && !fatal, "\(query): \(message)")
        }
        #expect(try await matched("dog._id == 'fido'") == [2])
        await writer.close()
        await reader.close()
    }
}
