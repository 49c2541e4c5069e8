import Foundation
import RealmStorage

/// What `realm-dump` does once its arguments are parsed: opens the file passively (nothing is
/// written to it or beside it), runs one mode, prints text or JSON, and returns the exit code.
package struct DumpTool {
    /// The modes; exactly one per run.
    package enum Mode: Sendable, Equatable {
        case summary
        case schema
        case versions
        /// Every segment, or those of one table.
        case segments(table: String?)
        /// Objects of a table as JSON Lines.
        case objects(table: String, predicate: String?, limit: Int?)
        /// Every table to a file in a directory.
        case export(ObjectExport.Format, directory: String)
        case verify
        /// An SVG picture of the file.
        case map(svg: String)
        /// The objects inserted, modified and deleted by each commit after version `from` up to
        /// `to` (the newest when nil), as JSON Lines.
        case changes(from: UInt64, to: UInt64?)
    }

    /// `FROM` or `FROM..TO` of `--changes`.
    package static func changesRange(_ text: String) -> (from: UInt64, to: UInt64?)? {
        let parts = text.components(separatedBy: "..")
        guard parts.count <= 2, let from = UInt64(parts[0]) else { return nil }
        guard parts.count == 2 else { return (from, nil) }
        guard let to = UInt64(parts[1]), to >= from else { return nil }
        return (from, to)
    }

    package var path: String
    package var mode: Mode
    /// Read this header slot's commit instead of the newest.
    package var slot: Int?
    package var json: Bool
    /// Read a file whose commit chain is damaged at its newest intact version, saying which
    /// versions are skipped, instead of failing (`--verify` always does, to report them).
    package var salvage: Bool

    /// The format `--export` names (`csv`, `jsonl` or `parquet`).
    package static func exportFormat(_ text: String) -> ObjectExport.Format? { ObjectExport.Format(rawValue: text.lowercased()) }

    package init(path: String, mode: Mode, slot: Int? = nil, json: Bool = false, salvage: Bool = false) {
        self.path = path
        self.mode = mode
        self.slot = slot
        self.json = json
        self.salvage = salvage
    }

    /// Runs the mode; failures are printed (text to standard error, and with `json` a JSON object
    /// to standard output) and turned into the exit code.
    package func run(_ console: Console) -> ToolExitCode {
        do {
            return try runMode(console)
        } catch {
            return report(ToolFailure.from(error), console)
        }
    }

    func runMode(_ console: Console) throws -> ToolExitCode {
        switch mode {
        case .summary, .schema, .versions, .segments, .map:
            let r = try inspect(console)
            noteSuperseded(r.superseded, console)
            var problems = r.problems
            switch mode {
            case .schema: console.out(json ? DumpReport.schemaJSON(r).pretty + "\n" : DumpReport.schemaText(r))
            case .versions: console.out(json ? DumpReport.versionsJSON(r).pretty + "\n" : DumpReport.versionsText(r))
            case .segments:
                problems += DumpReport.segmentProblems(r)
                console.out(json ? DumpReport.segmentsJSON(r).pretty + "\n" : DumpReport.segmentsText(r))
            case .map(let svg):
                let writer = try LineWriter(path: svg)
                try writer.write(FileMap.svg(r))
                try writer.close()
                console.out(
                    json
                        ? FileMap.json(r, written: svg).pretty + "\n"
                        : "wrote \(svg): \(r.blocks.count) stretches of \(r.committedLength) committed bytes, "
                            + "\(r.versions.count) versions\n" + DumpReport.problemsText(r.problems))
            default: console.out(json ? DumpReport.summaryJSON(r).pretty + "\n" : DumpReport.summaryText(r))
            }
            return damaged(problems, console)
        case .verify:
            // The whole chain: a damaged one is reported with each version it hides.
            let v = slot == nil ? try Verifier().verify(path: path) : Verifier().verify(try snapshot())
            noteSuperseded(v.superseded, console)
            console.out(json ? DumpReport.verifyJSON(v).pretty + "\n" : DumpReport.verifyText(v))
            return damaged(v.problems, console)
        case .objects(let table, let predicate, let limit):
            let s = try snapshot(console)
            guard let t = s.catalog.table(table) else {
                throw ToolFailure(.usage, "no class named '\(table)'; the file has " + s.catalog.tables.map(\.name).joined(separator: ", "))
            }
            let filter = try predicate.map { try ObjectFilter($0, table: t, catalog: s.catalog) }
            try ObjectExport.writeObjects(s, table: t, filter: filter, limit: limit) { console.out($0) }
            return .ok
        case .changes(let from, let to):
            let s = try snapshot(console)
            let last = to ?? s.version
            guard last <= s.version else {
                throw ToolFailure(.usage, "version \(last) is newer than the file's newest, \(s.version)")
            }
            let versions: [Snapshot]
            do {
                versions = try s.history(since: from, through: last)
            } catch let e as StorageError where e.code == .notFound {
                throw ToolFailure(.usage, e.reason)
            }
            try ChangeFeed.write(versions) { console.out($0) }
            return .ok
        case .export(let format, let directory):
            let s = try snapshot(console)
            try checkNotInspected(
                [directory]
                    + s.catalog.tables.map { (directory as NSString).appendingPathComponent(ObjectExport.fileName($0.name, format)) })
            let done = try ObjectExport.export(s, format: format, to: directory)
            if json {
                console.out(
                    JSONValue.object([
                        ("format", .string(format.rawValue)), ("binary", .string(format == .parquet ? "bytes" : "base64")),
                        ("version", .int(s.version)),
                        (
                            "tables",
                            .array(
                                done.map {
                                    .object([("table", .string($0.table)), ("objects", .int($0.objects)), ("file", .string($0.file))])
                                })
                        ),
                    ]).pretty + "\n")
            } else {
                var t = TextTable([("table", .left), ("objects", .right), ("file", .left)])
                for e in done { t.add([e.table, ByteCount.grouped(e.objects), e.file]) }
                let binary = format == .parquet ? "LZ4_RAW pages" : "binary values as base64"
                console.out(t.text + "exported version \(s.version) as \(format.rawValue) (\(binary))\n")
            }
            return .ok
        }
    }

    func inspect(_ console: Console) throws -> Inspector.Report {
        var segments = false
        var table: String?
        var blocks = false
        switch mode {
        case .segments(let t):
            segments = true
            table = t
        case .map(let svg):
            try checkNotInspected([svg])
            blocks = true
        default: break
        }
        do {
            let r = try Inspector().inspect(
                path: path, segments: segments, segmentTable: table, slot: slot, blocks: blocks, salvage: salvage)
            if salvage, let first = r.problems.first { console.err("realm-dump: salvaging: \(first)\n") }
            return r
        } catch let e as StorageError where e.code == .notFound && table != nil {
            throw ToolFailure(.usage, "no table named '\(table!)'")
        }
    }

    /// The version to read: the newest, the slot's, or with `salvage` the newest intact one (what
    /// is skipped is said on standard error; the run still succeeds, as it was asked for).
    func snapshot(_ console: Console? = nil) throws -> Snapshot {
        var options = Store.Options.passive
        options.slot = slot
        options.salvage = salvage
        let store = try Store.open(at: path, options: options)
        if let damage = store.damage { console?.err("realm-dump: salvaging: \(damage)\n") }
        if let console { noteSuperseded(store.superseded, console) }
        return try store.snapshot(kind: "other")
    }

    /// Says, when it is so, that the file was replaced by an online compaction and is read through
    /// a name that still leads to it: not the database any more, and no store opens it as one
    /// (Spec/FORMAT.md §8). Told by the store the mode opened, so the file is opened once.
    func noteSuperseded(_ mark: SupersededMark?, _ console: Console) {
        guard let mark else { return }
        console.err(
            "realm-dump: note: \(path) was replaced by a compacted copy at \(mark.path) (version \(mark.version)) and is no "
                + "longer the database; what follows is the old file\n")
    }

    func damaged(_ problems: [Verifier.Problem], _ console: Console) -> ToolExitCode {
        guard let first = problems.first else { return .ok }
        if problems.allSatisfy(\.inDeadBytes) {
            console.err(
                "realm-dump: \(path) has damage in dead bytes only (\(problems.count) problem\(problems.count == 1 ? "" : "s"), "
                    + "the first \(first)): every version reads and no data is lost, but the medium may be failing\n")
            return .damagedDeadBytes
        }
        console.err("realm-dump: \(path) is damaged: \(problems.count) problem\(problems.count == 1 ? "" : "s"), the first \(first)\n")
        return .corrupted
    }

    /// Prints a failure; for a file that does not open because it is damaged, first what its
    /// header still shows.
    func report(_ f: ToolFailure, _ console: Console) -> ToolExitCode {
        let header = f.code == .corrupted ? try? Inspector().readHeader(path: path) : nil
        if json {
            var members: [(String, JSONValue)] = [("path", .string(path))]
            if let header { members.append(("header", DumpReport.headerJSON(path: path, header))) }
            if f.code == .corrupted {
                members.append(("problems", DumpReport.problemsJSON([Verifier.Problem(offset: f.offset, reason: f.message)])))
            }
            if case .object(let m) = f.json { members += m }
            console.out(JSONValue.object(members).pretty + "\n")
        } else if let header {
            console.out(DumpReport.headerText(path: path, header) + "problems          1\n  \(f.message)\n")
        }
        console.err("realm-dump: \(path): \(f.message)\n")
        return f.code
    }

    /// `realm-dump` never writes over the inspected file or its sidecar files (its lock file, and
    /// the `.compacting` and `.creating` files of a compaction or a creation in progress): any
    /// other output path is allowed (issue 30).
    func checkNotInspected(_ outputs: [String]) throws {
        func resolved(_ p: String) -> String {
            URL(fileURLWithPath: p.isEmpty ? "." : p).standardizedFileURL.resolvingSymlinksInPath().path
        }
        let file = resolved(path)
        let protected = Set([file] + [".lock", ".compacting", ".creating"].map { file + $0 })
        for output in outputs where protected.contains(resolved(output)) {
            throw ToolFailure(
                .usage, "realm-dump never writes over the inspected file or its sidecar files (\(output)); choose another output")
        }
    }
}
