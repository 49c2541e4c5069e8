import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport
import Testing

/// The schema the binding tests run against, made by a real write transaction in a throwaway store
/// (so the catalog is exactly what the engine builds):
///
/// - `Person`: `id` int (primary key), `name` string, `nickname` string?, `age` int, `height`
///   double?, `weight` float, `score` double, `balance` decimal128, `active` bool, `born` timestamp,
///   `avatar` binary?, `oid` objectId, `uid` uuid, `tags` [string], `scores` [int], `ratings`
///   [double?], `best` → Dog, `spouse` → Person, `dogs` [Dog]
/// - `Dog`: `name` string, `age` int, `weight` double?, `owner` → Person, `toys` [Toy], plus the
///   LinkingObjects property `owners` (origin `Person.dogs`)
/// - `Toy`: `name` string, `price` decimal128, `bought` timestamp?
enum Fixture {
    static let catalog: Catalog = {
        let dir = TempDir()
        let store = try! Store.open(at: dir.file(), options: .init(create: true))
        let tx = try! store.beginWrite()
        defer { tx.cancel() }
        try! tx.createTable("Person", primaryKey: ColumnSchema("id", .int))
        try! tx.createTable("Dog")
        try! tx.createTable("Toy")
        let person: [ColumnSchema] = [
            ColumnSchema("name", .string), ColumnSchema("nickname", .string, nullable: true), ColumnSchema("age", .int),
            ColumnSchema("height", .double, nullable: true), ColumnSchema("weight", .float), ColumnSchema("score", .double),
            ColumnSchema("balance", .decimal128), ColumnSchema("active", .bool), ColumnSchema("born", .timestamp),
            ColumnSchema("avatar", .binary, nullable: true), ColumnSchema("oid", .objectId), ColumnSchema("uid", .uuid),
            ColumnSchema("tags", .string, list: true), ColumnSchema("scores", .int, list: true),
            ColumnSchema("ratings", .double, nullable: true, list: true), ColumnSchema("best", .link, linkTarget: "Dog"),
            ColumnSchema("spouse", .link, linkTarget: "Person"), ColumnSchema("dogs", .link, list: true, linkTarget: "Dog"),
        ]
        for c in person { try! tx.addColumn("Person", c) }
        let dog: [ColumnSchema] = [
            ColumnSchema("name", .string), ColumnSchema("age", .int), ColumnSchema("weight", .double, nullable: true),
            ColumnSchema("owner", .link, linkTarget: "Person"), ColumnSchema("toys", .link, list: true, linkTarget: "Toy"),
        ]
        for c in dog { try! tx.addColumn("Dog", c) }
        let toy = [ColumnSchema("name", .string), ColumnSchema("price", .decimal128), ColumnSchema("bought", .timestamp, nullable: true)]
        for c in toy { try! tx.addColumn("Toy", c) }
        return tx.catalog
    }()

    static let linkingObjects = [LinkingObjectsProperty(table: "Dog", name: "owners", originTable: "Person", originColumn: "dogs")]

    static func table(_ name: String) -> TableSchema { catalog.table(name)! }

    /// `text` bound to `table`.
    static func bind(_ text: String, _ arguments: [QueryArgument] = [], table: String = "Person") throws(QueryError) -> BoundPredicate {
        try BoundPredicate.compile(text, arguments: arguments, table: Self.table(table), catalog: catalog, linkingObjects: linkingObjects)
    }
}

/// The marker tests put in query text where they expect an error; it is removed before parsing.
let caret: Character = "‸"

/// `text` without its caret marker, and the marker's offset in Unicode scalars (nil without one).
func splitCaret(_ text: String) -> (text: String, offset: Int?) {
    guard let i = text.firstIndex(of: caret) else { return (text, nil) }
    var clean = text
    clean.remove(at: i)
    return (clean, text.unicodeScalars.distance(from: text.unicodeScalars.startIndex, to: i))
}

/// An expected error: code and (from the caret marker) offset.
struct ErrorCase: CustomTestStringConvertible, Sendable {
    var marked: String
    var arguments: [QueryArgument]
    var code: QueryError.Code
    var table: String

    init(_ marked: String, _ code: QueryError.Code, _ arguments: [QueryArgument] = [], table: String = "Person") {
        self.marked = marked
        self.code = code
        self.arguments = arguments
        self.table = table
    }

    var testDescription: String { "\(marked) → \(code)" }

    /// Checks that `run` throws this case's code at its marked offset, with the text attached.
    func check(_ run: (String, [QueryArgument]) throws(QueryError) -> Void) {
        let (text, offset) = splitCaret(marked)
        do {
            try run(text, arguments)
            Issue.record("expected \(code) for \(marked)")
        } catch {
            #expect(error.code == code, "\(error)")
            #expect(error.offset == offset, "\(error)")
            #expect(error.text == text)
            #expect(!error.message.isEmpty)
        }
    }
}
