import Foundation
import RealmStorage

/// What `realm-compact` does once its arguments are parsed: a dry run (inspection only), a
/// verified copy to `--output`, or an online compaction in place, which other processes that have
/// the file open follow (Spec/FORMAT.md §8). Returns the exit code; the summary goes to standard output, progress and errors
/// to standard error.
package struct CompactTool {
    package var path: String
    /// Write the compacted copy here (must not exist) instead of replacing the file.
    package var output: String?
    package var dryRun: Bool
    package var json: Bool
    /// Compact a file whose commit chain is damaged to its newest intact version: the versions the
    /// damage hides are lost. Without it such a file is refused.
    package var salvage: Bool

    package init(path: String, output: String? = nil, dryRun: Bool = false, json: Bool = false, salvage: Bool = false) {
        self.path = path
        self.output = output
        self.dryRun = dryRun
        self.json = json
        self.salvage = salvage
    }

    func options(_ base: Store.Options) -> Store.Options {
        var o = base
        o.salvage = salvage
        return o
    }

    package func run(_ console: Console, progress: ProgressDisplay?) -> ToolExitCode {
        do {
            if dryRun {
                // One passive open, like realm-dump: nothing is written, not even the lock file;
                // every number comes from the same version.
                let s = try Store.open(at: path, options: options(.passive)).snapshot()
                let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? s.fileLength
                let r = DryRun(
                    path: path, version: s.version, fileSize: size, committedLength: s.fileLength, liveBytes: Int(s.liveBytes),
                    expectedSize: try Compactor().compactedSize(of: s))
                console.out(json ? Self.dryRunJSON(r).pretty + "\n" : Self.dryRunText(r))
                return .ok
            }
            let result: Compactor.Result
            if let output {
                // A copy: the source is only read, passively; nothing is written beside it.
                let store = try Store.open(at: path, options: options(.passive))
                if let damage = store.damage { console.err("realm-compact: salvaging: \(damage)\n") }
                result = try Compactor().writeVerifiedCopy(of: store, to: output) { progress?.update($0) }
            } else {
                let store = try Store.open(at: path, options: options(Store.Options()))
                if let damage = store.damage { console.err("realm-compact: salvaging: \(damage)\n") }
                result = try Compactor().compact(store) { progress?.update($0) }
            }
            progress?.finish()
            console.out(json ? resultJSON(result).pretty + "\n" : resultText(result))
            return .ok
        } catch {
            progress?.finish()
            var f = ToolFailure.from(error)
            if let e = error as? StorageError, e.code == .compactionInProgress {
                f.message = "\(path): another process is compacting the file; try again when it is done"
            } else if f.code == .inUse {
                f.message = inUseMessage(f.message)
            }
            if f.code == .corrupted && !salvage {
                f.message += "; --salvage compacts the newest intact version instead (the versions the damage hides are lost)"
            }
            if json { console.out(f.json.pretty + "\n") }
            console.err("realm-compact: \(f.message)\n")
            return f.code
        }
    }

    /// `people.realm is open in another process: pid 4123 (my-server); close it and try again, …`.
    func inUseMessage(_ reason: String) -> String {
        // Our own store is closed by now: a passive look at the lock file names the others.
        let pids = (try? Store.open(at: path, options: .passive))?.otherProcessIDs() ?? []
        let named = pids.map { pid in Self.processName(pid).map { "pid \(pid) (\($0))" } ?? "pid \(pid)" }
        return "\(path) is in use by another process: " + (named.isEmpty ? reason : named.joined(separator: ", ") + ": " + reason)
            + "; close it and try again, or write a compacted copy with --output OUT"
    }

    /// The program a process runs: the file name of its first argument (`/proc/PID/cmdline`), else
    /// its command name (`/proc/PID/comm`, at most 15 characters).
    static func processName(_ pid: Int32) -> String? {
        if let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
            let first = data.split(separator: 0, omittingEmptySubsequences: false).first, !first.isEmpty
        {
            return (String(decoding: first, as: UTF8.self) as NSString).lastPathComponent
        }
        guard let s = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8) else { return nil }
        let name = s.trimmingCharacters(in: .whitespacesAndNewlines)
        return name.isEmpty ? nil : name
    }

    /// What a dry run reports: one version's sizes and the exact size its compaction would write.
    struct DryRun {
        var path: String
        var version: UInt64
        var fileSize: Int
        var committedLength: Int
        var liveBytes: Int
        var expectedSize: Int
        var deadBytes: Int { committedLength - min(committedLength, liveBytes) }
    }

    static func dryRunText(_ r: DryRun) -> String {
        var out = ""
        func row(_ label: String, _ value: String) { out += label.padding(toLength: 16, withPad: " ", startingAt: 0) + value + "\n" }
        row("file", r.path)
        row("version", "\(r.version)")
        row("size", ByteCount.describe(r.fileSize))
        row("committed", ByteCount.describe(r.committedLength))
        row("live bytes", ByteCount.describe(r.liveBytes))
        row("dead bytes", "\(ByteCount.describe(r.deadBytes)), \(ByteCount.percent(r.deadBytes, of: r.committedLength))")
        row("expected size", "\(ByteCount.describe(r.expectedSize)) (the live data and one version record)")
        row("would save", ByteCount.describe(max(0, r.fileSize - r.expectedSize)))
        return out + "dry run: nothing was written\n"
    }

    static func dryRunJSON(_ r: DryRun) -> JSONValue {
        .object([
            ("path", .string(r.path)), ("version", .int(r.version)), ("fileSize", .int(r.fileSize)),
            ("committedLength", .int(r.committedLength)), ("liveBytes", .int(r.liveBytes)), ("deadBytes", .int(r.deadBytes)),
            ("expectedSize", .int(r.expectedSize)), ("dryRun", .bool(true)),
        ])
    }

    func resultText(_ r: Compactor.Result) -> String {
        let objects = r.objectCounts.values.reduce(0, +)
        let saved = r.bytesBefore - r.bytesAfter
        return "compacted \(path) at version \(r.version)" + (output.map { " into \($0)" } ?? "") + "\n"
            + "before          \(ByteCount.describe(r.bytesBefore))\n"
            + "after           \(ByteCount.describe(r.bytesAfter))\n"
            + "saved           \(ByteCount.describe(saved)), \(ByteCount.percent(saved, of: r.bytesBefore))\n"
            + "verified        \(ByteCount.grouped(objects)) objects in \(r.objectCounts.count) table\(r.objectCounts.count == 1 ? "" : "s"), every checksum, a full verification\n"
    }

    func resultJSON(_ r: Compactor.Result) -> JSONValue {
        .object([
            ("path", .string(path)), ("output", .string(output)), ("version", .int(r.version)), ("bytesBefore", .int(r.bytesBefore)),
            ("bytesAfter", .int(r.bytesAfter)),
            ("objectCounts", .object(r.objectCounts.sorted { $0.key < $1.key }.map { ($0.key, .int($0.value)) })),
        ])
    }
}
