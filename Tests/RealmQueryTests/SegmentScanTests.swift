import Foundation
import RealmQuery
import RealmStorage
import RealmTestSupport
import Testing

/// The snapshot's segment scans (packed lanes decided per row group, dictionary strings decided
/// per distinct value, nulls, groups that predate a column) agree with object-by-object
/// evaluation, which a write transaction on the same data performs.
@Suite struct SegmentScanTests {
    static let predicates = [
        "n > 500", "n BETWEEN {100, 199}", "n < 0", "n != 7", "n IN {1, 2, 3, 999}", "on == nil", "on != nil AND on < 50",
        "on > 10 OR n < 5", "NOT on BETWEEN {10, 20}", "w == 'w3'", "w BEGINSWITH 'w1'", "w ENDSWITH '7'", "w CONTAINS '2'",
        "w ==[c] 'W4'", "w LIKE 'w?'", "w != 'w0'", "ow == nil", "ow == 'x'", "ow != 'x'", "ow BEGINSWITH 'x'", "flag == true",
        "flag == true AND n > 900", "d > 0.5", "d == 0.25", "d BETWEEN {0.1, 0.2}", "d != 0.25", "late == nil", "late > 3",
        "n > 100 AND w == 'w1' AND d < 0.5", "(n < 10 OR n > 990) AND NOT flag == false", "t > %@", "t BETWEEN %@", "late2 != 2",
    ]

    @Test func scansAgreeWithObjectByObjectEvaluation() throws {
        let dir = TempDir()
        let store = try Store.open(at: dir.file(), options: .init(create: true, rowGroupCapacity: 100))
        let tx = try store.beginWrite()
        try tx.createTable("S")
        let columns: [ColumnSchema] = [
            .init("n", .int), .init("on", .int, nullable: true), .init("w", .string), .init("ow", .string, nullable: true),
            .init("flag", .bool), .init("d", .double), .init("t", .timestamp),
        ]
        for c in columns { try tx.addColumn("S", c) }
        for i in 0..<1_000 {
            try tx.insert(
                "S",
                [
                    // `n` ascends, so each row group's packed lane spans a narrow range of values.
                    "n": .int(Int64(i)), "on": i % 7 == 0 ? .null : .int(Int64(i % 100)), "w": .string("w\(i % 10)"),
                    "ow": i % 3 == 0 ? .null : .string(i % 2 == 0 ? "x" : "xy"), "flag": .bool(i % 4 == 0),
                    "d": .double(Double(i % 20) / 20), "t": .timestamp(seconds: Int64(i), nanoseconds: 0),
                ])
        }
        _ = try tx.commit()
        // Columns added later: the committed groups predate them (their rows read the default).
        let late = try store.beginWrite()
        try late.addColumn("S", ColumnSchema("late", .int, nullable: true))
        try late.addColumn("S", ColumnSchema("late2", .int))
        let snapshot = try late.commit()

        let reader = try TableReader(snapshot, "S")
        let scan = try reader.scan(group: 0, column: reader.columnIndex("w")!)
        #expect(scan.dictionary != nil, "ten distinct strings per group are dictionary-encoded")
        #expect(try reader.scan(group: 0, column: reader.columnIndex("late")!).defaultValue == .null)

        let check = try store.beginWrite()
        defer { check.cancel() }
        let table = snapshot.catalog.table("S")!
        let arguments: [QueryArgument] = [.value(.timestamp(seconds: 990, nanoseconds: 0))]
        for text in Self.predicates {
            let args =
                text.contains("BETWEEN %@")
                ? [.values([.timestamp(seconds: 10, nanoseconds: 0), .timestamp(seconds: 20, nanoseconds: 500)])]
                : text.contains("%@") ? arguments : []
            let bound = try BoundPredicate.compile(text, arguments: args, table: table, catalog: snapshot.catalog)
            let scanned = try QueryEvaluator(snapshot).filter("S", bound)
            let oneByOne = try QueryEvaluator(check).filter("S", bound)
            #expect(scanned == oneByOne, "\(text): \(scanned.count) vs \(oneByOne.count)")
            #expect(!text.hasPrefix("n >") || !scanned.isEmpty)
        }
    }
}
