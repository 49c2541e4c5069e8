import Foundation
import RealmTestSupport
import Testing

@testable import RealmSwift

@Suite struct PersistedTypesTests {
    static func filled(_ id: Int, extreme: Bool) -> AllTypes {
        let o = AllTypes()
        o.id = id
        o.bool = true
        o.int8 = extreme ? .min : 8
        o.int16 = extreme ? .max : 16
        o.int32 = extreme ? .min : 32
        o.int64 = extreme ? .max : 64
        o.float = extreme ? .nan : 1.5
        o.double = extreme ? -.infinity : 2.25
        o.string = extreme ? "" : "héllo 🌍"
        o.data = extreme ? Data() : Data([0, 1, 2, 255])
        o.date = extreme ? .distantPast : Date(timeIntervalSinceReferenceDate: 12345.678)
        o.decimal = extreme ? (try! Decimal128(string: "9999999999999999999999999999999999E+6111")) : (try! Decimal128(string: "-1.25"))
        o.objectId = try! ObjectId(string: "0123456789abcdef01234567")
        o.uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        o.kind = .large
        o.optInt = extreme ? nil : 5
        o.optString = extreme ? nil : ""
        o.optDate = extreme ? nil : .distantFuture
        o.optDouble = extreme ? nil : .nan
        o.optData = extreme ? nil : Data()
        o.optDecimal = extreme ? nil : Decimal128(1)
        o.optObjectId = extreme ? nil : ObjectId.generate()
        o.optUUID = extreme ? nil : UUID()
        o.optKind = extreme ? nil : .small
        o.optBool = extreme ? nil : false
        o.ints.append(contentsOf: extreme ? [] : [1, -2, .max])
        o.strings.append(contentsOf: extreme ? [""] : ["a", "b"])
        o.optInts.append(contentsOf: [nil, 3])
        o.dates.append(contentsOf: [.distantPast, .distantFuture])
        return o
    }

    static func same(_ a: AllTypes, _ b: AllTypes) -> Bool {
        a.id == b.id && a.bool == b.bool && a.int8 == b.int8 && a.int16 == b.int16 && a.int32 == b.int32 && a.int64 == b.int64
            && a.float.bitPattern == b.float.bitPattern && a.double.bitPattern == b.double.bitPattern && a.string == b.string
            && a.data == b.data && a.date == b.date && a.decimal == b.decimal && a.objectId == b.objectId && a.uuid == b.uuid
            && a.kind == b.kind && a.optInt == b.optInt && a.optString == b.optString && a.optDate == b.optDate
            && a.optDouble?.bitPattern == b.optDouble?.bitPattern && a.optData == b.optData && a.optDecimal == b.optDecimal
            && a.optObjectId == b.optObjectId && a.optUUID == b.optUUID && a.optKind == b.optKind && a.optBool == b.optBool
            && Array(a.ints) == Array(b.ints) && Array(a.strings) == Array(b.strings) && Array(a.optInts) == Array(b.optInts)
            && Array(a.dates) == Array(b.dates)
    }

    @Test(arguments: [false, true])
    func everyTypeRoundTripsThroughAReopen(extreme: Bool) throws {
        let dir = TempDir()
        let original = Self.filled(1, extreme: extreme)
        let expected = Self.filled(1, extreme: extreme)
        expected.objectId = original.objectId
        expected.optObjectId = original.optObjectId
        expected.optUUID = original.optUUID
        #expect(Self.same(original, expected))
        do {
            let (realm, _) = try makeRealm(dir)
            try realm.write { realm.add(original) }
            #expect(Self.same(realm.objects(AllTypes.self)[0], expected))
        }
        let (realm, _) = try makeRealm(dir)
        #expect(Self.same(realm.objects(AllTypes.self)[0], expected))
    }

    /// An unmanaged object gives back exactly what was set, whichever way it was set (accessor,
    /// dictionary, dynamic setter, in any order): numbers and strings are kept in their stored
    /// form, dates (whose stored form counts whole nanoseconds) as set.
    @Test func unmanagedObjectsKeepExactlyWhatWasSet() throws {
        let fine = Date(timeIntervalSinceReferenceDate: 0.123_456_789_123_4)
        let o = AllTypes(value: ["id": 7, "string": "from a dictionary", "date": fine])
        #expect(o.id == 7 && o.string == "from a dictionary" && o.date == fine)
        o.string = "then an accessor"
        o.int8 = .min
        o.float = -.nan
        o.optDouble = -0.0
        o.optString = nil
        o.date = fine.addingTimeInterval(1e-12)
        #expect(o.string == "then an accessor" && o.int8 == .min && o.float.bitPattern == (-Float.nan).bitPattern)
        #expect(o.optDouble?.bitPattern == (-0.0 as Double).bitPattern && o.optString == nil)
        #expect(o.date == fine.addingTimeInterval(1e-12) && o.date != fine)
        try o.setValue("and a dynamic one", forProperty: "string")
        let dynamic = try o.value(forProperty: "string") as? String
        #expect(o.string == "and a dynamic one" && dynamic == "and a dynamic one")
        o.string = "last"
        let (last, int8) = (try o.value(forProperty: "string") as? String, try o.value(forProperty: "int8") as? Int8)
        #expect(last == "last" && int8 == .min)
        #expect(o.description.contains("string = \"last\""))
        // Data is kept as set: a slice keeps its indices.
        let whole = Data([0, 1, 2, 3, 4, 5, 6, 7])
        o.data = whole[4..<8]
        #expect(o.data.startIndex == 4 && o.data[4] == 4 && o.data == Data([4, 5, 6, 7]))
        let (realm, _) = try makeRealm()
        try realm.write { realm.add(o) }
        let stored = realm.objects(AllTypes.self)[0]
        #expect(stored.string == "last" && stored.int8 == .min && stored.optString == nil && stored.data == Data([4, 5, 6, 7]))
        #expect(abs(stored.date.timeIntervalSince(fine)) < 1e-9)
    }

