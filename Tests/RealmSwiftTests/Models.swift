import Foundation
import RealmSwift
import RealmTestSupport

enum Kind: Int, PersistableEnum {
    case small, large
}

final class AllTypes: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var bool = false
    @Persisted var int8: Int8 = 0
    @Persisted var int16: Int16 = 0
    @Persisted var int32: Int32 = 0
    @Persisted var int64: Int64 = 0
    @Persisted var float: Float = 0
    @Persisted var double: Double = 0
    @Persisted var string = ""
    @Persisted var data = Data()
    @Persisted var date = Date(timeIntervalSince1970: 0)
    @Persisted var decimal = Decimal128()
    @Persisted var objectId = ObjectId.generate()
    @Persisted var uuid = UUID()
    @Persisted var kind = Kind.small
    @Persisted var optInt: Int?
    @Persisted var optString: String?
    @Persisted var optDate: Date?
    @Persisted var optDouble: Double?
    @Persisted var optData: Data?
    @Persisted var optDecimal: Decimal128?
    @Persisted var optObjectId: ObjectId?
    @Persisted var optUUID: UUID?
    @Persisted var optKind: Kind?
    @Persisted var optBool: Bool?
    @Persisted var ints: List<Int>
    @Persisted var strings: List<String>
    @Persisted var optInts: List<Int?>
    @Persisted var dates: List<Date>
}

final class Person: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var name = ""
    @Persisted(indexed: true) var age = 0
    @Persisted var dog: Dog?
    @Persisted var dogs: List<Dog>
    @Persisted var address: Address?
}

final class Dog: Object {
    @Persisted var name = ""
    @Persisted var age = 0
    @Persisted var friend: Dog?
    @Persisted(originProperty: "dogs") var owners: LinkingObjects<Person>
}

final class Address: EmbeddedObject {
    @Persisted var street = ""
    @Persisted var city = ""
}

// Encodable as RealmSwift model classes become it: by declaring it (CollectionCodingTests).
extension Person: Encodable {}
extension Dog: Encodable {}
extension AllTypes: Encodable {}

/// A Realm in a fresh directory (kept alive by the returned directory).
func makeRealm(_ dir: TempDir = TempDir(), types: [ObjectBase.Type]? = [Person.self, Dog.self, Address.self, AllTypes.self]) throws -> (
    Realm, TempDir
) {
    var config = Realm.Configuration(fileURL: dir.url())
    config.objectTypes = types
    return (try Realm(configuration: config), dir)
}
