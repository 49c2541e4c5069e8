import Foundation
import RealmSwift
import Testing

/// Runs the RealmSwift-spelled app of App.swift (issue 29's source-compatibility target).
@Suite struct CompatAppTests {
    static func directory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("compat-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    @Test func theAppRuns() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let app = try CompatApp(directory: dir)
        try app.seed()
        let q = app.queries()
        #expect(q.open == 1 && q.byPriority == ["Write", "Read"] && q.oldest == "Grace" && q.averageAge == 40.5 && q.londoners == 1)
        #expect(app.sections() == [false, true])
        var counts: [Int] = []
        let token = app.observeOpenTasks { counts.append($0) }
        app.realm.refresh()
        try app.complete(1)
        app.realm.refresh()
        #expect(counts == [1, 0])
        token.invalidate()
        let json = String(decoding: try app.exportTasks(), as: UTF8.self)
        #expect(
            json
                == #"[{"done":true,"due":null,"id":1,"priority":2,"tags":["work"],"title":"Write"},{"done":true,"due":null,"id":2,"priority":0,"tags":[],"title":"Read"}]"#
        )
        #expect(app.frozenCount() == 2)
        let ada = app.realm.objects(Owner.self).filter("name == 'Ada'").first!
        #expect(app.totals(ada.luckyNumbers) == 10)
        #expect(ada.tasks.first?.owners.first?.name == "Ada")
        #expect(app.cards() == ["Ada (London): Write, Read", "Grace (-): "])
        let card = app.realm.objects(OwnerCard.self).filter("name == 'Ada'").first!
        var changed: [[String]] = []
        let cardToken = app.observeCard(card) { changed.append($0) }
        try app.realm.write { ada.name = "Ada Lovelace" }
        app.realm.refresh()
        #expect(changed == [["displayName"]])
        cardToken.invalidate()
        let grace = try #require(app.realm.objects(Owner.self).filter("name == 'Grace'").first)
        try app.rename(grace, to: "Grace Hopper")
        #expect(grace.name == "Grace Hopper")
    }
}
