import Foundation

/// Wall-clock timing and peak resident memory of one workload.
enum Measure {
    /// Runs `body`, returning its result, seconds, and the peak resident set size (bytes) reached
    /// while it ran (the kernel's high-water mark, reset before).
    static func run<T>(_ body: () throws -> T) rethrows -> (T, Double, Int) {
        resetPeak()
        let before = usage()
        let start = DispatchTime.now().uptimeNanoseconds
        let r = try body()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        // REALM_BENCH_CPU=1 (by hand): the workload's CPU time, page faults and context switches
        // on stderr, to tell the time a commit computes from the time it waits for its sync.
        if ProcessInfo.processInfo.environment["REALM_BENCH_CPU"] != nil { report(from: before, to: usage(), wall: seconds) }
        return (r, seconds, peakResident())
    }

    /// The process's resource usage so far (every thread).
    static func usage() -> rusage {
        var u = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &u)
        return u
    }

    /// Writes to stderr what the process used between `a` and `b`: user and system CPU time (µs),
    /// minor page faults, voluntary and involuntary context switches, with the wall time.
    static func report(from a: rusage, to b: rusage, wall: Double) {
        func us(_ t: timeval) -> Int { t.tv_sec * 1_000_000 + Int(t.tv_usec) }
        let line =
            "CPU user \(us(b.ru_utime) - us(a.ru_utime)) µs, system \(us(b.ru_stime) - us(a.ru_stime)) µs, "
            + "wall \(Int(wall * 1e6)) µs; minor faults \(b.ru_minflt - a.ru_minflt); "
            + "context switches \(b.ru_nvcsw - a.ru_nvcsw) voluntary, \(b.ru_nivcsw - a.ru_nivcsw) involuntary\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Resets the peak-RSS counter (`VmHWM`) of this process (Linux ≥ 4.0).
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The process's resident memory (kB) per mapped file (`[heap]`, `[anon]` for the rest), largest
    /// first, from `/proc/self/smaps`: what a difference in peak memory is made of (code pages of
    /// the libraries a path runs, or heap).
    static func residentByMapping() -> [(Int, String)] {
        guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps") else { return [] }
        // Read to the end: /proc files report no size.
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var mapping = ""
        var kb: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count >= 5, fields[0].contains("-") {
                mapping = fields.count >= 6 ? String(fields[5]) : "[anon]"
            } else if fields.first == "Rss:", fields.count >= 2 {
                kb[mapping, default: 0] += Int(fields[1]) ?? 0
            }
        }
        return kb.filter { $0.value > 0 }.map { ($0.value, $0.key) }.sorted { $0.0 > $1.0 }
    }

    /// `VmHWM` of this process, in bytes (0 when unknown).
    static func peakResident() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kb = line.split(separator: " ").compactMap { Int($0) }.first ?? 0
            return kb * 1024
        }
        return 0
    }
}

/// The samples of one workload for one system across repetitions.
struct Samples: Codable {
    var values: [Double] = []
    /// Read workloads: the first run of each repetition (right after W1, caches cold), kept
    /// beside ``values`` (the third run: steady state).
    var firstRuns: [Double] = []
    var peakBytes: Int = 0

    var firstRunMedian: Double? { firstRuns.isEmpty ? nil : Samples(values: firstRuns).median }

    var median: Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }
    var min: Double { values.min() ?? .nan }
    var max: Double { values.max() ?? .nan }
}
