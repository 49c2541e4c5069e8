import Foundation
import RealmStorage

/// The text and JSON that `realm-dump` prints for each mode, made from an ``Inspector/Report``.
/// Pure functions: the tests compare their output with golden files.
package enum DumpReport {
    // MARK: Summary (the default mode)

    package static func summaryText(_ r: Inspector.Report) -> String {
        var out = ""
        func row(_ label: String, _ value: String) { out += label.padding(toLength: 18, withPad: " ", startingAt: 0) + value + "\n" }
        row("file", r.path)
        row("size", "\(ByteCount.describe(r.fileSize)); \(ByteCount.grouped(r.committedLength)) committed")
        row("format version", "\(r.formatVersion)")
        for slot in r.slots { row("header slot \(slot.index)", slotText(slot, chosen: r.chosenSlot)) }
        row(
            "current version",
            "\(r.currentVersion)" + (r.chosenSlot.map { " (read from header slot \($0), as asked)" } ?? "")
                + (r.chainedCommits > 0 ? " (\(r.chainedCommits) commits chained after the newest slot's)" : ""))
        let numbers = r.versions.map(\.version)
        row(
            "versions in file",
            numbers.count == 1 ? "1 (\(numbers[0]))" : "\(numbers.count) (newest \(numbers.first ?? 0), oldest \(numbers.last ?? 0))")
        row("tables", "\(r.tables.count)")
        if !r.tables.isEmpty {
            var t = TextTable([("name", .left), ("objects", .right), ("row groups", .right), ("bytes", .right)], indent: 2)
            for table in r.tables {
                t.add([table.name, ByteCount.grouped(table.objects), "\(table.rowGroups)", ByteCount.grouped(table.bytes)])
            }
            out += t.text
        }
        row(
            "live bytes",
            "\(ByteCount.describe(r.liveBytes)), \(ByteCount.percent(r.liveBytes, of: UInt64(r.committedLength))) of the committed length")
        row(
            "dead bytes",
            "\(ByteCount.describe(r.deadBytes)), \(ByteCount.percent(r.deadBytes, of: UInt64(r.committedLength))): what compaction would reclaim"
        )
        if r.pins.isEmpty {
            row("pins", "none")
        } else {
            row("pins", "\(Set(r.pins.map(\.version)).count) versions pinned by other processes")
            var t = TextTable([("version", .right), ("pid", .right), ("kind", .left), ("count", .right)], indent: 2)
            for p in r.pins { t.add(["\(p.version)", "\(p.processID)", p.kind, "\(p.count)"]) }
            out += t.text
        }
        return out + problemsText(r.problems)
    }

    static func slotText(_ s: Inspector.SlotInfo, chosen: Int?) -> String {
        guard s.isValid, let v = s.version else { return "empty or damaged (magic or checksum does not match)" }
        var out = "version \(v), record at \(s.recordOffset ?? 0), committed length \(s.fileLength ?? 0)"
        if let t = s.commitTime { out += ", \(ValueText.iso8601(t))" }
        if s.isCurrent { out += chosen == nil ? " (current)" : " (read)" }
        return out
    }

    package static func summaryJSON(_ r: Inspector.Report) -> JSONValue {
        .object([
            ("path", .string(r.path)),
            ("fileSize", .int(r.fileSize)),
            ("committedLength", .int(r.committedLength)),
            ("formatVersion", .int(r.formatVersion)),
            ("slots", .array(r.slots.map(slotJSON))),
            ("chosenSlot", .int(r.chosenSlot)),
            ("currentVersion", .int(r.currentVersion)),
            ("chainedCommits", .int(r.chainedCommits)),
            ("versions", .array(r.versions.map { .int($0.version) })),
            (
                "tables",
                .array(
                    r.tables.map {
                        .object([
                            ("name", .string($0.name)), ("objects", .int($0.objects)), ("rowGroups", .int($0.rowGroups)),
                            ("bytes", .int($0.bytes)),
                        ])
                    })
            ),
            ("liveBytes", .int(r.liveBytes)),
            ("deadBytes", .int(r.deadBytes)),
            ("reclaimablePercent", .number(String(ByteCount.percent(r.deadBytes, of: UInt64(r.committedLength)).dropLast()))),
            (
                "pins",
                .array(
                    r.pins.map {
                        .object([
                            ("version", .int($0.version)), ("pid", .int($0.processID)), ("kind", .string($0.kind)),
                            ("count", .int($0.count)),
                        ])
                    })
            ),
            ("problems", problemsJSON(r.problems)),
        ])
    }

    static func slotJSON(_ s: Inspector.SlotInfo) -> JSONValue {
        .object([
            ("index", .int(s.index)), ("valid", .bool(s.isValid)), ("current", .bool(s.isCurrent)), ("version", .int(s.version)),
            ("recordOffset", .int(s.recordOffset)), ("committedLength", .int(s.fileLength)),
            ("commitTime", .string(s.commitTime.map(ValueText.iso8601))),
        ])
    }

    /// What can be shown of a file whose commits do not open: its header.
    package static func headerText(path: String, _ h: Inspector.HeaderInfo) -> String {
        var out = ""
        func row(_ label: String, _ value: String) { out += label.padding(toLength: 18, withPad: " ", startingAt: 0) + value + "\n" }
        row("file", path)
        row("size", ByteCount.describe(h.fileSize))
        row("format version", "\(h.formatVersion)")
        for slot in h.slots { row("header slot \(slot.index)", slotText(slot, chosen: nil)) }
        return out
    }

    package static func headerJSON(path: String, _ h: Inspector.HeaderInfo) -> JSONValue {
        .object([
            ("path", .string(path)), ("fileSize", .int(h.fileSize)), ("formatVersion", .int(h.formatVersion)),
            ("slots", .array(h.slots.map(slotJSON))),
        ])
    }

    // MARK: Problems

    package static func problemsText(_ problems: [Verifier.Problem]) -> String {
        guard !problems.isEmpty else { return "" }
        return "problems          \(problems.count)\n" + problems.map { "  \($0)\n" }.joined()
    }

    package static func problemsJSON(_ problems: [Verifier.Problem]) -> JSONValue {
        .array(
            problems.map {
                .object([("offset", .int($0.offset)), ("reason", .string($0.reason)), ("deadBytesOnly", .bool($0.inDeadBytes))])
            })
    }

    // MARK: --schema

    /// `int`, `string?`, `link<Dog>`, `list<int?>`, `set<string>`, `map<string, mixed>`.
    package static func typeText(_ c: ColumnSchema) -> String {
        var element = c.type == .link ? "link<\(c.linkTarget ?? "?")>" : c.type.description
        if c.isNullable && c.type != .mixed && !(c.type == .link && !c.isList && !c.isMap) { element += "?" }
        if c.isMap { return "map<string, \(element)>" }
        if c.isSet { return "set<\(element)>" }
        if c.isList { return "list<\(element)>" }
        return element
    }

    package static func schemaText(_ r: Inspector.Report) -> String {
        var out = ""
        for t in r.catalog.tables {
            let objects = r.tables.first { $0.name == t.name }?.objects ?? 0
            out +=
                "\(t.name) (\(ByteCount.grouped(objects)) object\(objects == 1 ? "" : "s")"
                + (t.primaryKey.map { ", primary key \($0)" } ?? "") + ")\n"
            var tt = TextTable([("column", .left), ("type", .left), ("", .left)], indent: 2)
            for c in t.columns {
                var notes: [String] = []
                if c.name == t.primaryKey { notes.append("primary key") }
                if c.isIndexed { notes.append("indexed") }
                tt.add([c.name, typeText(c), notes.joined(separator: ", ")])
            }
            out += tt.text
        }
        return out.isEmpty ? "no tables\n" : out
    }

    package static func schemaJSON(_ r: Inspector.Report) -> JSONValue {
        .object([
            (
                "tables",
                .array(
                    r.catalog.tables.map { t in
                        .object([
                            ("name", .string(t.name)),
                            ("primaryKey", .string(t.primaryKey)),
                            ("objects", .int(r.tables.first { $0.name == t.name }?.objects ?? 0)),
                            (
                                "columns",
                                .array(
                                    t.columns.map { c in
                                        .object([
                                            ("name", .string(c.name)), ("type", .string(c.type.description)),
                                            ("nullable", .bool(c.isNullable)),
                                            ("collection", .string(c.isMap ? "map" : c.isSet ? "set" : c.isList ? "list" : nil)),
                                            ("linkTarget", .string(c.linkTarget)), ("indexed", .bool(c.isIndexed)),
                                            ("primaryKey", .bool(c.name == t.primaryKey)), ("text", .string(typeText(c))),
                                        ])
                                    })
                            ),
                        ])
                    })
            )
        ])
    }

    // MARK: --versions

    /// `schema; Dog +1 -0 ~0; Person +10 -2 ~5`, or `none`.
    package static func changesText(_ v: Inspector.VersionInfo) -> String {
        var parts: [String] = v.schemaChanged ? ["schema"] : []
        for (name, c) in v.changedTables.sorted(by: { $0.key < $1.key }) {
            parts.append("\(name) +\(c.inserted) -\(c.deleted) ~\(c.modified)")
        }
        return parts.isEmpty ? "none" : parts.joined(separator: "; ")
    }

    package static func versionsText(_ r: Inspector.Report) -> String {
        var t = TextTable(
            [
                ("version", .right), ("committed", .left), ("parent", .right), ("commit bytes", .right), ("record at", .right),
                ("changes", .left),
            ])
        for v in r.versions {
            t.add(["\(v.version)", ValueText.iso8601(v.commitTime), "\(v.parent)", "\(v.commitBytes)", "\(v.recordOffset)", changesText(v)])
        }
        return t.text + "\(r.versions.count) version records reachable from version \(r.currentVersion)\n" + problemsText(r.problems)
    }

    package static func versionsJSON(_ r: Inspector.Report) -> JSONValue {
        .object([
            ("currentVersion", .int(r.currentVersion)),
            (
                "versions",
                .array(
                    r.versions.map { v in
                        .object([
                            ("version", .int(v.version)), ("commitTime", .string(ValueText.iso8601(v.commitTime))),
                            ("parent", .int(v.parent)),
                            ("commitBytes", .int(v.commitBytes)), ("recordOffset", .int(v.recordOffset)),
                            ("recordLength", .int(v.recordLength)),
                            ("schemaChanged", .bool(v.schemaChanged)),
                            (
                                "changes",
                                .object(
                                    v.changedTables.sorted { $0.key < $1.key }.map {
                                        (
                                            $0.key,
                                            .object([
                                                ("inserted", .int($0.value.inserted)), ("deleted", .int($0.value.deleted)),
                                                ("modified", .int($0.value.modified)),
                                            ])
                                        )
                                    })
                            ),
                        ])
                    })
            ),
            ("problems", problemsJSON(r.problems)),
        ])
    }

    // MARK: --segments

    /// Decoded size over stored size, two decimals (`3.25`); `-` when unknown.
    static func ratio(_ s: Inspector.SegmentInfo) -> String {
        guard s.checksumOK, s.storedBytes > 0 else { return "-" }
        let hundredths = Int64((Double(s.decodedBytes) * 100 / Double(s.storedBytes)).rounded())
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }

    package static func segmentsText(_ r: Inspector.Report) -> String {
        var t = TextTable([
            ("offset", .right), ("table", .left), ("column", .left), ("group", .right), ("rows", .right), ("encoding", .left),
            ("stored", .right), ("decoded", .right), ("ratio", .right), ("checksum", .left),
        ])
        var bad = 0
        for s in r.segments {
            if !s.checksumOK { bad += 1 }
            t.add([
                "\(s.offset)", s.table, s.column, "\(s.rowGroup)", "\(s.rows)",
                s.encodings.isEmpty ? "-" : s.encodings.joined(separator: "+"),
                "\(s.storedBytes)", "\(s.decodedBytes)", ratio(s), s.checksumOK ? "ok" : "BAD: " + (s.problem ?? "unreadable"),
            ])
        }
        let stored = r.segments.reduce(UInt64(0)) { $0 + $1.storedBytes }
        let decoded = r.segments.reduce(0) { $0 + $1.decodedBytes }
        return t.text + "\(r.segments.count) segments, \(ByteCount.grouped(stored)) bytes stored, \(ByteCount.grouped(decoded)) decoded"
            + (bad > 0 ? ", \(bad) damaged" : "") + "\n" + problemsText(r.problems)
    }

    package static func segmentsJSON(_ r: Inspector.Report) -> JSONValue {
        .object([
            (
                "segments",
                .array(
                    r.segments.map { s in
                        .object([
                            ("offset", .int(s.offset)), ("table", .string(s.table)), ("column", .string(s.column)),
                            ("rowGroup", .int(s.rowGroup)),
                            ("rows", .int(s.rows)), ("encodings", .array(s.encodings.map { .string($0) })),
                            ("storedBytes", .int(s.storedBytes)),
                            ("decodedBytes", .int(s.decodedBytes)), ("ratio", ratio(s) == "-" ? .null : .number(ratio(s))),
                            ("checksumOK", .bool(s.checksumOK)), ("problem", .string(s.problem)),
                        ])
                    })
            ),
            ("problems", problemsJSON(r.problems)),
        ])
    }

    /// Segment problems count as problems of the report (exit code 3).
    package static func segmentProblems(_ r: Inspector.Report) -> [Verifier.Problem] {
        r.segments.filter { !$0.checksumOK }.map { Verifier.Problem(offset: $0.offset, reason: $0.problem ?? "unreadable segment") }
    }

    // MARK: --verify

    package static func verifyText(_ v: Verifier.Report) -> String {
        var out =
            "verified version \(v.version): \(ByteCount.grouped(v.blocksChecked)) blocks, \(ByteCount.grouped(v.objectsChecked)) objects, "
            + "\(v.versionsChecked) version records"
        if v.isClean { return out + ": no problems\n" }
        out += ": \(v.problems.count) problem\(v.problems.count == 1 ? "" : "s")\n"
        return out + v.problems.map { "\($0)\n" }.joined()
    }

    package static func verifyJSON(_ v: Verifier.Report) -> JSONValue {
        .object([
            ("version", .int(v.version)), ("blocksChecked", .int(v.blocksChecked)), ("objectsChecked", .int(v.objectsChecked)),
            ("versionsChecked", .int(v.versionsChecked)), ("clean", .bool(v.isClean)), ("problems", problemsJSON(v.problems)),
        ])
    }
}