    /// Adding objects hands their emptied value slots to new unmanaged objects: a new object never
    /// sees another's values, and one whose add failed keeps its own.
    @Test func newObjectsStartEmptyAfterOthersWereAdded() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            for i in 0..<100 {
                let o = AllTypes()
                o.id = i
                if i % 2 == 0 {
                    o.string = "set \(i)"
                    o.int64 = Int64(i)
                    o.optString = "opt"
                }
                #expect(i % 2 == 0 || (o.string == "" && o.int64 == 0 && o.optString == nil))
                realm.add(o)
            }
            let duplicate = AllTypes()
            duplicate.id = 3
            duplicate.string = "mine"
            #expect(throws: Realm.Error.self) { try realm.checkedAdd(duplicate) }
            #expect(duplicate.realm == nil && duplicate.string == "mine" && duplicate.id == 3)
        }
        for o in realm.objects(AllTypes.self) {
            #expect(o.string == (o.id % 2 == 0 ? "set \(o.id)" : "") && o.int64 == (o.id % 2 == 0 ? Int64(o.id) : 0))
            #expect(o.optString == (o.id % 2 == 0 ? "opt" : nil))
        }
    }

    @Test func defaultsOfAnUnsetObject() throws {
        let (realm, _) = try makeRealm()
        let o = AllTypes()
        let id = o.objectId
        #expect(o.objectId == id)  // a generated default is stable
        try realm.write { realm.add(o) }
        let r = realm.objects(AllTypes.self)[0]
        #expect(r.string == "" && r.optInt == nil && r.ints.isEmpty && r.kind == .small && r.objectId == id)
    }

    @Test func datesKeepSubSecondPrecision() throws {
        let (realm, _) = try makeRealm()
        let dates = [Date(), Date(timeIntervalSince1970: -1.5), Date(timeIntervalSince1970: 1e9 + 0.123456), .distantPast, .distantFuture]
        try realm.write {
            for (i, d) in dates.enumerated() { realm.add(AllTypes(value: ["id": i, "date": d])) }
        }
        #expect(realm.objects(AllTypes.self).map(\.date) == dates)
    }

    @Test func createCoercesLooselyTypedValues() throws {
        let (realm, _) = try makeRealm()
        try realm.write {
            realm.create(
                AllTypes.self,
                value: [
                    "id": 1, "int8": 3, "float": 2.5, "double": 3, "objectId": "0123456789abcdef01234567",
                    "decimal": "1.5", "kind": 1, "ints": [1, 2], "optInt": NSNull(),
                ])
        }
        let o = realm.objects(AllTypes.self)[0]
        #expect(o.int8 == 3 && o.float == 2.5 && o.double == 3 && o.kind == .large && Array(o.ints) == [1, 2] && o.optInt == nil)
        #expect(o.decimal == (try Decimal128(string: "1.5")))
        try realm.write {
            #expect(throws: Realm.Error.self) { try realm.checkedCreate(AllTypes.self, value: ["id": 2, "int8": "x"]) }
            #expect(throws: Realm.Error.self) { try realm.checkedCreate(AllTypes.self, value: ["id": 3, "nope": 1]) }
            #expect(throws: Realm.Error.self) { try realm.checkedCreate(AllTypes.self, value: ["id": 4, "kind": 7]) }
        }
    }
}

@Suite struct KeyPathNameTests {
    @Test func keyPathsBecomePropertyNames() throws {
        #expect(try KeyPathNames.path(\Person.name) == "name")
        #expect(try KeyPathNames.path(\Person.dog?.name) == "dog.name")
        #expect(try KeyPathNames.path(\Person.dog?.friend?.age) == "dog.friend.age")
        #expect(try KeyPathNames.path(\Person.dogs) == "dogs")
        #expect(try KeyPathNames.path(\Dog.owners) == "owners")
        #expect(throws: Realm.Error.self) { try KeyPathNames.path(\Person.description) }
    }
}

final class WithDefaults: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted var count = 5
    @Persisted var label = "x"
    @Persisted var tags: List<String>

    required init() { super.init() }

    /// A designated initializer that initializes a wrapper from a value (phase one).
    init(count: Int) {
        self.count = count
        super.init()
    }
}

@Suite struct InitialValueTests {
    @Test func initialValuesSurviveAddWhetherOrNotAccessorsRan() throws {
        let dir = TempDir()
        let realm = try Realm(configuration: .init(fileURL: dir.url(), objectTypes: [WithDefaults.self]))
        // Before any accessor of the class ran (Mirror reads the wrappers).
        try realm.write { realm.add(WithDefaults(count: 9)) }
        // Let accessors run (their key paths are then known) and add more.
        let probe = WithDefaults()
        probe.id = 1
        _ = probe.count
        _ = probe.label
        _ = probe.tags
        try realm.write {
            realm.add(probe)
            let a = WithDefaults(count: 7)
            a.id = 2
            realm.add(a)
            let b = WithDefaults()
            b.id = 3
            realm.add(b)
        }
        let all = realm.objects(WithDefaults.self).sorted(byKeyPath: "id")
        #expect(all.map(\.count) == [9, 5, 7, 5])
        #expect(all.map(\.label) == ["x", "x", "x", "x"])
    }
}
