import ArgumentParser
import Foundation
import RealmTools

/// `realm-compact FILE [--output OUT] [--dry-run] [--json]`: argument parsing and the exit code;
/// the work is ``CompactTool``'s, in the RealmTools library.
@main
struct RealmCompact: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "realm-compact",
        abstract: "Rewrite a Realm file to its live data, verified before it replaces anything.",
        discussion: """
            The newest version is copied block by block (bounded memory) to FILE.compacting, made durable, read back \
            and verified (commit checksum, every block checksum, object counts, a full verification); then, holding \
            the writer lock only for this step, the commits made meanwhile are appended and the copy renamed over \
            FILE and the directory synced. Other processes may keep FILE open, read and write throughout: they \
            follow the new file at their next transaction. A crash at any moment leaves FILE as it was or fully \
            compacted, with every acknowledged commit. Progress goes to standard error.

            A file whose commit chain is damaged (a commit head, record or slot fails its check while later commits \
            exist) is refused with exit code 3, unless --salvage asks to keep only its newest intact version: the \
            versions the damage hides are then lost for good. Look first with realm-dump --verify and \
            realm-dump --salvage.

            Exit codes: 0 done, 1 usage, 2 not a Realm file or an unsupported format version, 3 damage found in the \
            file or the copy (nothing replaced), 4 another process is compacting FILE, or a writer of an older build \
            (which cannot follow a compaction) has it open, 5 another failure (I/O).
            """)

    @Argument(help: "The Realm file.") var file: String
    @Option(help: ArgumentHelp("Write the compacted copy to OUT (which must not exist) and leave FILE alone.", valueName: "OUT"))
    var output: String?
    @Flag(help: "Print the live and dead bytes and the expected size; write nothing.") var dryRun = false
    @Flag(help: "Print the result as JSON.") var json = false
    @Flag(help: "Compact a damaged file to its newest intact version; the versions the damage hides are lost.")
    var salvage = false

    static func main() {
        let command: RealmCompact
        do {
            command = try parse()
        } catch {
            exitForParseError(error)
        }
        let progress = ProgressDisplay(console: .standard, isTerminal: isatty(STDERR_FILENO) == 1)
        let tool = CompactTool(
            path: command.file, output: command.output, dryRun: command.dryRun, json: command.json, salvage: command.salvage)
        let code = tool.run(.standard, progress: command.json && isatty(STDERR_FILENO) != 1 ? nil : progress)
        fflush(nil)
        Foundation.exit(code.rawValue)
    }
}
