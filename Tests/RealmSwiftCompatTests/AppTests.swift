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

    /// Generic code over RealmCollection and AnyRealmCollection (GenericCollections.swift) on the
    /// app's data: objects and values, managed lists, results and linking objects.
    @Test func genericCollectionCodeWorksForObjectsAndValues() throws {
        let dir = try Self.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let app = try CompatApp(directory: dir)
        try app.seed()
        let ada = app.realm.objects(Owner.self).filter("name == 'Ada'").first!
        let numbers = Array(ada.luckyNumbers)
        #expect(matching(ada.tasks, "done == false") == ada.tasks.filter { !$0.done }.count)
        #expect(matching(ada.luckyNumbers, "self > 1") == numbers.filter { $0 > 1 }.count)
        #expect(matching(app.realm.objects(TodoTask.self), "title BEGINSWITH 'W'") == 1)
        #expect(biggest(ada.luckyNumbers) == numbers.max())
        #expect(biggest(app.realm.objects(Owner.self).sorted(byKeyPath: "name").first!.luckyNumbers) == numbers.max())
        let (least, sum) = smallestAndTotal(ada.luckyNumbers)
        #expect(least == numbers.min() && sum == numbers.reduce(0, +))
        let s = summary(ada.tasks, query: "title == 'Read'", keyPath: "title")
        #expect(s.first == Array(ada.tasks).firstIndex { $0.title == "Read" } && s.sorted == ada.tasks.count && s.distinct == 2)
        let v = summary(ada.luckyNumbers, query: "self == 4", keyPath: "self")
        #expect(v.first == numbers.firstIndex(of: 4) && v.sorted == numbers.count && v.distinct == Set(numbers).count)
        #expect(total(ada.tasks, of: "id") == Array(ada.tasks).reduce(0) { $0 + $1.id })
        #expect(total(ada.tasks.first!.owners, of: "small") == 0)

        // AnyRealmCollection: live, queryable, observable and freezable as what it wraps.
        let list = anyTasks(ada, useList: true)
        let results = anyTasks(ada, useList: false)
        #expect(list.count == ada.tasks.count && results.count == app.realm.objects(TodoTask.self).count)
        #expect(list.filter("done == true").count == ada.tasks.filter("done == true").count)
        #expect(AnyRealmCollection(list) == list && list != results)
        let frozen = list.freeze()
        #expect(frozen.isFrozen && frozen.count == list.count && frozen.thaw()?.count == list.count)
        var seen: [Int] = []
        let token = results.observe { change in
            switch change {
            case .initial(let c): seen.append(c.count)
            case .update(let c, _, _, _): seen.append(c.count)
            case .error: seen.append(-1)
            }
        }
        app.realm.refresh()
        try app.realm.write { app.realm.add(TodoTask(value: ["id": 99, "title": "New"])) }
        app.realm.refresh()
        #expect(seen == [2, 3])
        token.invalidate()

        // observe(keyPaths:) with Swift key paths on a List: only title changes count.
        var modified: [Int] = []
        let titles = observeTitles(ada.tasks) { modified.append($0) }
        app.realm.refresh()
        try app.realm.write { ada.tasks.first!.done.toggle() }
        app.realm.refresh()
        try app.realm.write { ada.tasks.first!.title = "Renamed" }
        app.realm.refresh()
        #expect(modified == [1])
        titles.invalidate()
    }
}
