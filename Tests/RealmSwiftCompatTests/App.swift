// A small app written in RealmSwift's spelling only: nothing in this file may use an API that
// RealmSwift does not have, or spell one differently (issue 29). It must compile unchanged.
import Foundation
import RealmSwift

enum TaskPriority: Int, PersistableEnum, Codable {
    case low, medium, high
}

final class Owner: Object, ObjectKeyIdentifiable {
    @Persisted(primaryKey: true) var _id: ObjectId
    @Persisted var name = ""
    @Persisted(indexed: true) var email: String
    @Persisted var age: Int?
    @Persisted var joined = Date(timeIntervalSince1970: 0)
    @Persisted var avatar: Data?
    @Persisted var balance: Decimal128
    @Persisted var rating: Double = 0
    @Persisted var weight: Float?
    @Persisted var active = true
    @Persisted var token: UUID
    @Persisted var small: Int8
    @Persisted var medium: Int16
    @Persisted var large: Int64
    @Persisted var extra: AnyRealmValue
    @Persisted var home: Place?
    @Persisted var tasks: List<TodoTask>
    @Persisted var nicknames: MutableSet<String>
    @Persisted var settings: Map<String, String>
    @Persisted var luckyNumbers: List<Int>
    @Persisted var optionalScores: List<Double?>

    convenience init(name: String, email: String) {
        self.init()
        self.name = name
        self.email = email
    }
}

final class Place: EmbeddedObject {
    @Persisted var city = ""
    @Persisted var street: String?
}

final class TodoTask: Object, Codable {
    @Persisted(primaryKey: true) var id: Int
    @Persisted var title = ""
    @Persisted var done = false
    @Persisted var priority = TaskPriority.medium
    @Persisted var due: Date?
    @Persisted var tags: List<String>
    @Persisted(originProperty: "tasks") var owners: LinkingObjects<Owner>

    enum CodingKeys: String, CodingKey {
        case id, title, done, priority, due, tags
    }
}

final class OwnerCard: Projection<Owner> {
    @Projected(\Owner.name) var displayName
    @Projected(\Owner.home?.city) var city
    @Projected(\Owner.tasks.projectTo.title) var taskTitles: ProjectedCollection<String>
}

/// What the app does with its data; each step returns something the tests check.
struct CompatApp {
    let realm: Realm

    init(directory: URL) throws {
        var config = Realm.Configuration()
        config.fileURL = directory.appendingPathComponent("app.realm")
        config.schemaVersion = 2
        config.migrationBlock = { migration, oldVersion in
            if oldVersion < 2 {
                migration.enumerateObjects(ofType: Owner.className()) { _, new in
                    new?["rating"] = 1.0
                }
            }
        }
        config.objectTypes = [Owner.self, Place.self, TodoTask.self]
        realm = try Realm(configuration: config)
    }

    func seed() throws {
        let decoder = JSONDecoder()
        let json =
            #"[{"id":1,"title":"Write","done":false,"priority":2,"tags":["work"]},"#
            + #"{"id":2,"title":"Read","done":true,"priority":0,"tags":[]}]"#
        let tasks = try decoder.decode([TodoTask].self, from: Data(json.utf8))
        try realm.write {
            let ada = Owner(name: "Ada", email: "ada@example.com")
            ada.age = 36
            ada.home = Place()
            ada.home?.city = "London"
            ada.tasks.append(objectsIn: tasks)
            ada.nicknames.insert("countess")
            ada.settings["theme"] = "dark"
            ada.luckyNumbers.append(objectsIn: [3, 7])
            ada.extra = .string("first programmer")
            realm.add(ada)
            realm.create(Owner.self, value: ["name": "Grace", "email": "grace@example.com", "age": 45], update: .modified)
        }
    }

    func queries() -> (open: Int, byPriority: [String], oldest: String?, averageAge: Double?, londoners: Int) {
        let tasks = realm.objects(TodoTask.self)
        let open = tasks.filter("done == false").count
        let byPriority = tasks.sorted(byKeyPath: "priority", ascending: false).map(\.title)
        let owners = realm.objects(Owner.self)
        let oldest = owners.sorted(by: \.age, ascending: false).first?.name
        let averageAge: Double? = owners.average(ofProperty: "age")
        let londoners = owners.where { $0.home.city == "London" }.count
        return (open, Array(byPriority), oldest, averageAge, londoners)
    }

    func sections() -> [Bool] {
        let sectioned = realm.objects(TodoTask.self).sectioned(by: \.done, ascending: true)
        return sectioned.allKeys
    }

    func complete(_ id: Int) throws {
        guard let task = realm.object(ofType: TodoTask.self, forPrimaryKey: id) else { return }
        try realm.write {
            task.done = true
        }
    }

    /// Opens the Realm again, as code far from the app's own Realm does: on this thread it is the
    /// same instance, so an object read elsewhere can be changed in its write.
    func rename(_ owner: Owner, to name: String) throws {
        let realm = try Realm(configuration: self.realm.configuration)
        try realm.write {
            owner.name = name
        }
    }

    func observeOpenTasks(_ onChange: @escaping (Int) -> Void) -> NotificationToken {
        realm.objects(TodoTask.self).filter("done == false").observe { change in
            switch change {
            case .initial(let results):
                onChange(results.count)
            case .update(let results, let deletions, _, _):
                onChange(results.count - deletions.count + deletions.count)
            case .error(let error):
                print(error)
            }
        }
    }

    func exportTasks() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(Array(realm.objects(TodoTask.self).sorted(byKeyPath: "id")))
    }

    func frozenCount() -> Int {
        let frozen = realm.objects(Owner.self).freeze()
        return frozen.count
    }

    func cards() -> [String] {
        realm.objects(OwnerCard.self).sorted(byKeyPath: "name").map { card in
            "\(card.displayName) (\(card.city ?? "-")): \(card.taskTitles.joined(separator: ", "))"
        }
    }

    func observeCard(_ card: OwnerCard, _ onChange: @escaping ([String]) -> Void) -> NotificationToken {
        card.observe(keyPaths: ["displayName"]) { change in
            if case .change(_, let properties) = change { onChange(properties.map(\.name)) }
        }
    }

    func totals<C: RealmCollection>(_ collection: C) -> Int where C.Element == Int {
        collection.sum()
    }
}
