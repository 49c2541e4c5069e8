import Foundation
import RealmStorage

/// `realm-compact`'s progress on standard error: on a terminal, one line redrawn in place (a bar,
/// bytes written, rate, time left), at most ten times a second; otherwise plain lines, one per
/// phase and one per tenth of the copy. Not thread-safe: the compactor calls it on its thread.
package final class ProgressDisplay {
    let console: Console
    let isTerminal: Bool
    let started: Date
    let now: () -> Date
    var lastDraw: Date?
    var lastPhase: Compactor.Phase?
    var lastTenth = -1
    var drewBar = false

    package init(console: Console, isTerminal: Bool, now: @escaping () -> Date = Date.init) {
        self.console = console
        self.isTerminal = isTerminal
        self.now = now
        self.started = now()
    }

    /// Reports one step of the compactor.
    package func update(_ p: Compactor.Progress) {
        let t = now()
        let elapsed = t.timeIntervalSince(started)
        let phaseChanged = p.phase != lastPhase
        lastPhase = p.phase
        if isTerminal {
            switch p.phase {
            case .copying:
                if !phaseChanged, let last = lastDraw, t.timeIntervalSince(last) < 0.1, p.bytesWritten < p.bytesExpected { return }
                lastDraw = t
                console.err("\r" + Self.bar(done: p.bytesWritten, total: p.bytesExpected, elapsed: elapsed) + "\u{1B}[K")
                drewBar = true
            case .verifying, .catchingUp, .replacing:
                guard phaseChanged else { return }
                if drewBar {
                    // The copy is complete: its final size replaces the estimate.
                    console.err("\r" + Self.bar(done: p.bytesWritten, total: p.bytesWritten, elapsed: elapsed) + "\u{1B}[K\n")
                }
                console.err(Self.phaseLine(p.phase, p.bytesWritten))
                drewBar = false
            }
        } else {
            switch p.phase {
            case .copying:
                let tenth = p.bytesExpected > 0 ? min(10, p.bytesWritten * 10 / p.bytesExpected) : 10
                guard tenth > lastTenth else { return }
                lastTenth = tenth
                console.err(
                    "copying: \(tenth * 10)% (\(ByteCount.short(p.bytesWritten)) of about \(ByteCount.short(p.bytesExpected)), "
                        + "\(Self.rate(p.bytesWritten, elapsed)))\n")
            case .verifying, .catchingUp, .replacing:
                if phaseChanged { console.err(Self.phaseLine(p.phase, p.bytesWritten)) }
            }
        }
    }

    /// Ends a bar left on the terminal's line.
    package func finish() {
        if drewBar { console.err("\n") }
        drewBar = false
    }

    static func phaseLine(_ phase: Compactor.Phase, _ bytes: Int) -> String {
        switch phase {
        case .copying: "copying\n"
        case .verifying: "verifying the copy (\(ByteCount.short(bytes))): checksums, object counts, full verification\n"
        case .catchingUp: "catching up: copying the commits made meanwhile (commits wait)\n"
        case .replacing: "replacing: rename, then sync the directory\n"
        }
    }

    /// `[##########----------]  50%  10.0 MB / 20.0 MB  5.0 MB/s  2s left`
    package static func bar(done: Int, total: Int, elapsed: TimeInterval, width: Int = 30) -> String {
        let fraction = total > 0 ? min(1, Double(done) / Double(total)) : 1
        let filled = Int((fraction * Double(width)).rounded(.down))
        let percent = Int((fraction * 100).rounded(.down))
        var line = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
        line += String(repeating: " ", count: 3 - min(3, String(percent).count)) + "\(percent)%  "
        line += "\(ByteCount.short(done)) / \(ByteCount.short(total))  \(rate(done, elapsed))"
        if fraction > 0, fraction < 1, elapsed > 0 {
            line += "  \(Int((elapsed / fraction - elapsed).rounded(.up)))s left"
        }
        return line
    }

    static func rate(_ bytes: Int, _ elapsed: TimeInterval) -> String {
        guard elapsed > 0.001 else { return "-" }
        return ByteCount.short(Int(Double(bytes) / elapsed)) + "/s"
    }
}
