import ArgumentParser
import Foundation
import RealmTools

/// `realm-dump FILE [mode] [--slot 0|1] [--json]`: argument parsing and the exit code; the work is
/// ``DumpTool``'s, in the RealmTools library.
@main
struct RealmDump: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-dump",
        abstract: "Show what a Realm file holds, without writing to it or beside it.",
        discussion: """
            With no mode, prints a summary: size, format version, both header slots, the current version, the versions \
            still in the file, tables, live and dead bytes, and the versions other processes pin.

            --verify checks the whole commit chain: every slot, commit head and record recovery reaches, and \
            reports each version a damaged chain hides, with its offset.

            Exit codes: 0 fine, 1 usage, 2 not a Realm file or an unsupported format version, 3 damage found \
            (the message gives the byte offset), 5 another failure (I/O), 6 (--verify) damage in dead bytes \
            only: every version reads, nothing is lost, but the medium may be failing.
            """)

    @Argument(help: "The Realm file.") var file: String
    @Argument(help: ArgumentHelp("With --segments: only this table's segments.", valueName: "TABLE")) var table: String?

    @Flag(help: "Print the schema: tables, columns, types, primary keys and indexes.") var schema = false
    @Flag(help: "List every version record still reachable: number, time, parent, commit size, changes.") var versions = false
    @Flag(help: "List the segments (of TABLE, when given): offset, column, row group, encoding, sizes, ratio, checksum.")
    var segments = false
    @Option(help: ArgumentHelp("Print the objects of a class as JSON Lines.", valueName: "CLASS")) var objects: String?
    @Option(name: .customLong("where"), help: ArgumentHelp("With --objects: only objects matching this predicate.", valueName: "PREDICATE"))
    var predicate: String?
    @Option(help: ArgumentHelp("With --objects: at most N objects.", valueName: "N")) var limit: Int?
    @Option(
        help: ArgumentHelp(
            "Export every table to DIR as CSV or JSON Lines (binary as base64), or as Parquet (LZ4_RAW), one file per table.",
            valueName: "csv|jsonl|parquet"))
    var export: String?
    @Option(help: ArgumentHelp("With --export: the directory to write (created when missing).", valueName: "DIR")) var output: String?
    @Flag(
        help: "Verify the commit chain and the whole newest version: every checksum and invariant; print every problem with its offset."
    ) var verify = false
    @Option(help: ArgumentHelp("Write a picture of the file: blocks by offset, coloured by version, live or dead.", valueName: "FILE.svg"))
    var map: String?
    @Option(
        help: ArgumentHelp(
            "Print what each commit after version FROM (up to TO, else the newest) inserted, modified and deleted, as JSON Lines.",
            valueName: "FROM[..TO]"))
    var changes: String?
    @Option(help: ArgumentHelp("Read the commit of this header slot (0 or 1) instead of the newest.", valueName: "0|1")) var slot: Int?
    @Flag(
        help: """
            Read a file whose commit chain is damaged at its newest intact version, and say which versions are skipped \
            (without it such a file is refused with exit code 3).
            """)
    var salvage = false
    @Flag(help: "Print JSON instead of text.") var json = false

    func validate() throws {
        let modes = [schema, versions, segments, objects != nil, export != nil, verify, map != nil, changes != nil].filter { $0 }.count
        guard modes <= 1 else {
            throw ValidationError("choose one of --schema, --versions, --segments, --objects, --export, --verify, --map, --changes")
        }
        if let changes, DumpTool.changesRange(changes) == nil {
            throw ValidationError("--changes takes FROM or FROM..TO, version numbers with FROM <= TO")
        }
        if table != nil && !segments { throw ValidationError("a second argument (TABLE) is only for --segments") }
        if (predicate != nil || limit != nil) && objects == nil { throw ValidationError("--where and --limit go with --objects CLASS") }
        if let limit, limit < 0 { throw ValidationError("--limit must not be negative") }
        if export != nil && output == nil { throw ValidationError("--export needs --output DIR") }
        if output != nil && export == nil { throw ValidationError("--output goes with --export") }
        if let export, DumpTool.exportFormat(export) == nil { throw ValidationError("--export takes csv, jsonl or parquet") }
        if let slot, slot != 0 && slot != 1 { throw ValidationError("--slot takes 0 or 1") }
    }

    var mode: DumpTool.Mode {
        if schema { return .schema }
        if versions { return .versions }
        if segments { return .segments(table: table) }
        if let objects { return .objects(table: objects, predicate: predicate, limit: limit) }
        if let export, let format = DumpTool.exportFormat(export), let output { return .export(format, directory: output) }
        if verify { return .verify }
        if let map { return .map(svg: map) }
        if let changes, let range = DumpTool.changesRange(changes) { return .changes(from: range.from, to: range.to) }
        return .summary
    }

    static func main() {
        let command: RealmDump
        do {
            command = try parse()
        } catch {
            exitForParseError(error)
        }
        let code = DumpTool(path: command.file, mode: command.mode, slot: command.slot, json: command.json, salvage: command.salvage).run(
            .standard)
        fflush(nil)
        Foundation.exit(code.rawValue)
    }
}
